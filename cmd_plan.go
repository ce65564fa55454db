package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

func planCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "the smallest noise for a budget, or how many queries a noise level allows",
		UsageText: `pate plan --epsilon E --delta D --queries N [--mechanism M] [options]
pate plan --epsilon E --delta D --sigma S            (how many GNMax queries fit)
pate plan --epsilon E --delta D --rows N --classes C [--teachers T]
                                                     (what a default pate label run chooses)

The accounting is the one pate label uses: data-independent, a zCDP budget filter fixed before the run.

Examples:
   pate plan --epsilon 2 --delta 1e-5 --queries 1500 --mechanism gnmax
   pate plan --epsilon 2 --delta 1e-5 --queries 1500 --mechanism confident-gnmax --answered-fraction 0.4
   pate plan --epsilon 1 --delta 1e-6 --mechanism lnmax --laplace-scale 200
   pate plan --epsilon 1 --delta 1e-5 --rows 379 --classes 2`,
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "epsilon", Usage: "privacy budget ε", Required: true},
			&cli.Float64Flag{Name: "delta", Usage: "δ", Required: true},
			&cli.Int64Flag{Name: "queries", Usage: "number of queries to plan the noise for"},
			&cli.StringFlag{Name: "mechanism", Value: label.MechanismConfidentGNMax, Usage: "confident-gnmax, gnmax or lnmax"},
			&cli.StringFlag{Name: "sigma", Usage: "GNMax σ (given: count the queries that fit)"},
			&cli.StringFlag{Name: "sigma1", Usage: "Confident-GNMax σ1"},
			&cli.StringFlag{Name: "sigma2", Usage: "Confident-GNMax σ2"},
			&cli.StringFlag{Name: "laplace-scale", Usage: "LNMax scale b"},
			&cli.Float64Flag{Name: "answered-fraction", Value: label.DefaultAnsweredFraction, Usage: "Confident-GNMax: expected fraction of queries answered"},
			&cli.Float64Flag{Name: "sigma-ratio", Value: label.DefaultSigmaRatio, Usage: "Confident-GNMax: σ1 / σ2 when both are planned"},
			&cli.IntFlag{Name: "classes", Value: 2, Usage: "number of classes (enters the discrete Gaussian's accounting)"},
			&cli.Int64Flag{Name: "rows", Usage: "sensitive rows: show what a default pate label run (no --mechanism) chooses"},
			&cli.IntFlag{Name: "teachers", Value: 250, Usage: "teachers of the run (with --rows; default: 250, grown with the rows as a run grows them)"},
			&cli.IntFlag{Name: "features", Usage: "encoded features of the data (with --rows; the report's cell_histogram or choice section states them): weighs cell-histogram"},
			&cli.BoolFlag{Name: "json", Usage: "print the plan as JSON"},
		},
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runPlan(c, e)
		},
	}
}

type planResult struct {
	Mechanism string                `json:"mechanism"`
	Epsilon   float64               `json:"epsilon"`
	Delta     float64               `json:"delta"`
	Queries   int64                 `json:"queries"`
	Fraction  float64               `json:"answered_fraction,omitempty"`
	Params    label.MechanismParams `json:"parameters"`
	Rho       float64               `json:"rho"`
	Spent     float64               `json:"epsilon_spent"`
	Budget    float64               `json:"rho_budget"`
	Choice    *planChoice           `json:"choice,omitempty"`
}

// planChoice is what a default run's chooser would do with --rows rows
// (the noisy count taken as exact).
type planChoice struct {
	Rule          string  `json:"rule"`
	CountSigma    float64 `json:"count_sigma"`
	Rows          int64   `json:"rows"`
	Teachers      int     `json:"teachers"`
	Classes       int     `json:"classes"`
	Features      int     `json:"features,omitempty"`
	RowsPerClass  float64 `json:"rows_per_class_and_teacher"`
	Threshold     int     `json:"threshold"`
	Chosen        string  `json:"chosen"`
	CountRhoShare float64 `json:"count_share"`
	// Candidates are the ways of labelling the rule weighed, in its
	// order of preference.
	Candidates []label.ChoiceCandidate `json:"candidates"`
}

