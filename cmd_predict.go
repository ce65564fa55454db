package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/predict"
)

func predictCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "predict",
		Usage: "label public data with a labeler saved by pate label --save-labeler (no sensitive input, no privacy cost)",
		UsageText: `pate predict --labeler F --public F -o F|- [options]

Applying a saved labeler is post-processing of the run that saved it: it reads no sensitive
data, spends no budget and writes nothing to the ledger. Its output has the columns of pate label's
(pate_source = student, or the DP model's mechanism) and carries the saving run's report, plus the
labeler's hash (pate.labeler), so that every output says under which guarantee it was made.

Examples:
   pate label --private testdata/adult_train.parquet --label income --public testdata/adult_public.parquet \
       --epsilon 2 --delta 1e-5 --student logreg --save-labeler adult.labeler -o labeled.arrow
   pate predict --labeler adult.labeler --public shard-00017.parquet -o shard-00017.arrow`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "labeler", Usage: "labeler file written by pate label --save-labeler", Required: true},
			&cli.StringFlag{Name: "public", Usage: "public data to label (Parquet, Arrow IPC, CSV; - for stdin)", Required: true},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: outputUsage, Required: true},
			&cli.StringSliceFlag{Name: "keep", Usage: "public columns copied to the output (default: all)"},
			&cli.IntFlag{Name: "batch-size", Value: 16384, Usage: "rows per record batch"},
			&cli.IntFlag{Name: "workers", Usage: "goroutines labelling batches side by side (default: the number of CPUs)"},
			&cli.StringFlag{Name: "format", Usage: formatUsage},
			&cli.BoolFlag{Name: "zstd", Usage: "compress the output with zstd"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on success"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON summary (and errors) instead"},
		},
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runPredict(c, e)
		},
	}
}

func runPredict(c *cli.Context, e *env) error {
	if c.Int("batch-size") <= 0 {
		return usagef("--batch-size must be positive, got %d", c.Int("batch-size"))
	}
	if c.Int("workers") < 0 {
		return usagef("--workers must not be negative, got %d", c.Int("workers"))
	}
	format, _, err := outputFlags(c, e.stdout)
	if err != nil {
		return err
	}
	// The labeler first: a bad one leaves no output behind.
	lab, err := predict.Load(c.String("labeler"))
	if err != nil {
		return fmt.Errorf("--labeler: %w", err)
	}
	mem := memory.DefaultAllocator
	pub, err := arrowio.Open(c.String("public"), arrowio.ReadOptions{BatchSize: c.Int("batch-size"), Allocator: mem, Stdin: e.stdin})
	if err != nil {
		return fmt.Errorf("--public: %w", err)
	}
	defer pub.Close()
	warnSkipped(e, c.Bool("quiet") || c.Bool("json"), "public", pub)
	plan, err := lab.Plan(pub.Schema(), keepFlag(c))
	if err != nil {
		return fmt.Errorf("%w: --public %s: %v", label.ErrInvalidInput, inputName(c.String("public")), err)
	}
	out := c.String("output")
	md := lab.OutputMetadata()
	w, err := arrowio.Create(out, arrow.NewSchema(plan.OutputSchema().Fields(), &md), arrowio.WriteOptions{
		Format: format, Zstd: c.Bool("zstd"), Allocator: mem, Stdout: e.stdout,
	})
	if err != nil {
		return fmt.Errorf("-o %s: %w", out, err)
	}
	rows, err := predict.Run(c.Context, plan, pub, w, c.Int("workers"), mem)
	if err != nil {
		w.Abort()
		return err
	}
	if err := w.Commit(nil); err != nil {
		return fmt.Errorf("-o %s: %w", out, err)
	}
	switch {
	case c.Bool("json"):
		dst := e.stdout
		if out == "-" {
			dst = e.stderr
		}
		b, _ := json.Marshal(map[string]any{"rows": rows, "labeler": lab.Hash(), "source": lab.Source(), "output": out})
		fmt.Fprintln(dst, string(b))
	case !c.Bool("quiet"):
		g := lab.Manifest().Output
		fmt.Fprintf(e.stderr, "pate: labelled %d rows with labeler %s (%s %s; made under ε = %s, δ = %s by %s): no privacy cost\n",
			rows, lab.Hash()[:16], lab.Source(), lab.Manifest().Model.Learner, g["pate.epsilon"], g["pate.delta"], g["pate.mechanism"])
		if out != "-" {
			fmt.Fprintf(e.stderr, "pate: wrote %s\n", out)
		}
	}
	return nil
}

// keepFlag reads --keep: nil when not given.
func keepFlag(c *cli.Context) []string {
	if !c.IsSet("keep") {
		return nil
	}
	k := splitList(c.StringSlice("keep"))
	if k == nil {
		k = []string{}
	}
	return k
}

// saveLabelerFlag checks --save-labeler before a run: it needs a student
// (the model that labels rows after the private phase; runLabel checks the
// planned one), one label column, and a folder to write to.
func saveLabelerFlag(c *cli.Context) error {
	p := c.String("save-labeler")
	if p == "" {
		return nil
	}
	if c.Bool("teachers-only") {
		return usagef("--save-labeler needs a student (the model that labels rows after the private queries): drop --teachers-only")
	}
	if len(c.StringSlice("label")) > 1 {
		return usagef("--save-labeler saves the labeler of one label column")
	}
	if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
		return usagef("--save-labeler %s: its folder does not exist", p)
	}
	return nil
}

// saveLabeler writes the labeler a finished run trained, with the run's
// output metadata and report.
func saveLabeler(c *cli.Context, e *env, lab *label.Labeler, rep *label.Report) error {
	p := c.String("save-labeler")
	if p == "" {
		return nil
	}
	tr := lab.Trained()
	if tr == nil {
		return fmt.Errorf("--save-labeler %s: the run trained no student (no query was answered): nothing to save", p)
	}
	cfg := lab.Config()
	md := map[string]string{}
	base := label.OutputMetadata(cfg)
	for i, k := range base.Keys() {
		md[k] = base.Values()[i]
	}
	for k, v := range label.FinalMetadata(cfg, rep) {
		md[k] = v
	}
	sl, err := predict.New(tr, md, predict.Dataset{Name: c.String("dataset"), Private: cfg.SensitiveName, Public: cfg.PublicName}, version)
	if err != nil {
		return fmt.Errorf("--save-labeler %s: %w", p, err)
	}
	if err := sl.Save(p); err != nil {
		return fmt.Errorf("--save-labeler %s: %w", p, err)
	}
	if !c.Bool("quiet") && !c.Bool("json") {
		fmt.Fprintf(e.stderr, "pate: saved the labeler %s (sha256 %s): pate predict --labeler %s applies it\n", p, sl.Hash(), p)
	}
	return nil
}
