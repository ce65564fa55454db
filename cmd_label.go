package main

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
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
			&cli.StringFlag{Name: "private", Usage: "sensitive labelled data: a file (Parquet, Arrow IPC file or stream, CSV, gzip-compressed CSV), a directory of such shards (hive key=value folders become columns), a quoted glob pattern, or - for stdin", Required: true},
			&cli.StringSliceFlag{Name: "label", Usage: "label column of the sensitive data; repeat it (or give a,b) to label several columns per row under one joint budget. Rows whose label is null are dropped from that label's training (--diagnostics counts them)", Required: true},
			&cli.StringFlag{Name: "label-weights", Usage: "with several --label: how to split the budget over them, e.g. 2,1 (default: equal shares)"},
			&cli.StringFlag{Name: "public", Usage: "public data to label, as --private takes it; only - (stdin) is of unknown length, which needs --max-queries or explicit noise", Required: true},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output Arrow file, or - for an Arrow IPC stream on stdout", Required: true},
			&cli.StringSliceFlag{Name: "features", Usage: "feature columns (default: every sensitive column but the label and the privacy unit)"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "leave this column (an ID, say) out of the default feature set; repeat it for several (not with --features)"},
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
			// The student and the query selection.
			&cli.StringFlag{Name: "student", Usage: "after the private queries end, train a student (logreg, nb or tree) on the answered rows and label every other row with it (pate_source = student; no privacy cost)"},
			&cli.BoolFlag{Name: "self-train", Usage: "with --student: pseudo-label the public rows the student is sure of (p ≥ 0.9, among the first 20,000 unlabelled rows) and refit it once"},
			&cli.StringFlag{Name: "select", Value: label.SelectFirst, Usage: "which rows are queries: first (the first --max-queries rows), random (a uniform sample of --max-queries rows), or uncertain (with --student: in rounds, the rows the student is least sure of, among the first 100,000 public rows)"},
			// The HTML report.
			&cli.StringFlag{Name: "report-html", Usage: "write a self-contained HTML report (charts, parameters, explanation) to this file"},
			// Replicable labels.
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

// labelOptions are pate label's flags, checked.
type labelOptions struct {
	out        string
	format     arrowio.WriteFormat
	seed       *uint64
	labels     []string
	weights    []float64
	replicable *label.Replicable
	batch      int
}

