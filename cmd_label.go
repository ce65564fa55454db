package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	pateio "github.com/pate-tool/pate/io"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
)

func labelCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "label",
		Usage: "label a public dataset with differentially private labels",
		UsageText: `pate label --private F --label COL [--label COL2 ...] --public F -o F|- [--epsilon E --delta D] [options]

Examples:
   pate label --private testdata/adult_train.parquet --label income \
       --public testdata/adult_public.parquet --epsilon 2 --delta 1e-5 -o labeled.arrow --report report.json
   pate label --private s.parquet --label y --public p.parquet --epsilon 1 --delta 1e-6 \
       --privacy-unit patient_id --max-queries 2000 -o - | python train.py
   pate label --private s.parquet --label y --public p.parquet --mechanism gnmax --sigma 40 \
       --delta 1e-5 -o out.arrow        (explicit noise; the report states the ε it cost)
   pate label --private testdata/adult_train.parquet --label income --label sex \
       --public testdata/adult_public.parquet --epsilon 2 --delta 1e-5 --label-weights 2,1 -o labeled.arrow
                                        (two labels per row, one joint budget: income gets 2/3 of it)
   head -c 32 /dev/urandom | base64 > shared.seed      (once; give it to the other curator, not to the recipients)
   pate label --private mine.parquet --label y --public p.parquet --epsilon 2 --delta 1e-5 \
       --replicable --shared-seed-file shared.seed -o labeled.arrow
   pate label --private testdata/adult_train.parquet --label income --public testdata/adult_public.parquet \
       --mechanism private-learner --classes 0,1 --epsilon 1 --delta 1e-5 -o labeled.arrow
                                        (one ε-DP decision stump labels every row: (1, 0)-DP)`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "private", Usage: "sensitive labelled data (Parquet, Arrow IPC file or stream, CSV; - for stdin)", Required: true},
			&cli.StringSliceFlag{Name: "label", Usage: "label column of the sensitive data; repeat it (or give a,b) to label several columns per row under one joint budget", Required: true},
			&cli.StringFlag{Name: "label-weights", Usage: "with several --label: how to split the budget over them, e.g. 2,1 (default: equal shares)"},
			&cli.StringFlag{Name: "public", Usage: "public data to label (Parquet, Arrow IPC, CSV; - for stdin)", Required: true},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output Arrow file, or - for an Arrow IPC stream on stdout", Required: true},
			&cli.StringSliceFlag{Name: "features", Usage: "feature columns (default: every sensitive column but the label and the privacy unit)"},
			&cli.StringSliceFlag{Name: "keep", Usage: "public columns copied to the output (default: all)"},
			&cli.StringSliceFlag{Name: "classes", Usage: "the public set of label values; without it the set is released privately from the sensitive data at a small cost"},
			&cli.StringFlag{Name: "label-type", Usage: "declared type of the label column(s): int64, string or bool. A CSV --private is read with it (a value that does not parse is a missing label) and its feature columns with the types of --public, never types inferred from the sensitive rows; Parquet and Arrow files must have it. Default for CSV: int64 when every --classes value is an integer, else string"},
			&cli.BoolFlag{Name: "diagnostics", Usage: "print statistics of the sensitive data that no mechanism protects (dropped rows, teachers without rows) on stderr, marked NOT PRIVATE; for the data owner only"},
			&cli.StringFlag{Name: "privacy-unit", Usage: "column whose value identifies a person: all their rows go to one teacher (default: a row is a unit)"},
			&cli.IntFlag{Name: "teachers", Value: 250, Usage: "number of teachers (disjoint partitions)"},
			&cli.StringFlag{Name: "learner", Value: "logreg", Usage: "teacher learner: logreg, nb or tree"},
			&cli.StringFlag{Name: "report", Usage: "write the JSON privacy report to this file"},
			&cli.StringFlag{Name: "seed", Usage: "seed the noise and the partition (tests, replicability); the report says the run was seeded. Private only while the seed is secret and used once: the ledger refuses a seed it has seen"},
			&cli.IntFlag{Name: "batch-size", Value: 16384, Usage: "rows per record batch"},
			&cli.StringFlag{Name: "format", Value: "file", Usage: "output format: file (Arrow IPC file) or stream (Arrow IPC stream; always with -o -)"},
			&cli.BoolFlag{Name: "zstd", Usage: "compress the output with zstd"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar, no warnings"},
			&cli.BoolFlag{Name: "json", Usage: "print the report (and errors) as JSON"},
			// issue 4: the student and the query selection.
			&cli.StringFlag{Name: "student", Usage: "after the private queries end, train a student (logreg, nb or tree) on the answered rows and label every other row with it (pate_source = student; no privacy cost)"},
			&cli.BoolFlag{Name: "self-train", Usage: "with --student: pseudo-label the public rows the student is sure of (p ≥ 0.9, among the first 20,000 unlabelled rows) and refit it once"},
			&cli.StringFlag{Name: "select", Value: label.SelectFirst, Usage: "which rows are queries: first (the first --max-queries rows), random (a uniform sample of --max-queries rows), or uncertain (with --student: in rounds, the rows the student is least sure of, among the first 100,000 public rows)"},
			// issue 7: HTML report and privacy ledger.
			&cli.StringFlag{Name: "report-html", Usage: "write a self-contained HTML report (charts, parameters, explanation) to this file"},
			// issue 6: replicable labels.
			&cli.BoolFlag{Name: "replicable", Usage: "draw the noise per public row from the --shared-seed-file and round it to a grid with a shared random offset (replicable rounding): two curators with samples of the same population and the same seed release the same labels with high probability; the seed must stay secret from the recipients"},
			&cli.StringFlag{Name: "shared-seed-file", Usage: "with --replicable: a file holding the secret seed shared between curators (at least 16 bytes; surrounding white space ignored; never reported)"},
			&cli.Float64Flag{Name: "replicable-width", Value: label.DefaultReplicableWidth, Usage: "with --replicable: the rounding grid, in standard deviations of the noise (wider: more replicable, less accurate)"},
		}, append(ledgerFlags(), budgetFlags()...)...),
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runLabel(c, e)
		},
	}
}