func runPlan(c *cli.Context, e *env) error {
	eps, delta := c.Float64("epsilon"), c.Float64("delta")
	if !(eps > 0) {
		return usagef("--epsilon must be positive, got %g", eps)
	}
	if !(delta > 0 && delta < 1) {
		return usagef("--delta must be in (0, 1), got %g", delta)
	}
	kind := c.String("mechanism")
	if label.IsMechanism(kind) && !label.PlansNoise(kind) {
		return usagef("--mechanism %s: pate plan plans the noise of %s; pate label plans %s from --epsilon itself and its report states the plan",
			kind, andList(label.AnalyzableMechanisms()), kind)
	}
	frac := c.Float64("answered-fraction")
	if !(frac > 0 && frac <= 1) {
		return usagef("--answered-fraction must be in (0, 1], got %g", frac)
	}
	if !label.ChecksThreshold(kind) {
		frac = 1
	}
	p := label.MechanismParams{Sigma: c.String("sigma"), Sigma1: c.String("sigma1"), Sigma2: c.String("sigma2"), LaplaceScale: c.String("laplace-scale")}
	given := label.NoiseGiven(kind, p)
	classes := c.Int("classes")
	if classes < 2 {
		return usagef("--classes must be at least 2")
	}
	n := c.Int64("queries")
	var choice *planChoice
	if c.IsSet("rows") {
		rows, teachers := c.Int64("rows"), c.Int("teachers")
		if rows < 0 || teachers < 1 {
			return usagef("--rows must be ≥ 0 and --teachers ≥ 1")
		}
		features := c.Int("features")
		if features < 0 {
			return usagef("--features must be ≥ 0")
		}
		if !c.IsSet("teachers") { // as a run that leaves them to pate grows them (the rows as n̂)
			teachers = label.TeachersFor(rows, classes, eps, teachers)
		}
		sigma, mech, r, cands, err := label.PlanChoice(eps, delta, rows, teachers, classes, features)
		if err != nil {
			return err
		}
		choice = &planChoice{Rule: label.ChoiceRule, CountSigma: sigma, Rows: rows, Teachers: teachers, Classes: classes, Features: features,
			RowsPerClass: r, Threshold: label.ChooseRowsPerClass, Chosen: mech, CountRhoShare: label.DPLogRegCountShare,
			Candidates: cands}
		if n <= 0 && p == (label.MechanismParams{}) {
			return printChoice(c, e, eps, delta, choice)
		}
	}
	if err := label.CompleteParams(kind, eps, delta, &p); err != nil {
		return err
	}
	var err error
	switch {
	case given:
		if n, err = label.QueriesThatFit(kind, classes, eps, delta, p, frac); err != nil {
			return err
		}
	case n > 0:
		if p, err = label.Plan(kind, eps, delta, n, p, frac, c.Float64("sigma-ratio")); err != nil {
			return err
		}
	default:
		return usagef("give --queries (to plan the noise) or the noise (to count the queries that fit)")
	}
	rho, err := label.PlannedRho(kind, classes, n, p, frac)
	if err != nil {
		return err
	}
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return usagef("%v", err)
	}
	res := planResult{Mechanism: kind, Epsilon: eps, Delta: delta, Queries: n, Params: p, Rho: rho,
		Spent: rdp.RoundUp(rdp.ZCDPEps(rho, delta), 6), Budget: f.Budget()}
	if label.ChecksThreshold(kind) {
		res.Fraction = frac
	}
	res.Choice = choice
	if c.Bool("json") {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	w := e.stdout
	fmt.Fprintf(w, "budget:      ε = %g, δ = %g  (zCDP filter budget ρ = %.6g)\n", eps, delta, f.Budget())
	fmt.Fprintf(w, "mechanism:   %s, %s", kind, label.DescribeNoise(kind, p))
	if label.ChecksThreshold(kind) {
		fmt.Fprintf(w, " (planned for %.0f%% of queries answered)", 100*frac)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "queries:     %d\n", n)
	fmt.Fprintf(w, "spend:       ρ = %.6g, ε = %g at δ = %g (data-independent, improved conversion)\n", rho, res.Spent, delta)
	if choice != nil {
		writeChoice(w, choice)
	}
	return nil
}

// printChoice prints only the choice of a default run (pate plan --rows
// without queries or noise).
func printChoice(c *cli.Context, e *env, eps, delta float64, ch *planChoice) error {
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return usagef("%v", err)
	}
	if c.Bool("json") {
		b, _ := json.MarshalIndent(struct {
			Epsilon float64     `json:"epsilon"`
			Delta   float64     `json:"delta"`
			Budget  float64     `json:"rho_budget"`
			Choice  *planChoice `json:"choice"`
		}{eps, delta, f.Budget(), ch}, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	fmt.Fprintf(e.stdout, "budget:      ε = %g, δ = %g  (zCDP filter budget ρ = %.6g)\n", eps, delta, f.Budget())
	writeChoice(e.stdout, ch)
	return nil
}

func writeChoice(w io.Writer, ch *planChoice) {
	fmt.Fprintf(w, "choice:      %s\n", ch.Rule)
	fmt.Fprintf(w, "             noisy row count σ = %g (%.0f%% of ρ; a run with no --mechanism, classes declared or discovered)\n", ch.CountSigma, 100*ch.CountRhoShare)
	fmt.Fprintf(w, "             %d rows / (%d teachers · %d classes) = %.3g → %s\n", ch.Rows, ch.Teachers, ch.Classes, ch.RowsPerClass, ch.Chosen)
	for _, c := range ch.Candidates {
		mark, name := "no ", c.Mechanism
		if c.Eligible {
			mark = "yes"
		}
		if c.Student != "" {
			name += " + " + c.Student + " student"
		}
		fmt.Fprintf(w, "  candidate  %s %s: %s\n", mark, name, c.Why)
	}
	fmt.Fprintln(w, "             the first eligible candidate runs; the choice costs the count alone (no candidate is trained to compare)")
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