func runLabel(c *cli.Context, e *env) error {
	o, err := labelFlags(c)
	if err != nil {
		return err
	}
	mem := memory.DefaultAllocator
	// Identify the sensitive data for the ledger (hashing it).
	tee := newIdentityTee()
	defer tee.abandon()
	lr, sensStdin, err := openLedgerForLabel(c, e, tee)
	if err != nil {
		return err
	}
	// The public file first: a CSV --private takes its types from it and
	// from the declarations, never from its own rows.
	pub, err := arrowio.Open(c.String("public"), arrowio.ReadOptions{BatchSize: o.batch, Allocator: mem, Stdin: e.stdin, CountRows: true})
	if err != nil {
		return fmt.Errorf("--public: %w", err)
	}
	defer pub.Close()
	labelType, csvTypes, err := declaredTypes(c, o.labels, pub.Schema())
	if err != nil {
		return err
	}
	sens, err := arrowio.Open(c.String("private"), arrowio.ReadOptions{BatchSize: o.batch, Allocator: mem, Stdin: sensStdin, CSVTypes: csvTypes})
	if err != nil {
		return fmt.Errorf("--private: %w", err)
	}
	defer sens.Close()

	cfg := labelConfig(c, o, pub.NumRows())
	cfg.Allocator = mem
	if !c.Bool("quiet") {
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
	bar := newProgress(e, c.Bool("quiet") || c.Bool("json"), pub.NumRows())
	cfg.Progress = bar.update
	lab, err := label.New(cfg, sens.Schema(), pub.Schema())
	if err != nil {
		return err
	}
	return releaseRun(c, e, lr, lab, o.out, o.format, func(ctx context.Context, w label.RecordWriter) (*label.Report, error) {
		defer bar.finish()
		return lab.Run(ctx, tee.wrap(sens), pub, w)
	})
}

// labelFlags checks pate label's flags.
func labelFlags(c *cli.Context) (labelOptions, error) {
	var o labelOptions
	if eps := c.Float64("epsilon"); c.IsSet("epsilon") && !(eps > 0 && eps <= math.MaxFloat64) {
		return o, usagef("--epsilon must be a positive finite number, got %g", eps)
	}
	if d := c.Float64("delta"); !(d > 0 && d < 1) {
		return o, usagef("--delta must be in (0, 1), got %g", d)
	}
	if c.Int("batch-size") <= 0 {
		return o, usagef("--batch-size must be positive, got %d", c.Int("batch-size"))
	}
	if c.Int("teachers") <= 0 {
		return o, usagef("--teachers must be at least 1, got %d", c.Int("teachers"))
	}
	if c.String("private") == "-" && c.String("public") == "-" {
		return o, usagef("--private and --public cannot both read stdin")
	}
	o.out, o.batch = c.String("output"), c.Int("batch-size")
	var err error
	if o.format, o.seed, err = outputFlags(c); err != nil {
		return o, err
	}
	for _, flag := range []string{"sigma", "sigma1", "sigma2", "laplace-scale", "em-epsilon", "subset-rate", "gamma", "svt-epsilon0"} {
		if c.IsSet(flag) {
			v, err := strconv.ParseFloat(c.String(flag), 64)
			if err != nil || !(v > 0 && v <= math.MaxFloat64) {
				return o, usagef("--%s must be a positive finite number, got %q", flag, c.String(flag))
			}
		}
	}
	if o.labels = splitList(c.StringSlice("label")); len(o.labels) == 0 {
		return o, usagef("--label: give the label column")
	}
	if c.IsSet("label-weights") {
		for _, w := range splitList([]string{c.String("label-weights")}) {
			v, err := strconv.ParseFloat(w, 64)
			if err != nil || !(v > 0 && v <= math.MaxFloat64) {
				return o, usagef("--label-weights: each weight must be a positive finite number, got %q", w)
			}
			o.weights = append(o.weights, v)
		}
		if len(o.weights) != len(o.labels) {
			return o, usagef("--label-weights has %d weights for %d --label columns", len(o.weights), len(o.labels))
		}
	}
	o.replicable, err = replicableFlags(c)
	return o, err
}

// labelConfig is the labelling pate label's flags ask for.
func labelConfig(c *cli.Context, o labelOptions, publicRows int64) label.Config {
	cfg := label.Config{
		Label:            o.labels[0],
		Labels:           o.labels,
		LabelWeights:     o.weights,
		Classes:          nilIfEmpty(splitList(c.StringSlice("classes"))),
		Features:         nilIfEmpty(splitList(c.StringSlice("features"))),
		Exclude:          splitList(c.StringSlice("exclude")),
		Keep:             nilIfEmpty(splitList(c.StringSlice("keep"))),
		PrivacyUnit:      c.String("privacy-unit"),
		Teachers:         c.Int("teachers"),
		Learner:          c.String("learner"),
		Mechanism:        c.String("mechanism"),
		Epsilon:          c.Float64("epsilon"),
		Delta:            c.Float64("delta"),
		MaxQueries:       c.Int64("max-queries"),
		PublicRows:       publicRows,
		AnsweredFraction: c.Float64("answered-fraction"),
		SigmaRatio:       c.Float64("sigma-ratio"),
		Params:           mechanismParams(c),
		Student:          c.String("student"),
		SelfTrain:        c.Bool("self-train"),
		Select:           c.String("select"),
		SensitiveName:    inputName(c.String("private")),
		PublicName:       inputName(c.String("public")),
		Seed:             o.seed,
		Replicable:       o.replicable,
		BatchSize:        o.batch,
		Version:          version,
	}
	if c.IsSet("keep") && len(cfg.Keep) == 0 {
		cfg.Keep = []string{}
	}
	return cfg
}
