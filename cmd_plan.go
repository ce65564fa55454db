package main

import (
	"encoding/json"
	"fmt"

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
pate plan --epsilon E --delta D --rows N --classes C [--teachers T] [--encoded-features F]
pate plan --epsilon E --delta D --private F --label COL --public F --classes C [--teachers T]
                                                     (what a default pate label run chooses)

The accounting is the one pate label uses: data-independent, a zCDP budget filter fixed before the run.

Examples:
   pate plan --epsilon 2 --delta 1e-5 --queries 1500 --mechanism gnmax
   pate plan --epsilon 2 --delta 1e-5 --queries 1500 --mechanism confident-gnmax --answered-fraction 0.4
   pate plan --epsilon 1 --delta 1e-6 --mechanism lnmax --laplace-scale 200
   pate plan --epsilon 1 --delta 1e-5 --rows 379 --classes 2
   pate plan --epsilon 1 --delta 1e-5 --private testdata/adult_train.parquet --label income \
       --public testdata/adult_public.parquet --classes 2

Given the files, plan reads the feature columns and encodes them as pate label does (the
encoder fitted on the public rows; of the sensitive file only its schema and, without --rows,
its row count, which it shows: not private). The run decides on a noisy count of the rows.`,
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
			&cli.IntFlag{Name: "classes", Value: 2, Usage: "number of classes, a count (enters the discrete Gaussian's accounting and the choice)"},
			&cli.Int64Flag{Name: "rows", Usage: "sensitive rows: show what a default pate label run (no --mechanism) chooses"},
			&cli.IntFlag{Name: "teachers", Value: 250, Usage: "teachers of the run (with --rows or the files; default: 250, grown with the rows as a run grows them)"},
			&cli.IntFlag{Name: "encoded-features", Usage: "with --rows and no files: the number of features after encoding (a numeric column is one, a categorical one a column per kept category; the report's choice section states it), which weighs cell-histogram (default: 0, no cells)"},
			&cli.StringFlag{Name: "private", Usage: "the sensitive file, as pate label takes it: plan uses its schema and, without --rows, its row count (a CSV's rows are counted); no value is shown"},
			&cli.StringFlag{Name: "public", Usage: "the public file, as pate label takes it: the encoder is fitted on its rows"},
			&cli.StringFlag{Name: "label", Usage: "with the files: the label column"},
			&cli.StringSliceFlag{Name: "features", Usage: "with the files: feature columns, as pate label takes them"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "with the files: leave this column out of the default feature set"},
			&cli.StringFlag{Name: "privacy-unit", Usage: "with the files: the privacy unit column (never a feature)"},
			&cli.IntFlag{Name: "one-hot-features", Usage: "with --rows and no files: how many of --encoded-features are one-hot columns of string features (the report's choice section states them): weighs cell-histogram"},
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
	if c.IsSet("rows") || c.IsSet("public") || c.IsSet("private") {
		rows, features, oneHot, err := planInputs(c, e)
		if err != nil {
			return err
		}
		teachers := c.Int("teachers")
		if !c.IsSet("teachers") { // as a run that leaves them to pate grows them (the rows as n̂)
			teachers = label.TeachersFor(rows, classes, eps, teachers)
		}
		sigma, mech, r, cands, err := label.PlanChoice(eps, delta, rows, teachers, classes, features, oneHot)
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
	spent, _ := rdp.ZCDPEpsWithin(rho, delta, float64(p.MaxOrder)) // on the orders the charge holds at
	res := planResult{Mechanism: kind, Epsilon: eps, Delta: delta, Queries: n, Params: p, Rho: rho,
		Spent: rdp.RoundUp(spent, 6), Budget: f.Budget()}
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
