package main

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
)

func labelCommand(e *env, jsonErrors *bool) *cli.Command {
	cmd := &cli.Command{
		Name:  "label",
		Usage: "label a public dataset with differentially private labels",
		UsageText: `pate label --private F --label COL --public F --epsilon E --delta D -o F|- [options]

By default 250 teachers answer the public rows a logistic-regression student is least
sure of, as many as the budget reads well (n = 11·teachers·√(ρ/r), ρ the zCDP budget,
r the cost of a query at unit noise), and the student labels every other row: every
output row gets a label and a pate_source. --teachers-only streams every row to the
teachers instead (what a public stream on stdin gets); rows they abstain on stay empty.

Examples:
   pate label --private testdata/adult_train.parquet --label income \
       --public testdata/adult_public.parquet --epsilon 1 --delta 1e-5 -o labeled.arrow
   pate label --private s.parquet --label y --public p.parquet --epsilon 1 --delta 1e-6 \
       --privacy-unit patient_id -o - | python train.py
   pate label --private s.parquet --label y --public - --epsilon 2 --delta 1e-5 \
       --teachers-only --max-queries 5000 -o out.arrow      (a public stream, teachers only)
   pate label --private s.parquet --label y --public p.parquet --mechanism gnmax \
       --sigma 40 --delta 1e-5 -o out.arrow     (explicit noise; the report states its ε)
   pate label --private a.parquet --label income --label sex --public p.parquet \
       --epsilon 2 --delta 1e-5 --label-weights 2,1 -o labeled.arrow
                                        (two labels per row, one joint budget)
   head -c 32 /dev/urandom | base64 > shared.seed   (once; for the other curator only)
   pate label --private mine.parquet --label y --public p.parquet --epsilon 2 \
       --delta 1e-5 --replicable --shared-seed-file shared.seed -o labeled.arrow
   pate label --private a.parquet --label income --public p.parquet --classes 0,1 \
       --mechanism private-learner --epsilon 1 --delta 1e-5 -o labeled.arrow
                                        (one ε-DP decision stump labels every row)
   pate label --teachers-from adult.teachers --public p.parquet --epsilon 1 --delta 1e-5 \
       --dataset adult -o labeled.arrow    (teachers from label/beam's pate-beam-train)`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "private", Usage: "sensitive labelled data: a file (Parquet, Arrow IPC file or stream, CSV, gzip-compressed CSV), a directory of such shards (hive key=value folders become columns), a quoted glob pattern, or - for stdin", Required: true},
			&cli.StringSliceFlag{Name: "label", Usage: "label column of the sensitive data; repeat it (or give a,b) to label several columns per row under one joint budget. Rows whose label is null are dropped from that label's training (--diagnostics counts them)", Required: true},
			&cli.StringFlag{Name: "label-weights", Usage: "with several --label: how to split the budget over them, e.g. 2,1 (default: equal shares)"},
			&cli.StringFlag{Name: "public", Usage: "public data to label, as --private takes it; only - (stdin) is of unknown length, which needs --max-queries or explicit noise", Required: true},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: outputUsage, Required: true},
			&cli.StringSliceFlag{Name: "features", Usage: "feature columns (default: every sensitive column but the label and the privacy unit)"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "leave this column (an ID, say) out of the default feature set; repeat it for several (not with --features)"},
			&cli.StringSliceFlag{Name: "keep", Usage: "public columns copied to the output (default: all)"},
			&cli.StringSliceFlag{Name: "classes", Usage: "the public set of label values; without it the set is released privately from the sensitive data at a small cost"},
			&cli.StringFlag{Name: "label-type", Usage: "declared type of the label column(s): int64, string or bool. A CSV --private is read with it (a value that does not parse is a missing label) and its feature columns with the types of --public, never types inferred from the sensitive rows; Parquet and Arrow files must have it. Default for CSV: int64 when every --classes value is an integer, else string"},
			&cli.BoolFlag{Name: "diagnostics", Usage: "print statistics of the sensitive data that no mechanism protects (dropped rows, teachers without rows) on stderr, marked NOT PRIVATE; for the data owner only"},
			&cli.StringFlag{Name: "privacy-unit", Usage: "column whose value identifies a person: all their rows go to one teacher; private-knn samples persons, one row of each (default: a row is a unit)"},
			&cli.IntFlag{Name: "teachers", Value: 250, Usage: "number of teachers (disjoint partitions)"},
			&cli.StringFlag{Name: "learner", Value: "logreg", Usage: learnerUsage},
			&cli.StringFlag{Name: "report", Usage: "write the JSON privacy report to this file"},
			&cli.StringFlag{Name: "seed", Usage: "seed the noise and the partition (tests, replicability); the report says the run was seeded. Private only while the seed is secret and used once: the ledger refuses a seed it has seen"},
			&cli.IntFlag{Name: "batch-size", Value: 16384, Usage: "rows per record batch"},
			&cli.StringFlag{Name: "format", Usage: formatUsage},
			&cli.BoolFlag{Name: "zstd", Usage: zstdUsage},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar, no warnings"},
			&cli.BoolFlag{Name: "json", Usage: "print the report (and errors) as JSON"},
			// The plan: the student, the query selection and the teacher-only stream.
			&cli.StringFlag{Name: "student", Usage: "the student trained on the teachers' answers, which labels every other row (pate_source = student; no privacy cost): logreg, nb, tree, gbt (boosted trees, class-balanced) or knn (k nearest answered rows, see --neighbors) (default: logreg)"},
			&cli.IntFlag{Name: "neighbors", Usage: "k of --student knn (default 10)"},
			&cli.BoolFlag{Name: "self-train", Usage: "pseudo-label the public rows the student is sure of (p ≥ 0.9, among the first 20,000 unlabelled rows) and refit it once"},
			&cli.StringFlag{Name: "select", Usage: "which rows are queries: uncertain (in rounds, the rows the student is least sure of, among the first 100,000 public rows), random (a uniform sample) or first (the first rows) (default: uncertain; first with --teachers-only)"},
			&cli.StringFlag{Name: "save-labeler", Usage: "save the student, the public feature encoding, the classes and the run's report to this file, for pate predict"},
			&cli.StringFlag{Name: "teachers-from", Usage: "poll the teachers of this ensemble file (pate-beam-train writes it where the sensitive data lives) instead of training them: --private is not read, the label, classes, features and number of teachers are the file's, and the labels are released and charged as any run's. Needs a teacher mechanism (confident-gnmax, gnmax, lnmax, svt) and --dataset NAME for the ledger"},
			&cli.BoolFlag{Name: "teachers-only", Usage: "no student: put every public row to the teachers in order until the budget or --max-queries ends; rows they abstain on stay unlabelled (the default for a public stream on stdin)"},
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
			if c.IsSet("teachers-from") {
				if err := missingFlags(c, teachersFromRequired); err != nil {
					return err
				}
				return runLabelTeachersFrom(c, e)
			}
			if err := missingFlags(c, labelRequired); err != nil {
				return err
			}
			return runLabel(c, e)
		},
	}
	arrangeFlags(cmd, labelRequired, labelCategories)
	return cmd
}

