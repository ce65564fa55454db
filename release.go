package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	pateio "github.com/pate-tool/pate/io"
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
func releaseRun(c *cli.Context, e *env, lr *ledgerRun, lab *label.Labeler, out string, format pateio.WriteFormat,
	run func(context.Context, label.RecordWriter) (*label.Report, error)) error {
	cfg := lab.Config()
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	gate := ledger.StartGate(func() (*ledger.Run, error) { return lr.begin(lab, cfg) }, cancel)

	meta := label.OutputMetadata(cfg)
	w, err := pateio.Create(out, arrow.NewSchema(lab.OutputSchema().Fields(), &meta), pateio.WriteOptions{
		Format: format, Zstd: c.Bool("zstd"), Allocator: memory.DefaultAllocator, Stdout: e.stdout,
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
	rep, err := run(ctx, cw)
	entry, lerr := gate.Wait()
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
		if entry != nil {
			if c.Context.Err() != nil && (out != "-" || cw.Rows == 0) {
				if lerr := entry.End(0); lerr != nil {
					return errors.Join(err, fmt.Errorf("--ledger: %w", lerr))
				}
				sayRecorded(c, e, entry, "interrupted before releasing anything: charged nothing")
			} else {
				sayRecorded(c, e, entry, "the run failed: charged its maximum spend")
			}
		}
		return err
	}
	// The realized spend, now known.
	if entry != nil {
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
	committed, err = publish(c, e, w, rep, cfg, out)
	return err
}
