package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

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
still running) is charged its maximum spend.`,
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

func ledgerDir(c *cli.Context) (string, error) {
	if d := c.String("ledger"); d != "" {
		return d, nil
	}
	return ledger.DefaultDir()
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
		fmt.Fprintf(w, "  total ρ = %s  →  ε = %s at δ = %g (discoveries used δ %.3g)\n", fnum(d.Rho), fnum(d.Epsilon), d.Delta, d.DiscoveryDelta)
		for _, r := range d.Runs {
			state := fmt.Sprintf("ended, realized ρ = %s", fnum(r.Rho))
			if !r.Finished {
				state = "NO END ENTRY (crashed, failed or running): charged its maximum"
			}
			seeded := ""
			if r.Seeded {
				seeded = " seeded"
			}
			fmt.Fprintf(w, "  %s  %s  %-15s ε = %g δ = %g  max ρ = %s  charged ρ = %s  %s%s\n",
				r.Started.Format("2006-01-02 15:04:05Z"), r.Run, r.Mechanism, r.Epsilon, r.Delta, fnum(r.MaxRho), fnum(r.Charged), state, seeded)
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

// ledgerRun is the write-ahead ledger of one pate label run.
type ledgerRun struct {
	l *ledger.Ledger
	// dataset waits for the DatasetID of the sensitive data, hashed in the
	// background while the run reads and trains: only the begin entry,
	// before the first output, needs it.
	dataset func() (string, error)
}

// openLedgerForLabel identifies the sensitive data for the ledger (unless
// --no-ledger): it hashes the --private file, or reads standard input into
// memory and hashes it (returning a reader that replays it).
func openLedgerForLabel(c *cli.Context, e *env) (*ledgerRun, io.Reader, error) {
	stdin := e.stdin
	if c.Bool("no-ledger") {
		if c.IsSet("lifetime-epsilon") {
			return nil, stdin, usagef("--lifetime-epsilon needs the ledger: drop --no-ledger")
		}
		return nil, stdin, nil
	}
	if c.IsSet("lifetime-epsilon") && !(c.Float64("lifetime-epsilon") > 0) {
		return nil, stdin, usagef("--lifetime-epsilon must be positive, got %g", c.Float64("lifetime-epsilon"))
	}
	dir, err := ledgerDir(c)
	if err != nil {
		return nil, stdin, err
	}
	var src io.ReadCloser
	if p := c.String("private"); p == "-" {
		// Standard input cannot be read twice: keep it in memory to hash it
		// and then label from it.
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return nil, stdin, fmt.Errorf("--private -: %w", err)
		}
		src, stdin = io.NopCloser(bytes.NewReader(b)), bytes.NewReader(b)
	} else {
		f, err := os.Open(p)
		if err != nil {
			return nil, stdin, fmt.Errorf("--private: %w", err)
		}
		src = f
	}
	l, err := ledger.Open(dir)
	if err != nil {
		src.Close()
		return nil, stdin, fmt.Errorf("--ledger %s: %w", dir, err)
	}
	var (
		id      string
		hashErr error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer src.Close()
		id, hashErr = ledger.DatasetID(src, []string{c.String("label")})
	}()
	dataset := func() (string, error) {
		<-done
		return id, hashErr
	}
	return &ledgerRun{l: l, dataset: dataset}, stdin, nil
}

// ledgerGate writes the ledger's begin entry in the background, as soon as
// the sensitive data are hashed, while the run reads and trains. Nothing
// leaves the process before it is written: a file output only at its final
// rename, after the run; a stream only through the writer, whose first
// Write waits for the gate. A refusal (--lifetime-epsilon) cancels the run.
type ledgerGate struct {
	done  chan struct{}
	entry *ledger.Run
	err   error
}

// startLedgerGate begins the entry in the background and calls cancel if
// that fails.
func startLedgerGate(begin func() (*ledger.Run, error), cancel func()) *ledgerGate {
	g := &ledgerGate{done: make(chan struct{})}
	go func() {
		defer close(g.done)
		if g.entry, g.err = begin(); g.err != nil {
			cancel()
		}
	}()
	return g
}

// wait returns the begin entry (nil without a ledger) once it is written.
func (g *ledgerGate) wait() (*ledger.Run, error) {
	<-g.done
	return g.entry, g.err
}

// begin records the run's maximum spend before it starts (write-ahead),
// refusing it when it would take the dataset past --lifetime-epsilon.
func (lr *ledgerRun) begin(c *cli.Context, lab *label.Labeler, cfg label.Config) (*ledger.Run, error) {
	if lr == nil {
		return nil, nil
	}
	dataset, err := lr.dataset()
	if err != nil {
		return nil, err
	}
	maxRho, err := lab.MaxRho()
	if err != nil {
		maxRho = math.Inf(1) // unbounded: charged in full until the run ends
	}
	run, err := lr.l.Begin(ledger.BeginRequest{
		Dataset: dataset, Labels: cfg.Labels, Mechanism: cfg.Mechanism,
		MaxRho: maxRho, Delta: cfg.Delta, DiscoveryDelta: label.DiscoveryDelta(cfg.Delta, cfg.Classes != nil),
		Epsilon: cfg.Epsilon, Seeded: cfg.Seed != nil || cfg.Replicable != nil,
	}, c.Float64("lifetime-epsilon"))
	if errors.Is(err, ledger.ErrLifetimeExceeded) {
		return nil, fmt.Errorf("%w: %w", label.ErrBudgetRefused, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--ledger %s: %w", lr.l.Dir(), err)
	}
	return run, nil
}