// labelRequired are the flags every run of pate label needs, in the order
// its help lists them. --epsilon is one of them although explicit noise can
// stand in for it: a newcomer should give a budget.
var labelRequired = []string{"private", "label", "public", "epsilon", "delta", "output"}

// teachersFromRequired are the flags a run with --teachers-from needs: the
// teachers stand in for --private and say which label they learnt.
var teachersFromRequired = []string{"teachers-from", "public", "epsilon", "delta", "output"}

// labelCategories groups pate label's other flags in its help, in order.
var labelCategories = []flagCategory{
	{"Plan: the student and the queries (default: planned from ε, δ and the teachers)",
		[]string{"student", "select", "max-queries", "teachers-only", "self-train", "teachers", "learner", "neighbors", "teachers-from"}},
	{"Data", []string{"features", "exclude", "classes", "privacy-unit", "label-type", "label-weights", "keep", "batch-size",
		"diagnostics"}},
	{"Output and report", []string{"report", "report-html", "format", "zstd", "json", "quiet", "seed", "save-labeler"}},
	{"Mechanism and noise (default: confident-gnmax, noise planned from ε)", []string{"mechanism", "sigma",
		"threshold", "sigma1", "sigma2", "laplace-scale", "answered-fraction", "sigma-ratio", "bins", "em-epsilon",
		"subset-rate", "gamma", "svt-epsilon0", "svt-cutoff", "svt-threshold", "knn-k", "sample-rate"}},
	{"Replicable labels", []string{"replicable", "shared-seed-file", "replicable-width"}},
	{"Privacy ledger", []string{"ledger", "no-ledger", "dataset", "lifetime-epsilon", "lifetime-delta"}},
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
	teachers   int
}

func runLabel(c *cli.Context, e *env) error {
	o, err := labelFlags(c, e.stdout)
	if err != nil {
		return err
	}
	if err := saveLabelerFlag(c); err != nil {
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
	pub, err := arrowio.Open(c.String("public"), arrowio.ReadOptions{BatchSize: o.batch, Allocator: mem, Stdin: e.stdin, CountRows: true, SelectLater: true})
	if err != nil {
		return fmt.Errorf("--public: %w", err)
	}
	defer pub.Close()
	warnSkipped(e, c.Bool("quiet"), "public", pub)
	if pub.NumRows() == 0 {
		// Said first: a CSV of a header alone has no column types to check.
		return fmt.Errorf("--public %s has no rows: nothing to label: %w", c.String("public"), label.ErrInvalidInput)
	}
	labelType, csvTypes, err := declaredTypes(c, o.labels, pub.Schema())
	if err != nil {
		return err
	}
	sens, err := arrowio.Open(c.String("private"), arrowio.ReadOptions{BatchSize: o.batch, Allocator: mem, Stdin: sensStdin, CSVTypes: csvTypes, NoSpill: true})
	if err != nil {
		return fmt.Errorf("--private: %w", err)
	}
	defer sens.Close()
	warnSkipped(e, c.Bool("quiet"), "private", sens)

	cfg := labelConfig(c, o, pub.NumRows())
	cfg.Allocator = mem
	cfg.CommandLine = reportedArgs(e.args)
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
	bar := runProgress(c, e, &cfg, lr, pub.NumRows())
	defer bar.finish()
	if c.String("save-labeler") != "" && cfg.Student == "" && !label.TrainsModel(cfg.Mechanism) {
		return usagef("--save-labeler: this run trains no student (its plan labels with the teachers alone): give --student")
	}
	lab, err := label.New(cfg, sens.Schema(), pub.Schema())
	if err != nil {
		return err
	}
	if err := narrowPublic(lab, pub); err != nil {
		return err
	}
	var rep *label.Report
	if err := releaseRun(c, e, lr, lab, o.out, o.format, func(ctx context.Context, w label.RecordWriter) (*label.Report, error) {
		defer bar.finish()
		r, err := lab.Run(ctx, tee.wrap(sens), pub, w)
		rep = r
		return r, err
	}); err != nil {
		return err
	}
	return saveLabeler(c, e, lab, rep)
}
