package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
	"github.com/pate-tool/pate/label/replicate"
)

func replicateCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "replicate",
		Usage: "would another sample of the population give the same labels? (a diagnostic, not private unless --private-report)",
		UsageText: `pate replicate --private F --label COL --public F --epsilon E --delta D [--splits 2] [--repeats R] [options]

The sensitive rows are split into disjoint random parts; each part labels the same public rows with the same
mechanism and budget, once with shared randomness (the same seed for partition and noise: the coupling of
replicability) and once with independent randomness. pate reports how often the released labels of two parts
differ (an abstention counts as a label), with a 95% Wilson interval over the queried public rows.

With --replicable each configuration is run twice, as it is and with pate label --replicable (the noise
keyed by public row from the shared seed, rounded to a grid with a shared random offset: the replicable
rounding of Impagliazzo et al. 2022), and both are reported with the fraction of queries answered (and,
with --truth COL, the accuracy of the answered rows), so that the gain in agreement can be set against its cost.

Without --private-report the figures are NOT PRIVATE (a diagnostic for the data owner). With
--private-report --report-epsilon E the disagreement counts are released with discrete Laplace noise
calibrated to their sensitivity to one sensitive row (repeats × (splits − 1) × queried rows: one row lives in
one part per repeat and may change every label of that part), charged E in the privacy ledger.

Examples:
   pate replicate --private testdata/adult_train.parquet --label income --public testdata/adult_public.parquet \
       --epsilon 2 --delta 1e-5 --max-queries 1500 --classes 0,1 --repeats 3
   pate replicate --private testdata/adult_train.parquet --label income --public testdata/adult_public.parquet \
       --epsilon 2 --delta 1e-5 --max-queries 1500 --classes 0,1 --private-report --report-epsilon 1
   pate replicate --private testdata/adult_train.parquet --label income --public testdata/adult_test.parquet \
       --truth income --epsilon 2 --delta 1e-5 --max-queries 1500 --classes 0,1 --replicable`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "private", Usage: "sensitive labelled data", Required: true},
			&cli.StringFlag{Name: "label", Usage: "label column of the sensitive data", Required: true},
			&cli.StringFlag{Name: "public", Usage: "public data to label (a file: it is read once per run)", Required: true},
			&cli.StringSliceFlag{Name: "features", Usage: "feature columns (default: every sensitive column but the label)"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "leave this column out of the default feature set (repeatable; not with --features)"},
			&cli.StringSliceFlag{Name: "classes", Usage: "the public class set (default: released privately by each run)"},
			&cli.IntFlag{Name: "teachers", Value: 250, Usage: "teachers per run (each part has 1/splits of the data)"},
			&cli.StringFlag{Name: "learner", Value: "logreg", Usage: learnerUsage},
			&cli.IntFlag{Name: "splits", Value: 2, Usage: "number of disjoint parts of the sensitive data"},
			&cli.IntFlag{Name: "repeats", Value: 3, Usage: "number of random splits"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the splits and of the shared randomness"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "replicable", Usage: "also label with --replicable (noise keyed by row from the shared seed, replicable rounding) and report how much it lowers the disagreement, and at what cost"},
			&cli.Float64Flag{Name: "replicable-width", Value: label.DefaultReplicableWidth, Usage: "with --replicable: the rounding grid, in standard deviations of the noise"},
			&cli.StringFlag{Name: "truth", Usage: "a column of the public file with the true labels: report the accuracy of the answered rows"},
			&cli.BoolFlag{Name: "private-report", Usage: "release the disagreement counts with discrete Laplace noise, charged --report-epsilon (otherwise the output is NOT PRIVATE)"},
			&cli.Float64Flag{Name: "report-epsilon", Usage: "with --private-report: the pure ε of the released counts (split evenly: two counts, four with --replicable)"},
		}, append(ledgerFlags(), budgetFlags()...)...),
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runReplicate(c, e)
		},
	}
}

