package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
)

// releaseRun runs a labeller (run) behind the ledger's gate and releases
// its output and report: pate label and pate aggregate.
//
// The write-ahead ledger entry (the run's maximum spend) is written under
// the ledger's lock before anything is released: at the first batch
// written (see ledger.GatedWriter), or after the run when it wrote none.
// The output is created before the work starts, so an unwritable target
// fails at once; its metadata is completed when the run ends.
func releaseRun(c *cli.Context, e *env, lr *ledgerRun, lab *label.Labeler, out string, format arrowio.WriteFormat,
	run func(context.Context, label.RecordWriter) (*label.Report, error)) error {
	cfg := lab.Config()
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	gate := ledger.StartGate(func() (*ledger.Run, error) { return lr.begin(lab, cfg) }, cancel)

	create := func(cfg label.Config) (*arrowio.Writer, error) {
		meta := label.OutputMetadata(cfg)
		return arrowio.Create(out, arrow.NewSchema(lab.OutputSchema().Fields(), &meta), arrowio.WriteOptions{
			Format: format, Zstd: c.Bool("zstd"), Allocator: memory.DefaultAllocator, Stdout: e.stdout,
			Reserve: label.MetadataReserve(cfg),
		})
	}
	w, err := create(cfg)
	if err != nil {
		err = fmt.Errorf("-o %s: %w", out, err)
		lr.noRun()
		if entry, lerr := gate.Wait(); lerr != nil {
			return errors.Join(err, lerr)
		} else if entry != nil { // nothing ran, nothing was released
			if lerr := entry.End(0); lerr != nil {
				return errors.Join(err, fmt.Errorf("--ledger: %w", lerr))
			}
		}
		return err
	}
	sink := &outputSink{w: w}
	if cfg.Choose && !w.Patchable() {
		// A stream on standard output sends its schema with its first
		// batch and cannot be patched: it is created again, then, with the
		// mechanism the run chose (the first is dropped unwritten).
		sink.reopen = func() (*arrowio.Writer, error) {
			chosen := cfg
			chosen.Mechanism = lab.Mechanism()
			return create(chosen)
		}
	}
	committed := false
	defer func() {
		if !committed {
			sink.w.Abort()
		}
	}()

	cw := &ledger.GatedWriter{W: sink, Gate: gate}
	rep, err := run(ctx, cw)
	lr.noRun() // the run reads no more
	entry, lerr := gate.Wait()
	if lerr != nil { // refused or failed before the first batch: nothing was released
		return lerr
	}
	if err != nil {
		// A run that failed after reading the sensitive data may have
		// revealed something by failing (an abort that one dataset
		// triggers and its neighbour does not): its begin entry stays,
		// charged its maximum. A run interrupted by the user (not by the
		// data) that released no output (a file output is released only
		// by its final rename, a stream by its batches) is closed at what
		// it showed: nothing, or, when the progress bar showed figures
		// derived from its noise, the spend realized when it stopped.
		if entry != nil {
			if c.Context.Err() != nil && (out != "-" || cw.Rows == 0) {
				rho, said := 0.0, "interrupted before releasing anything: charged nothing"
				if lr.noisyShown != nil && lr.noisyShown() {
					rho = label.SpentBefore(err)
					said = fmt.Sprintf("interrupted after the progress bar showed figures derived from the noise: charged the spend realized so far, ρ = %.6g", rho)
				}
				if lerr := entry.End(rho); lerr != nil {
					return errors.Join(err, fmt.Errorf("--ledger: %w", lerr))
				}
				sayRecorded(c, e, entry, said)
			} else {
				sayRecorded(c, e, entry, "the run failed: charged its maximum spend")
			}
		}
		return err
	}
	// The realized spend, now known.
	if entry != nil {
		entry.Ran = rep.Mechanism // the begin entry may name a choice's candidates
		if err := endRun(entry, rep); err != nil {
			return fmt.Errorf("--ledger: %w", err)
		}
		sayRecorded(c, e, entry, "charged its realized spend")
	}
	if p := c.String("report-html"); p != "" {
		if err := writeHTMLReport(p, rep); err != nil {
			return fmt.Errorf("--report-html %s: %w", p, err)
		}
	}
	if err := sink.start(); err != nil {
		return fmt.Errorf("-o %s: %w", out, err)
	}
	committed, err = publish(c, e, sink.w, rep, cfg, out)
	return err
}

// outputSink is the run's output writer. With reopen set, the writer is
// replaced by reopen's before the first batch (see releaseRun).
type outputSink struct {
	w      *arrowio.Writer
	reopen func() (*arrowio.Writer, error)
}

func (s *outputSink) Write(rec arrow.Record) error {
	if err := s.start(); err != nil {
		return err
	}
	return s.w.Write(rec)
}

