package main

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
)

func aggregateCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "aggregate",
		Usage: "release labels from teacher votes computed elsewhere (same mechanisms, budget, output and report)",
		UsageText: `pate aggregate --votes F --teachers K -o F|- [--public F] [--epsilon E] --delta D [options]

--votes-format counts:      one integer column per class (how many teachers voted for it), one row per query
--votes-format predictions: one integer column per teacher (or one list column) with each teacher's predicted class

Examples:
   pate aggregate --votes testdata/votes/adult_250_teachers.parquet --teachers 250 \
       --public testdata/adult_public.parquet --mechanism confident-gnmax --threshold 300 --sigma1 200 --sigma2 40 \
       --max-queries 1500 --delta 1e-5 -o labeled.arrow --report report.json
   pate aggregate --votes preds.parquet --votes-format predictions --num-classes 10 --epsilon 2 --delta 1e-6 -o -`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "votes", Usage: "the teachers' votes (Parquet, Arrow IPC, CSV; - for stdin)", Required: true},
			&cli.StringFlag{Name: "votes-format", Value: label.VotesCounts, Usage: "counts or predictions"},
			&cli.IntFlag{Name: "teachers", Usage: "number of teachers (required for counts and for a list column of predictions)"},
			&cli.IntFlag{Name: "num-classes", Usage: "number of classes (predictions)"},
			&cli.StringSliceFlag{Name: "classes", Usage: "names of the classes, in vote order (the label is then a string)"},
			&cli.StringFlag{Name: "public", Usage: "public file whose columns are carried to the output, row for row"},
			&cli.StringSliceFlag{Name: "keep", Usage: "columns of --public copied to the output (default: all)"},
			&cli.StringFlag{Name: "label", Value: "label", Usage: "name of the output label column"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: outputUsage, Required: true},
			&cli.StringFlag{Name: "report", Usage: "write the JSON privacy report to this file"},
			&cli.StringFlag{Name: "seed", Usage: "seed the noise (tests, replicability); the report says so"},
			&cli.IntFlag{Name: "batch-size", Value: 16384, Usage: "rows per record batch"},
			&cli.StringFlag{Name: "format", Usage: formatUsage},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no summary"},
			&cli.BoolFlag{Name: "json", Usage: "print the report (and errors) as JSON"},
			&cli.StringFlag{Name: "privacy-unit", Usage: "the privacy unit the votes' teachers were partitioned by (pate label --privacy-unit COL), recorded in the ledger (default: a row)"},
		}, append(ledgerFlags(), budgetFlags()...)...),
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runAggregate(c, e)
		},
	}
}

func runAggregate(c *cli.Context, e *env) error {
	if c.IsSet("epsilon") && !(c.Float64("epsilon") > 0) {
		return usagef("--epsilon must be positive, got %g", c.Float64("epsilon"))
	}
	if c.Int("batch-size") <= 0 {
		return usagef("--batch-size must be positive, got %d", c.Int("batch-size"))
	}
	out := c.String("output")
	format, seed, err := outputFlags(c, e.stdout)
	if err != nil {
		return err
	}
	mem := memory.DefaultAllocator
	batch := c.Int("batch-size")
	// Without --dataset the ledger identifies the votes by their rows: to
	// compose these runs with the pate label runs on the data the votes
	// came from (and to keep a lifetime), name the dataset in both.
	lr, votesStdin, err := openLedger(c, e, "--votes", c.String("votes"))
	if err != nil {
		return err
	}
	if lr != nil {
		lr.unit = c.String("privacy-unit")
	}
	// A CSV of votes is read as integers throughout (declared, not inferred
	// from the votes, which are sensitive): a cell that is not an integer is
	// a null, handled as the vote checks handle any bad count.
	votes, err := arrowio.Open(c.String("votes"), arrowio.ReadOptions{BatchSize: batch, Allocator: mem, Stdin: votesStdin,
		CSVTypes: map[string]arrow.DataType{}, CSVDefault: arrow.PrimitiveTypes.Int64})
	if err != nil {
		return fmt.Errorf("--votes: %w", err)
	}
	defer votes.Close()
	warnSkipped(e, c.Bool("quiet"), "votes", votes)
	var pub *arrowio.Reader
	var pubSchema *arrow.Schema
	rows := votes.NumRows()
	if p := c.String("public"); p != "" {
		if p == "-" && c.String("votes") == "-" {
			return usagef("--votes and --public cannot both read stdin")
		}
		if pub, err = arrowio.Open(p, arrowio.ReadOptions{BatchSize: batch, Allocator: mem, Stdin: e.stdin, CountRows: true}); err != nil {
			return fmt.Errorf("--public: %w", err)
		}
		defer pub.Close()
		warnSkipped(e, c.Bool("quiet"), "public", pub)
		pubSchema = pub.Schema()
		if pr := pub.NumRows(); rows >= 0 && pr >= 0 && pr != rows {
			return fmt.Errorf("%w: %s has %d rows but %s has %d (row counts must match)", label.ErrInvalidInput, p, pr, c.String("votes"), rows)
		}
		if rows < 0 {
			rows = pub.NumRows()
		}
	}
	cfg := aggregateConfig(c, rows, seed)
	cfg.Allocator = mem
	lab, err := label.NewAggregate(cfg, votes.Schema(), pubSchema)
	if err != nil {
		return err
	}
	var pr label.RecordReader
	if pub != nil {
		pr = pub
	}
	return releaseRun(c, e, lr, lab, out, format, func(ctx context.Context, w label.RecordWriter) (*label.Report, error) {
		return lab.RunVotes(ctx, votes, pr, w)
	})
}

// aggregateConfig is the aggregation pate aggregate's flags ask for.
func aggregateConfig(c *cli.Context, rows int64, seed *uint64) label.Config {
	cfg := label.Config{
		Label:            c.String("label"),
		Classes:          nilIfEmpty(splitList(c.StringSlice("classes"))),
		Keep:             nilIfEmpty(splitList(c.StringSlice("keep"))),
		Teachers:         c.Int("teachers"),
		VotesFormat:      c.String("votes-format"),
		NumClasses:       c.Int("num-classes"),
		Mechanism:        c.String("mechanism"),
		Epsilon:          c.Float64("epsilon"),
		Delta:            c.Float64("delta"),
		MaxQueries:       c.Int64("max-queries"),
		PublicRows:       rows,
		Params:           mechanismParams(c),
		AnsweredFraction: c.Float64("answered-fraction"),
		SigmaRatio:       c.Float64("sigma-ratio"),
		VotesName:        inputName(c.String("votes")),
		PublicName:       inputName(c.String("public")),
		Seed:             seed,
		BatchSize:        c.Int("batch-size"),
		Version:          version,
	}
	if c.IsSet("keep") && len(cfg.Keep) == 0 {
		cfg.Keep = []string{}
	}
	return cfg
}