func runReplicate(c *cli.Context, e *env) error {
	private, reportEps, err := replicateFlags(c)
	if err != nil {
		return err
	}
	splits, repeats := c.Int("splits"), c.Int("repeats")
	mem := memory.DefaultAllocator
	// A CSV --private is read with declared types (the public file's, the
	// label's from --classes), as pate label reads it: its schema must not
	// depend on its values.
	pubSchema, err := schemaOf(mem, c.String("public"))
	if err != nil {
		return fmt.Errorf("--public: %w", err)
	}
	_, types, err := declaredTypes(c, []string{c.String("label")}, pubSchema)
	if err != nil {
		return err
	}
	whole, err := readWhole(mem, c.String("private"), types)
	if err != nil {
		return err
	}
	defer whole.Release()
	n := int(whole.NumRows())
	if n < splits {
		// The row count is not quoted: it is a fact about the sensitive data.
		return fmt.Errorf("%w: %s has fewer rows than --splits %d", label.ErrInvalidInput, c.String("private"), splits)
	}

	var truth []string
	if col := c.String("truth"); col != "" {
		if private {
			return usagef("--truth is not private: it cannot be used with --private-report")
		}
		if truth, err = readColumnText(mem, c.String("public"), col); err != nil {
			return err
		}
	}

	res, err := replicate.Run(c.Context, replicate.Options{
		Config: replicateConfig(c), Sensitive: whole, Name: c.String("private"),
		OpenPublic: func() (replicate.Public, error) {
			return arrowio.Open(c.String("public"), arrowio.ReadOptions{BatchSize: 16384, Allocator: memory.DefaultAllocator, CountRows: true})
		},
		Splits: splits, Repeats: repeats, Seed: c.Uint64("seed"),
		Replicable: c.Bool("replicable"), Width: c.Float64("replicable-width"),
		Truth: truth, TruthName: c.String("truth"),
	})
	if err != nil {
		return err
	}
	if private {
		if err := releaseReport(c, e, res, reportEps); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	printReplicate(e.stdout, res, c.String("private"), private, truth != nil)
	return nil
}

// replicateFlags checks pate replicate's flags; private and reportEps are
// --private-report and --report-epsilon.
func replicateFlags(c *cli.Context) (private bool, reportEps float64, err error) {
	if splits := c.Int("splits"); splits < 2 {
		return false, 0, usagef("--splits must be at least 2, got %d", splits)
	}
	if repeats := c.Int("repeats"); repeats < 1 {
		return false, 0, usagef("--repeats must be at least 1, got %d", repeats)
	}
	if eps := c.Float64("epsilon"); c.IsSet("epsilon") && !(eps > 0 && eps <= math.MaxFloat64) {
		return false, 0, usagef("--epsilon must be a positive finite number, got %g", eps)
	}
	if d := c.Float64("delta"); !(d > 0 && d < 1) {
		return false, 0, usagef("--delta must be in (0, 1), got %g", d)
	}
	if c.String("public") == "-" || c.String("private") == "-" {
		return false, 0, usagef("pate replicate reads its inputs several times: give files, not stdin")
	}
	private, reportEps = c.Bool("private-report"), c.Float64("report-epsilon")
	switch {
	case private && !c.IsSet("report-epsilon"):
		return false, 0, usagef("--private-report needs --report-epsilon (the ε charged for the released counts)")
	case private && !(reportEps > 0 && reportEps <= math.MaxFloat64):
		return false, 0, usagef("--report-epsilon must be a positive finite number, got %g", reportEps)
	case !private && c.IsSet("report-epsilon"):
		return false, 0, usagef("--report-epsilon is only used with --private-report")
	case !private && (c.IsSet("lifetime-epsilon") || c.IsSet("lifetime-delta") || c.IsSet("dataset")):
		return false, 0, usagef("--lifetime-epsilon, --lifetime-delta and --dataset are for the ledger, which only --private-report spends")
	case private && !c.Bool("no-ledger"):
		if err := lifetimeFlags(c); err != nil {
			return false, 0, err
		}
	}
	return private, reportEps, nil
}

// releaseReport releases the counts with noise, charged in the ledger
// (write-ahead) before any noise is drawn.
func releaseReport(c *cli.Context, e *env, res *replicate.Result, eps float64) error {
	run, err := res.Release(replicate.ReleaseOptions{
		Epsilon: eps, Label: c.String("label"), Delta: c.Float64("delta"),
		Begin: func(req ledger.BeginRequest) (*ledger.Run, error) {
			lr, _, err := openLedger(c, e, "--private", c.String("private"))
			if err != nil || lr == nil {
				return nil, err
			}
			return lr.record(req)
		},
	})
	var pe *replicate.ParamError
	if errors.As(err, &pe) && pe.Usage {
		return usagef("%s", pe.Error())
	}
	if err != nil {
		return err
	}
	sayRecorded(c, e, run, "charged the report's ε")
	return nil
}

// replicateConfig is the labelling of every run of pate replicate.
func replicateConfig(c *cli.Context) label.Config {
	return label.Config{
		Label:            c.String("label"),
		Classes:          nilIfEmpty(splitList(c.StringSlice("classes"))),
		Features:         nilIfEmpty(splitList(c.StringSlice("features"))),
		Exclude:          splitList(c.StringSlice("exclude")),
		Keep:             []string{},
		Teachers:         c.Int("teachers"),
		Learner:          c.String("learner"),
		Mechanism:        c.String("mechanism"),
		Epsilon:          c.Float64("epsilon"),
		Delta:            c.Float64("delta"),
		MaxQueries:       c.Int64("max-queries"),
		Params:           mechanismParams(c),
		AnsweredFraction: c.Float64("answered-fraction"),
		SigmaRatio:       c.Float64("sigma-ratio"),
		SensitiveName:    inputName(c.String("private")),
		PublicName:       inputName(c.String("public")),
		Version:          version,
	}
}