// start replaces the writer by reopen's, once.
func (s *outputSink) start() error {
	if s.reopen == nil {
		return nil
	}
	reopen := s.reopen
	s.reopen = nil
	s.w.Abort() // standard output: nothing was written
	w, err := reopen()
	if err != nil {
		return err
	}
	s.w = w
	return nil
}

// ledgerRun is the write-ahead ledger of one run that spends budget.
type ledgerRun struct {
	s             *ledger.Session
	lifetime      float64      // --lifetime-epsilon (0: none)
	lifetimeDelta float64      // --lifetime-delta (0: none)
	tee           *identityTee // identifies the data as the run reads it, or nil
	// unit is the privacy unit recorded for a run whose configuration
	// does not name one (--privacy-unit of pate aggregate and pate analyze:
	// the unit the teachers of the votes were partitioned by).
	unit string
	warn func(string) // the ledger's warnings (stderr)
	// noisyShown, when set, says whether figures derived from the run's
	// noise were shown while it ran (the progress bar's answered count and
	// ε spent): an interrupted run is then charged what it had spent.
	noisyShown func() bool
}

// noRun says that the run will not read the sensitive data (it failed
// before it started): an identity waiting for the run's reads is computed
// from the file instead.
func (lr *ledgerRun) noRun() {
	if lr != nil && lr.tee != nil {
		lr.tee.abandon()
	}
}

// openLedgerForLabel identifies --private for the ledger. A Parquet or
// Arrow file is hashed as the run reads it, through tee (so it is not
// decoded twice); a CSV file or standard input is read a second time.
func openLedgerForLabel(c *cli.Context, e *env, tee *identityTee) (*ledgerRun, io.Reader, error) {
	path := c.String("private")
	if path != "-" && !c.Bool("no-ledger") && !isCSV(path) {
		tee.used, tee.path = true, path
		lr, stdin, err := openLedgerWith(c, e, "--private", path, tee.identity)
		if lr != nil {
			lr.tee = tee
		}
		return lr, stdin, err
	}
	return openLedger(c, e, "--private", path)
}

// isCSV tells whether the input at path (a file, or every shard of a
// directory or pattern) would be read as CSV (false when it cannot be
// read: opening it later reports why).
func isCSV(path string) bool {
	_, ok := csvShards(path)
	return ok
}

// csvShards lists the input at path for ledger.ContentIDCSVShards when it
// is CSV (each file plain or gzip-compressed).
func csvShards(path string) ([]ledger.CSVShard, bool) {
	shards, err := arrowio.ListShards(path)
	if err != nil {
		return nil, false
	}
	out := make([]ledger.CSVShard, len(shards))
	for i, sh := range shards {
		if format, err := arrowio.SniffFile(sh.Path); err != nil || format != arrowio.FormatCSV {
			return nil, false
		}
		out[i].Open = func() (io.ReadCloser, error) { return arrowio.OpenText(sh.Path) }
		for _, k := range sh.Keys {
			key := ledger.CSVKey{Name: k.Name}
			if !k.Null {
				key.Value = &k.Value
			}
			out[i].Keys = append(out[i].Keys, key)
		}
	}
	return out, true
}

// identityTee hashes the records of the sensitive data for the ledger as
// the run reads them (ledger.ContentHash), and hands the identity over when
// the run has read them all.
type identityTee struct {
	r    label.RecordReader
	used bool   // the ledger waits for it
	path string // the file, hashed on its own if the run does not read it to its end
	h    ledger.ContentHash
	once sync.Once
	done chan struct{}
	id   string
	err  error

	abandonOnce sync.Once
	abandoned   chan struct{}
}

func newIdentityTee() *identityTee {
	return &identityTee{done: make(chan struct{}), abandoned: make(chan struct{})}
}

// wrap returns r, read through the tee when the ledger waits for it.
func (t *identityTee) wrap(r label.RecordReader) label.RecordReader {
	if !t.used {
		return r
	}
	t.r = r
	return t
}

func (t *identityTee) Schema() *arrow.Schema { return t.r.Schema() }

func (t *identityTee) Read() (arrow.Record, error) {
	rec, err := t.r.Read()
	switch {
	case err == nil:
		if herr := t.h.Add(rec); herr != nil {
			t.finish("", herr)
		}
	case errors.Is(err, io.EOF):
		t.finish(t.h.ID(), nil)
	default:
		t.finish("", fmt.Errorf("ledger: identifying the sensitive data: %w", err))
	}
	return rec, err
}

func (t *identityTee) finish(id string, err error) {
	t.once.Do(func() {
		t.id, t.err = id, err
		close(t.done)
	})
}

// abandon says that the run will read no more records (it ended, or never
// started): if it did not read them all, the identity is computed from the
// file instead.
func (t *identityTee) abandon() {
	t.abandonOnce.Do(func() { close(t.abandoned) })
}

