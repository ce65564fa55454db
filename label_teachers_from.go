package main

// pate label --teachers-from: the run that polls teachers trained
// elsewhere (label/beam's pate-beam-train) instead of training its own.

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
)

// runLabelTeachersFrom is pate label polling the teachers of an ensemble
// file (--teachers-from) instead of training its own: the sensitive data is
// not read here, its teachers' votes are released and charged as any
// run's. The ledger names the dataset (--dataset): its rows are not here
// to be identified by.
func runLabelTeachersFrom(c *cli.Context, e *env) error {
	path := c.String("teachers-from")
	for _, f := range []string{"private", "replicable", "diagnostics", "learner", "exclude", "label-weights"} {
		if c.IsSet(f) {
			return usagef("--%s does not go with --teachers-from: the teachers were trained elsewhere, on the sensitive data, with their own settings", f)
		}
	}
	if !c.Bool("no-ledger") && !c.IsSet("dataset") {
		return usagef("--teachers-from: name the sensitive dataset for the privacy ledger with --dataset NAME (its rows are not read here, so they cannot identify it), or give --no-ledger")
	}
	o, err := labelFlags(c, e.stdout)
	if err != nil {
		return err
	}
	if err := saveLabelerFlag(c); err != nil {
		return err
	}
	tf, err := label.LoadTeachers(path)
	if err != nil {
		return fmt.Errorf("--teachers-from: %w", err)
	}
	man := tf.Manifest()
	if c.IsSet("teachers") && o.teachers != man.Teachers {
		return usagef("--teachers %d: the file has %d teachers (their number is fixed where they were trained)", o.teachers, man.Teachers)
	}
	o.teachers = man.Teachers
	if o.labels == nil {
		o.labels = []string{man.Label}
	}
	lr, _, err := openLedgerWith(c, e, "--teachers-from", path, func() (string, error) { return "teachers:" + tf.Hash(), nil })
	if err != nil {
		return err
	}
	mem := memory.DefaultAllocator
	pub, err := arrowio.Open(c.String("public"), arrowio.ReadOptions{BatchSize: o.batch, Allocator: mem, Stdin: e.stdin, CountRows: true, SelectLater: true})
	if err != nil {
		return fmt.Errorf("--public: %w", err)
	}
	defer pub.Close()
	warnSkipped(e, c.Bool("quiet"), "public", pub)
	if pub.NumRows() == 0 {
		return fmt.Errorf("--public %s has no rows: nothing to label: %w", c.String("public"), label.ErrInvalidInput)
	}
	cfg := labelConfig(c, o, pub.NumRows())
	if cfg.Classes == nil {
		// The plan reads the class count: the file's classes are declared.
		cfg.Classes = slices.Clone(man.Classes)
		applyPlan(c, &cfg, false)
	}
	// The choice of a mechanism and of the number of teachers needs a noisy
	// count of the sensitive rows: the plan is the default's PATE one.
	cfg.Choose, cfg.GrowTeachers = false, false
	cfg.Allocator = mem
	cfg.CommandLine = reportedArgs(e.args)
	cfg.SensitiveName = "--teachers-from " + path
	if !c.Bool("quiet") {
		cfg.Warn = func(msg string) { fmt.Fprintf(e.stderr, "pate: warning: %s\n", msg) }
	}
	if c.IsSet("label-type") {
		if cfg.LabelType, _, err = declaredTypes(c, o.labels, pub.Schema()); err != nil {
			return err
		}
	}
	bar := runProgress(c, e, &cfg, lr, pub.NumRows())
	defer bar.finish()
	if c.String("save-labeler") != "" && cfg.Student == "" {
		return usagef("--save-labeler: this run trains no student (its plan labels with the teachers alone): give --student")
	}
	lab, err := label.NewFromTeachers(cfg, tf, pub.Schema())
	if err != nil {
		return err
	}
	if err := narrowPublic(lab, pub); err != nil {
		return err
	}
	var rep *label.Report
	if err := releaseRun(c, e, lr, lab, o.out, o.format, func(ctx context.Context, w label.RecordWriter) (*label.Report, error) {
		defer bar.finish()
		r, err := lab.RunTeachers(ctx, pub, w)
		rep = r
		return r, err
	}); err != nil {
		return err
	}
	return saveLabeler(c, e, lab, rep)
}

// narrowPublic has the public reader leave out the columns the run neither
// encodes nor keeps: they are not decoded at all.
func narrowPublic(lab *label.Labeler, pub *arrowio.Reader) error {
	if cols := lab.PublicColumns(); cols != nil {
		if err := pub.Select(cols); err != nil {
			return fmt.Errorf("--public: %w", err)
		}
		return lab.UsePublic(pub.Schema())
	}
	if err := pub.Select(nil); err != nil {
		return fmt.Errorf("--public: %w", err)
	}
	return nil
}
