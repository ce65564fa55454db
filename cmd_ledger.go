package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/label/ledger"
)

func ledgerCommand(e *env, jsonErrors *bool) *cli.Command {
	show := &cli.Command{
		Name:  "show",
		Usage: "list the datasets of the ledger, their runs and their composed totals",
		UsageText: `pate ledger show [--dataset NAME] [--json] [--ledger DIR]

The ledger directory is --ledger, else $PATE_LEDGER, else $XDG_DATA_HOME/pate/ledger,
else ~/.local/share/pate/ledger. A run without an end entry (crashed, killed, failed or
still running) is charged its maximum spend and its whole δ. A dataset is a name given
with --dataset (every run under the name composes, whatever rows it read) or, without
one, one exact multiset of rows (a near copy is another dataset). The total of a dataset
is the composition of all its runs, whatever their label columns: the smaller of their
zCDP ρ (and RDP curves) converted at the summed δ less the runs' failure δs, and basic
composition (the sum of each run's ε at its own δ), and never less than one run alone.
So n runs at ε each total about √n·ε, at n times their δ. Runs that protect different
privacy units (--privacy-unit) are composed apart: such a dataset has one total per unit.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ledger", Usage: "ledger directory"},
			&cli.StringFlag{Name: "dataset", Usage: "show only the dataset of this name (as given to pate label --dataset)"},
			&cli.BoolFlag{Name: "json", Usage: "print the ledger as JSON"},
		},
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runLedgerShow(c, e)
		},
	}
	show.OnUsageError = suggestFlagOnError(show)
	cmd := &cli.Command{
		Name:        "ledger",
		Usage:       "the privacy ledger: every run's spend per sensitive dataset",
		Subcommands: []*cli.Command{show},
	}
	return cmd
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
	if name := c.String("dataset"); c.IsSet("dataset") {
		if ds, err = namedDataset(l, ds, name); err != nil {
			return err
		}
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
	printLedger(e.stdout, dir, ds)
	return nil
}

// namedDataset is the dataset of ds named name: by the name its runs
// recorded or, for runs recorded before names were, by its file's key.
func namedDataset(l *ledger.Ledger, ds []*ledger.Dataset, name string) ([]*ledger.Dataset, error) {
	if name == "" {
		return nil, usagef("--dataset: give a name")
	}
	key, err := l.Key(ledger.NamedID(name))
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.Dir(), err)
	}
	for _, d := range ds {
		if d.Name == name || d.ID == key {
			return []*ledger.Dataset{d}, nil
		}
	}
	return nil, usagef("ledger %s: no dataset named %q (pate ledger show lists them)", l.Dir(), name)
}

// printLedger writes the ledger for a person: each dataset by its name (or
// as unnamed, by the start of its key), its total and what the total is
// valid for, then its runs.
func printLedger(w io.Writer, dir string, ds []*ledger.Dataset) {
	fmt.Fprintf(w, "ledger %s: %d dataset(s)\n", dir, len(ds))
	for _, d := range ds {
		title := fmt.Sprintf("unnamed dataset %s… (its rows exactly: a near copy is another dataset)", d.ID[:12])
		switch {
		case d.Name != "":
			title = fmt.Sprintf("dataset %q", d.Name)
		case d.Named:
			title = fmt.Sprintf("named dataset %s… (named before names were recorded)", d.ID[:12])
		}
		fmt.Fprintf(w, "\n%s  labels %v  %d run(s)\n", title, d.Labels, len(d.Runs))
		if len(d.Units) > 1 {
			fmt.Fprintf(w, "  runs of %d privacy units: no one total; each unit's runs composed apart\n", len(d.Units))
			for _, u := range d.Units {
				fmt.Fprintf(w, "  unit %s: %d run(s), total ε = %s at δ = %.3g (ρ = %s%s)\n", ledger.UnitName(u.PrivacyUnit), u.Runs, fnum(u.Epsilon), u.Delta, fnum(u.Rho), ordersNote(u.MaxOrder))
			}
		} else {
			unit := ""
			if len(d.Runs) > 0 {
				unit = d.Runs[0].PrivacyUnit
			}
			fmt.Fprintf(w, "  total ε = %s at δ = %.3g for %s (ρ = %s%s; δ is the sum of the runs' δs, of it %.3g failure δ)\n",
				fnum(d.Epsilon), d.Delta, ledger.UnitName(unit), fnum(d.Rho), ordersNote(d.MaxOrder), d.FailureDelta)
		}
		for _, r := range d.Runs {
			state := fmt.Sprintf("ended, charged ρ = %s", fnum(r.Charged))
			if math.IsInf(r.Rho, 1) && r.Epsilon > 0 {
				state = fmt.Sprintf("ended, charged its ε = %g (no zCDP reading)", r.Epsilon)
			}
			if !r.Finished {
				state = "NO END ENTRY (crashed, failed or running): charged its maximum"
			}
			if r.Seeded {
				state += ", seeded"
			}
			if r.PrivacyUnit != "" {
				state += ", unit " + r.PrivacyUnit
			}
			fmt.Fprintf(w, "  %s  run %s  %s  labels %v  budget ε = %g δ = %g  max ρ = %s  %s\n",
				r.Started.Format("2006-01-02 15:04:05Z"), r.Run[:8], r.Mechanism, r.Labels, r.Epsilon, r.Delta, fnum(r.MaxRho), state)
		}
	}
	if len(ds) > 0 {
		fmt.Fprintf(w, "\nHow totals compose: %s.\n", ledger.HowTotalsCompose)
	}
}

func fnum(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.6g", v)
}

// ordersNote says on which Rényi orders a total's ρ holds, when not all.
func ordersNote(maxOrder int) string {
	if maxOrder == 0 {
		return ""
	}
	return fmt.Sprintf(" (on the Rényi orders 2..%d only, where it was converted)", maxOrder)
}