// identity waits until the run has read every record, or has stopped
// reading.
func (t *identityTee) identity() (string, error) {
	select {
	case <-t.done:
		return t.id, t.err
	case <-t.abandoned:
		select {
		case <-t.done:
			if t.err == nil {
				return t.id, nil
			}
		default:
		}
		return fileIdentity(t.path, nil)
	}
}

// openLedger identifies the sensitive data at path for the ledger (unless
// --no-ledger): it reads it a second time, in the background, and hashes its
// rows (ledger.ContentHash). Standard input is read into memory first, and
// the reader returned replays it for the run.
func openLedger(c *cli.Context, e *env, flag, path string) (*ledgerRun, io.Reader, error) {
	return openLedgerWith(c, e, flag, path, nil)
}

// openLedgerWith is openLedger with the identity computed by identify
// instead (nil: by reading path a second time).
func openLedgerWith(c *cli.Context, e *env, flag, path string, identify func() (string, error)) (*ledgerRun, io.Reader, error) {
	stdin := e.stdin
	if c.Bool("no-ledger") {
		for _, f := range []string{"lifetime-epsilon", "lifetime-delta"} {
			if c.IsSet(f) {
				return nil, stdin, usagef("--%s needs the ledger: drop --no-ledger", f)
			}
		}
		if c.IsSet("dataset") {
			return nil, stdin, usagef("--dataset names the dataset in the ledger: drop --no-ledger")
		}
		return nil, stdin, nil
	}
	if err := lifetimeFlags(c); err != nil {
		return nil, stdin, err
	}
	dir, err := ledgerDir(c)
	if err != nil {
		return nil, stdin, err
	}
	hashStdin := stdin
	if path == "-" {
		// Standard input cannot be read twice: keep it in memory to hash it
		// and then label from it.
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return nil, stdin, fmt.Errorf("%s -: %w", flag, err)
		}
		hashStdin, stdin = bytes.NewReader(b), bytes.NewReader(b)
	}
	l, err := ledger.Open(dir)
	if err != nil {
		return nil, stdin, fmt.Errorf("--ledger %s: %w", dir, err)
	}
	if identify == nil {
		identify = func() (string, error) { return fileIdentity(path, hashStdin) }
	}
	s := l.Session(c.String("dataset"), identify, flag)
	warn := func(msg string) { fmt.Fprintf(e.stderr, "pate: warning: ledger: %s\n", msg) }
	return &ledgerRun{s: s, lifetime: c.Float64("lifetime-epsilon"), lifetimeDelta: c.Float64("lifetime-delta"), warn: warn}, stdin, nil
}

// lifetimeFlags checks --dataset and --lifetime-epsilon: a lifetime is kept
// for a named dataset only. By its rows alone, a copy with one row fewer,
// a duplicated row or an added column is another dataset with a fresh
// lifetime; under a name every run composes, whatever rows it read.
func lifetimeFlags(c *cli.Context) error {
	if c.IsSet("lifetime-epsilon") && !(c.Float64("lifetime-epsilon") > 0) {
		return usagef("--lifetime-epsilon must be positive, got %g", c.Float64("lifetime-epsilon"))
	}
	if d := c.Float64("lifetime-delta"); c.IsSet("lifetime-delta") && !(d > 0 && d < 1) {
		return usagef("--lifetime-delta must be in (0, 1), got %g", d)
	}
	if c.IsSet("lifetime-delta") && !c.IsSet("dataset") {
		return usagef("--lifetime-delta needs --dataset NAME: a lifetime is kept for a named dataset")
	}
	if c.IsSet("dataset") && c.String("dataset") == "" {
		return usagef("--dataset: give a name")
	}
	if c.IsSet("lifetime-epsilon") && !c.IsSet("dataset") {
		return usagef("--lifetime-epsilon needs --dataset NAME: a lifetime is kept for a named dataset, which every run that gives the name charges " +
			"(by its rows alone, a copy with one row fewer or one more column would be another dataset with a fresh lifetime)")
	}
	return nil
}

// record writes the begin entry of a run (write-ahead) into the dataset's
// file, refusing it (ErrBudgetRefused) when it would take the dataset past
// --lifetime-epsilon or reuses a seed.
func (lr *ledgerRun) record(req ledger.BeginRequest) (*ledger.Run, error) {
	if req.PrivacyUnit == "" {
		req.PrivacyUnit = lr.unit
	}
	req.Warn = lr.warn
	req.LifetimeDelta = lr.lifetimeDelta
	run, err := lr.s.Begin(req, lr.lifetime)
	var se *ledger.StoreError
	switch {
	case errors.Is(err, ledger.ErrLifetimeNeedsName):
		return nil, usagef("a lifetime (--lifetime-epsilon, --lifetime-delta) needs --dataset NAME")
	case errors.Is(err, ledger.ErrLifetimeExceeded) || errors.Is(err, ledger.ErrSeedReused) || errors.Is(err, ledger.ErrMixedUnits):
		return nil, fmt.Errorf("%w: %w", label.ErrBudgetRefused, err)
	case errors.As(err, &se):
		return nil, fmt.Errorf("--ledger %s: %w", se.Dir, se.Err)
	}
	return run, err
}