func runLabel(c *cli.Context, e *env) error {
	if eps := c.Float64("epsilon"); c.IsSet("epsilon") && !(eps > 0 && eps <= math.MaxFloat64) {
		return usagef("--epsilon must be a positive finite number, got %g", eps)
	}
	if d := c.Float64("delta"); !(d > 0 && d < 1) {
		return usagef("--delta must be in (0, 1), got %g", d)
	}
	if c.Int("batch-size") <= 0 {
		return usagef("--batch-size must be positive, got %d", c.Int("batch-size"))
	}
	if c.Int("teachers") <= 0 {
		return usagef("--teachers must be at least 1, got %d", c.Int("teachers"))
	}
	if c.String("private") == "-" && c.String("public") == "-" {
		return usagef("--private and --public cannot both read stdin")
	}
	out := c.String("output")
	format, seed, err := outputFlags(c)
	if err != nil {
		return err
	}
	for _, flag := range []string{"sigma", "sigma1", "sigma2", "laplace-scale", "em-epsilon", "subset-rate", "gamma", "svt-epsilon0"} {
		if c.IsSet(flag) {
			v, err := strconv.ParseFloat(c.String(flag), 64)
			if err != nil || !(v > 0 && v <= math.MaxFloat64) {
				return usagef("--%s must be a positive finite number, got %q", flag, c.String(flag))
			}
		}
	}
	labels := splitList(c.StringSlice("label"))
	if len(labels) == 0 {
		return usagef("--label: give the label column")
	}
	var weights []float64
	if c.IsSet("label-weights") {
		for _, w := range splitList([]string{c.String("label-weights")}) {
			v, err := strconv.ParseFloat(w, 64)
			if err != nil || !(v > 0 && v <= math.MaxFloat64) {
				return usagef("--label-weights: each weight must be a positive finite number, got %q", w)
			}
			weights = append(weights, v)
		}
		if len(weights) != len(labels) {
			return usagef("--label-weights has %d weights for %d --label columns", len(weights), len(labels))
		}
	}
	replicable, err := replicableFlags(c)
	if err != nil {
		return err
	}
	quiet := c.Bool("quiet")
	mem := memory.DefaultAllocator
	batch := c.Int("batch-size")

	// issue 7: identify the sensitive data for the ledger (hashing it).
	lr, sensStdin, err := openLedgerForLabel(c, e)
	if err != nil {
		return err
	}
	// The public file first: a CSV --private takes its types from it and
	// from the declarations, never from its own rows.
	pub, err := pateio.Open(c.String("public"), pateio.ReadOptions{BatchSize: batch, Allocator: mem, Stdin: e.stdin})
	if err != nil {
		return fmt.Errorf("--public: %w", err)
	}
	defer pub.Close()
	labelType, csvTypes, err := declaredTypes(c, labels, pub.Schema())
	if err != nil {
		return err
	}
	sens, err := pateio.Open(c.String("private"), pateio.ReadOptions{BatchSize: batch, Allocator: mem, Stdin: sensStdin, CSVTypes: csvTypes})
	if err != nil {
		return fmt.Errorf("--private: %w", err)
	}
	defer sens.Close()

	cfg := label.Config{
		Label:            labels[0],
		Labels:           labels,
		LabelWeights:     weights,
		Classes:          nilIfEmpty(splitList(c.StringSlice("classes"))),
		Features:         nilIfEmpty(splitList(c.StringSlice("features"))),
		Keep:             nilIfEmpty(splitList(c.StringSlice("keep"))),
		PrivacyUnit:      c.String("privacy-unit"),
		Teachers:         c.Int("teachers"),
		Learner:          c.String("learner"),
		Mechanism:        c.String("mechanism"),
		Epsilon:          c.Float64("epsilon"),
		Delta:            c.Float64("delta"),
		MaxQueries:       c.Int64("max-queries"),
		PublicRows:       pub.NumRows(),
		AnsweredFraction: c.Float64("answered-fraction"),
		SigmaRatio:       c.Float64("sigma-ratio"),
		Params:           mechanismParams(c),
		Student:          c.String("student"),
		SelfTrain:        c.Bool("self-train"),
		Select:           c.String("select"),
		SensitiveName:    inputName(c.String("private")),
		PublicName:       inputName(c.String("public")),
		Seed:             seed,
		Replicable:       replicable,
		BatchSize:        batch,
		Allocator:        mem,
		Version:          version,
	}
	if !quiet {
		cfg.Warn = func(msg string) { fmt.Fprintf(e.stderr, "pate: warning: %s\n", msg) }
	}
	if c.IsSet("label-type") {
		cfg.LabelType = labelType
	}
	if c.Bool("diagnostics") {
		cfg.Diagnose = func(msg string) { fmt.Fprintf(e.stderr, "pate: NOT PRIVATE diagnostic: %s\n", msg) }
		defer func() {
			if records, cells := sens.Skipped(); records+cells > 0 {
				cfg.Diagnose(fmt.Sprintf("--private: %d records of the wrong width skipped, %d cells that do not parse as their declared type read as missing", records, cells))
			}
		}()
	}
	if c.IsSet("keep") && len(cfg.Keep) == 0 {
		cfg.Keep = []string{}
	}
	bar := newProgress(e, quiet || c.Bool("json"), pub.NumRows())
	cfg.Progress = bar.update
	lab, err := label.New(cfg, sens.Schema(), pub.Schema())
	if err != nil {
		return err
	}
	cfg = lab.Config()

	// issue 7: write-ahead ledger entry (the run's maximum spend), under the
	// ledger's lock, before anything is released: at the first batch written
	// (see ledger.GatedWriter), or after the run when it wrote none.
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	gate := ledger.StartGate(func() (*ledger.Run, error) { return lr.begin(lab, cfg) }, cancel)

	// The output is created before the work starts, so an unwritable target
	// fails at once; its metadata is completed when the run ends.
	meta := label.OutputMetadata(cfg)
	schema := arrow.NewSchema(lab.OutputSchema().Fields(), &meta)
	w, err := pateio.Create(out, schema, pateio.WriteOptions{
		Format: format, Zstd: c.Bool("zstd"), Allocator: mem, Stdout: e.stdout,
		Reserve: label.MetadataReserve(cfg),
	})
	if err != nil {
		err = fmt.Errorf("-o %s: %w", out, err)
		if entry, lerr := gate.Wait(); lerr != nil {
			return errors.Join(err, lerr)
		} else if entry != nil { // nothing ran, nothing was released
			if lerr := entry.End(0); lerr != nil {
				return errors.Join(err, fmt.Errorf("--ledger: %w", lerr))
			}
		}
		return err
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()

	cw := &ledger.GatedWriter{W: w, Gate: gate}
	rep, err := lab.Run(ctx, sens, pub, cw)
	bar.finish()
	ledgerEntry, lerr := gate.Wait()
	if lerr != nil { // refused or failed before the first batch: nothing was released
		return lerr
	}
	if err != nil {
		// A run that failed after reading the sensitive data may have
		// revealed something by failing (an abort that one dataset
		// triggers and its neighbour does not): its begin entry stays,
		// charged its maximum. Only a run interrupted by the user (not by
		// the data) that released nothing (a file output is released only
		// by its final rename, a stream by its batches) is closed at zero.
		if ledgerEntry != nil {
			if c.Context.Err() != nil && (out != "-" || cw.Rows == 0) {
				if lerr := ledgerEntry.End(0); lerr != nil {
					return errors.Join(err, fmt.Errorf("--ledger: %w", lerr))
				}
				sayRecorded(c, e, ledgerEntry, "interrupted before releasing anything: charged nothing")
			} else {
				sayRecorded(c, e, ledgerEntry, "the run failed: charged its maximum spend")
			}
		}
		return err
	}
	// The realized spend, now known.
	if ledgerEntry != nil {
		if err := endRun(ledgerEntry, rep); err != nil {
			return fmt.Errorf("--ledger: %w", err)
		}
		sayRecorded(c, e, ledgerEntry, "charged its realized spend")
	}
	if p := c.String("report-html"); p != "" {
		if err := writeHTMLReport(p, rep); err != nil {
			return fmt.Errorf("--report-html %s: %w", p, err)
		}
	}
	committed, err = publish(c, e, w, rep, cfg, out)
	return err
}
