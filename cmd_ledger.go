package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
)

func ledgerCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "ledger",
		Usage: "the privacy ledger: every run's spend per sensitive dataset",
		Subcommands: []*cli.Command{{
			Name:  "show",
			Usage: "list the datasets of the ledger, their runs and their composed totals",
			UsageText: `pate ledger show [--json] [--ledger DIR]

The ledger directory is --ledger, else $PATE_LEDGER, else $XDG_DATA_HOME/pate/ledger,
else ~/.local/share/pate/ledger. A run without an end entry (crashed, killed, failed or
still running) is charged its maximum spend and its whole δ. The total of a dataset is
the composition of all its runs, whatever their label columns: their zCDP ρ and their δ
add up, and the ρ converts to ε at the summed δ less the runs' failure δs.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "ledger", Usage: "ledger directory"},
				&cli.BoolFlag{Name: "json", Usage: "print the ledger as JSON"},
			},
			Action: func(c *cli.Context) error {
				*jsonErrors = c.Bool("json")
				if err := noPositional(c); err != nil {
					return err
				}
				return runLedgerShow(c, e)
			},
		}},
	}
}

func runLedgerShow(c *cli.Context, e *env) error {
	dir, err := ledgerDir(c)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("ledger %s: %w", dir, err)
	}
	l, err := ledger.Open(dir)
	if err != nil {
		return err
	}
	ds, err := l.Datasets()
	if err != nil {
		return err
	}
	if c.Bool("json") {
		js, err := json.MarshalIndent(struct {
			Ledger   string            `json:"ledger"`
			Datasets []*ledger.Dataset `json:"datasets"`
		}{dir, ds}, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the ledger: %w", err)
		}
		fmt.Fprintln(e.stdout, string(js))
		return nil
	}
	w := e.stdout
	fmt.Fprintf(w, "ledger %s: %d dataset(s)\n", dir, len(ds))
	for _, d := range ds {
		fmt.Fprintf(w, "\ndataset %s…  labels %v  runs %d\n", d.ID[:16], d.Labels, len(d.Runs))
		fmt.Fprintf(w, "  total ρ = %s  →  ε = %s at δ = %.3g (the sum of the runs' δs; of it %.3g failure δ: discoveries, svt)\n", fnum(d.Rho), fnum(d.Epsilon), d.Delta, d.FailureDelta)
		for _, r := range d.Runs {
			state := fmt.Sprintf("ended, realized ρ = %s", fnum(r.Rho))
			if !r.Finished {
				state = "NO END ENTRY (crashed, failed or running): charged its maximum"
			}
			seeded := ""
			if r.Seeded {
				seeded = " seeded"
			}
			fmt.Fprintf(w, "  %s  %s  %-15s labels %v  ε = %g δ = %g  max ρ = %s  charged ρ = %s  %s%s\n",
				r.Started.Format("2006-01-02 15:04:05Z"), r.Run, r.Mechanism, r.Labels, r.Epsilon, r.Delta, fnum(r.MaxRho), fnum(r.Charged), state, seeded)
		}
	}
	return nil
}

func fnum(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.6g", v)
}

// ledgerRun is the write-ahead ledger of one run that spends budget.
type ledgerRun struct {
	s        *ledger.Session
	lifetime float64 // --lifetime-epsilon (0: none)
}

// openLedgerForLabel identifies --private for the ledger.
func openLedgerForLabel(c *cli.Context, e *env) (*ledgerRun, io.Reader, error) {
	return openLedger(c, e, "--private", c.String("private"))
}

// openLedger identifies the sensitive data at path for the ledger (unless
// --no-ledger): it reads it a second time, in the background, and hashes its
// rows (ledger.ContentHash). Standard input is read into memory first, and
// the reader returned replays it for the run.
func openLedger(c *cli.Context, e *env, flag, path string) (*ledgerRun, io.Reader, error) {
	stdin := e.stdin
	if c.Bool("no-ledger") {
		if c.IsSet("lifetime-epsilon") {
			return nil, stdin, usagef("--lifetime-epsilon needs the ledger: drop --no-ledger")
		}
		if c.IsSet("dataset") {
			return nil, stdin, usagef("--dataset names the dataset in the ledger: drop --no-ledger")
		}
		return nil, stdin, nil
	}
	if c.IsSet("lifetime-epsilon") && !(c.Float64("lifetime-epsilon") > 0) {
		return nil, stdin, usagef("--lifetime-epsilon must be positive, got %g", c.Float64("lifetime-epsilon"))
	}
	if c.IsSet("dataset") && c.String("dataset") == "" {
		return nil, stdin, usagef("--dataset: give a name")
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
	s := l.Session(c.String("dataset"), path, hashStdin, flag)
	return &ledgerRun{s: s, lifetime: c.Float64("lifetime-epsilon")}, stdin, nil
}

// record writes the begin entry of a run (write-ahead) into the dataset's
// file, refusing it (ErrBudgetRefused) when it would take the dataset past
// --lifetime-epsilon or reuses a seed.
func (lr *ledgerRun) record(req ledger.BeginRequest) (*ledger.Run, error) {
	run, err := lr.s.Begin(req, lr.lifetime)
	var se *ledger.StoreError
	switch {
	case errors.Is(err, ledger.ErrLifetimeExceeded) || errors.Is(err, ledger.ErrSeedReused):
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
	req := ledger.BeginRequest{
		Labels: labels, Mechanism: cfg.Mechanism,
		MaxRho: maxRho, Delta: cfg.Delta, DiscoveryDelta: label.DiscoveryDelta(cfg.Delta, cfg.Classes != nil || cfg.VotesFormat != ""),
		FailureDelta: lab.FailureDelta(), Epsilon: cfg.Epsilon, Seed: seedMaterial(cfg),
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