// sayRecorded tells the user, on stderr, that the run is in the ledger and
// where (unless --quiet or --json). The file's name is a keyed hash of the
// dataset's identity (ledger.Key): it tells nothing of the data.
func sayRecorded(c *cli.Context, e *env, run *ledger.Run, charged string) {
	if run == nil || c.Bool("quiet") || c.Bool("json") {
		return
	}
	fmt.Fprintf(e.stderr, "pate: run recorded in the privacy ledger %s (%s)\n", run.Path(), charged)
}

// seedMaterial is the secret a seeded run draws from (nil for the secure
// source): the --seed value or the --replicable key.
func seedMaterial(cfg label.Config) []byte {
	switch {
	case cfg.Replicable != nil:
		return append([]byte("replicable\x00"), cfg.Replicable.Key...)
	case cfg.Seed != nil:
		return []byte("seed\x00" + strconv.FormatUint(*cfg.Seed, 10))
	}
	return nil
}

// begin records the run's maximum spend before it starts (write-ahead),
// refusing it when it would take the dataset past --lifetime-epsilon.
func (lr *ledgerRun) begin(lab *label.Labeler, cfg label.Config) (*ledger.Run, error) {
	if lr == nil {
		return nil, nil
	}
	maxRho, err := lab.MaxRho()
	if err != nil {
		maxRho = math.Inf(1) // unbounded: charged in full until the run ends
	}
	labels := append([]string(nil), cfg.Labels...)
	if len(labels) == 0 {
		labels = []string{cfg.Label}
	}
	sort.Strings(labels)
	mech := cfg.Mechanism
	if cfg.Choose { // written before the run chooses: either may spend the budget
		mech += "|" + label.MechanismCellHistogram + "|" + label.MechanismDPLogReg
	}
	req := ledger.BeginRequest{
		Labels: labels, Mechanism: mech,
		MaxRho: maxRho, Delta: cfg.Delta, DiscoveryDelta: label.DiscoveryDelta(cfg.Delta, cfg.Classes != nil || cfg.VotesFormat != ""),
		FailureDelta: lab.FailureDelta(), Epsilon: cfg.Epsilon, Seed: seedMaterial(cfg), PrivacyUnit: cfg.PrivacyUnit,
		// A ρ that holds on some Rényi orders only is converted on those,
		// alone or composed (the ledger reads no other order).
		MaxOrder: lab.MaxOrder(),
	}
	if eps, rhoB, ok := lab.PureMax(); ok && rhoB <= maxRho {
		req.PureMaxEpsilon, req.PureMaxRho = eps, rhoB
	}
	return lr.record(req)
}

// endRun records a run's realized spend: its ρ, and for a run of pure
// events their number and ε (the ledger composes them more tightly).
func endRun(run *ledger.Run, rep *label.Report) error {
	if p := rep.PureDP; p != nil && p.Events > 0 {
		return run.EndPure(float64(rep.Spent.Rho), p.Events, float64(p.EventEpsilon))
	}
	return run.End(float64(rep.Spent.Rho))
}

// fileIdentity hashes the rows of the input at path (stdin for -) for the
// ledger: a CSV as text (ledger.ContentIDCSV: whatever types a reader would
// give its cells), any other format through pate's reader.
func fileIdentity(path string, stdin io.Reader) (string, error) {
	if path != "-" {
		if shards, ok := csvShards(path); ok {
			return ledger.ContentIDCSVShards(shards)
		}
		r, err := arrowio.Open(path, arrowio.ReadOptions{NoSpill: true})
		if err != nil {
			return "", err
		}
		defer r.Close()
		return ledger.ContentID(r)
	}
	text, err := arrowio.TextReader(stdin)
	if err != nil {
		return "", fmt.Errorf("stdin: %w", err)
	}
	br := bufio.NewReaderSize(text, 1<<16)
	head, _ := br.Peek(512)
	if format, err := arrowio.SniffFormat(head, path); err == nil && format == arrowio.FormatCSV {
		return ledger.ContentIDCSV(br)
	}
	r, err := arrowio.Open(path, arrowio.ReadOptions{Stdin: br, NoSpill: true})
	if err != nil {
		return "", err
	}
	defer r.Close()
	return ledger.ContentID(r)
}
