package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/urfave/cli/v2"

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
still running) is charged its maximum spend and its whole δ. A dataset is a name given
with --dataset (every run under the name composes, whatever rows it read) or, without
one, one exact multiset of rows (a near copy is another dataset). The total of a dataset
is the composition of all its runs, whatever their label columns: the smaller of their
zCDP ρ (and RDP curves) converted at the summed δ less the runs' failure δs, and basic
composition (the sum of each run's ε at its own δ). Runs that protect different privacy
units (--privacy-unit) are composed apart: such a dataset has one total per unit.`,
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
		kind := "unnamed: its rows exactly"
		if d.Named {
			kind = "named"
		}
		fmt.Fprintf(w, "\ndataset %s… (%s)  labels %v  runs %d\n", d.ID[:16], kind, d.Labels, len(d.Runs))
		if len(d.Units) > 1 {
			fmt.Fprintf(w, "  runs of %d privacy units: no one total; each unit's runs composed apart\n", len(d.Units))
			for _, u := range d.Units {
				fmt.Fprintf(w, "  unit %s: %d run(s), total ρ = %s%s  →  ε = %s at δ = %.3g\n", ledger.UnitName(u.PrivacyUnit), u.Runs, fnum(u.Rho), ordersNote(u.MaxOrder), fnum(u.Epsilon), u.Delta)
			}
		} else {
			unit := ""
			if len(d.Runs) > 0 {
				unit = d.Runs[0].PrivacyUnit
			}
			fmt.Fprintf(w, "  unit %s: total ρ = %s%s  →  ε = %s at δ = %.3g (the sum of the runs' δs; of it %.3g failure δ: discoveries, svt)\n", ledger.UnitName(unit), fnum(d.Rho), ordersNote(d.MaxOrder), fnum(d.Epsilon), d.Delta, d.FailureDelta)
		}
		for _, r := range d.Runs {
			state := fmt.Sprintf("ended, realized ρ = %s", fnum(r.Rho))
			if math.IsInf(r.Rho, 1) && r.Epsilon > 0 {
				state = fmt.Sprintf("ended, charged its ε = %g (no zCDP reading)", r.Epsilon)
			}
			if !r.Finished {
				state = "NO END ENTRY (crashed, failed or running): charged its maximum"
			}
			seeded := ""
			if r.Seeded {
				seeded = " seeded"
			}
			if r.PrivacyUnit != "" {
				seeded += " unit " + r.PrivacyUnit
			}
			fmt.Fprintf(w, "  %s  %s  %-15s labels %v  ε = %g δ = %g  max ρ = %s  charged ρ = %s  %s%s\n",
				r.Started.Format("2006-01-02 15:04:05Z"), r.Run, r.Mechanism, r.Labels, r.Epsilon, r.Delta, fnum(r.MaxRho), fnum(r.Charged), state, seeded)
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

// ordersNote says on which Rényi orders a total's ρ holds, when not all.
func ordersNote(maxOrder int) string {
	if maxOrder == 0 {
		return ""
	}
	return fmt.Sprintf(" (on the Rényi orders 2..%d only, where it was converted)", maxOrder)
}
