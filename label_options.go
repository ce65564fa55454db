package main

// pate label's flags turned into a label.Config: the checks, the
// configuration and the default plan's part of it.

import (
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/learners"
)

// reportedArgs is the command line as a report records it: the program's
// base name, and a seed's value left out (anyone who knows it can subtract
// the noise).
func reportedArgs(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	out := append([]string{filepath.Base(args[0])}, args[1:]...)
	for i := 1; i < len(out); i++ {
		name := strings.TrimLeft(out[i], "-")
		switch {
		case out[i] == "--":
			return out
		case !strings.HasPrefix(out[i], "-"):
		case name == "seed" && i+1 < len(out):
			out[i+1] = "(secret)"
			i++
		case strings.HasPrefix(name, "seed="):
			out[i] = out[i][:len(out[i])-len(name)] + "seed=(secret)"
		}
	}
	return out
}

// labelFlags checks pate label's flags.
func labelFlags(c *cli.Context, stdout io.Writer) (labelOptions, error) {
	var o labelOptions
	if eps := c.Float64("epsilon"); c.IsSet("epsilon") && !(eps > 0 && eps <= math.MaxFloat64) {
		return o, usagef("--epsilon must be a positive finite number, got %g", eps)
	}
	if d := c.Float64("delta"); !(d > 0 && d < 1) {
		return o, usagef("--delta must be in (0, 1), got %g", d)
	}
	if c.Int("batch-size") <= 0 {
		return o, usagef("--batch-size must be positive, got %d", c.Int("batch-size"))
	}
	if c.Bool("teachers-only") {
		if c.IsSet("student") || c.Bool("self-train") || c.String("select") == label.SelectUncertain {
			return o, usagef("--teachers-only labels without a student: drop --student, --self-train and --select uncertain")
		}
	}
	if c.IsSet("neighbors") && c.Int("neighbors") < 1 {
		return o, usagef("--neighbors must be at least 1, got %d", c.Int("neighbors"))
	}
	if c.Int("teachers") <= 0 {
		return o, usagef("--teachers must be at least 1, got %d", c.Int("teachers"))
	}
	if c.String("private") == "-" && c.String("public") == "-" {
		return o, usagef("--private and --public cannot both read stdin")
	}
	o.out, o.batch, o.teachers = c.String("output"), c.Int("batch-size"), c.Int("teachers")
	var err error
	if o.format, o.seed, err = outputFlags(c, stdout); err != nil {
		return o, err
	}
	for _, flag := range []string{"sigma", "sigma1", "sigma2", "laplace-scale", "em-epsilon", "subset-rate", "gamma", "svt-epsilon0", "sample-rate"} {
		if c.IsSet(flag) {
			v, err := strconv.ParseFloat(c.String(flag), 64)
			if err != nil || !(v > 0 && v <= math.MaxFloat64) {
				return o, usagef("--%s must be a positive finite number, got %q", flag, c.String(flag))
			}
		}
	}
	if o.labels = splitList(c.StringSlice("label")); len(o.labels) == 0 && !c.IsSet("teachers-from") {
		return o, usagef("--label: give the label column")
	}
	if c.IsSet("label-weights") {
		for _, w := range splitList([]string{c.String("label-weights")}) {
			v, err := strconv.ParseFloat(w, 64)
			if err != nil || !(v > 0 && v <= math.MaxFloat64) {
				return o, usagef("--label-weights: each weight must be a positive finite number, got %q", w)
			}
			o.weights = append(o.weights, v)
		}
		if len(o.weights) != len(o.labels) {
			return o, usagef("--label-weights has %d weights for %d --label columns", len(o.weights), len(o.labels))
		}
	}
	o.replicable, err = replicableFlags(c)
	return o, err
}

// labelConfig is the labelling pate label's flags ask for.
func labelConfig(c *cli.Context, o labelOptions, publicRows int64) label.Config {
	cfg := label.Config{
		Labels:           o.labels,
		LabelWeights:     o.weights,
		Classes:          nilIfEmpty(splitList(c.StringSlice("classes"))),
		Features:         nilIfEmpty(splitList(c.StringSlice("features"))),
		Exclude:          splitList(c.StringSlice("exclude")),
		Keep:             nilIfEmpty(splitList(c.StringSlice("keep"))),
		PrivacyUnit:      c.String("privacy-unit"),
		Teachers:         o.teachers,
		Learner:          c.String("learner"),
		LearnerOptions:   learners.LearnerOptions{Neighbors: c.Int("neighbors")},
		Mechanism:        c.String("mechanism"),
		Epsilon:          c.Float64("epsilon"),
		Delta:            c.Float64("delta"),
		MaxQueries:       c.Int64("max-queries"),
		PublicRows:       publicRows,
		AnsweredFraction: c.Float64("answered-fraction"),
		SigmaRatio:       c.Float64("sigma-ratio"),
		Params:           mechanismParams(c),
		Student:          c.String("student"),
		SelfTrain:        c.Bool("self-train"),
		Select:           c.String("select"),
		SensitiveName:    inputName(c.String("private")),
		PublicName:       inputName(c.String("public")),
		Seed:             o.seed,
		Replicable:       o.replicable,
		BatchSize:        o.batch,
		Version:          version,
	}
	if len(o.labels) > 0 {
		cfg.Label = o.labels[0]
	}
	if c.IsSet("keep") && len(cfg.Keep) == 0 {
		cfg.Keep = []string{}
	}
	applyPlan(c, &cfg, o.replicable != nil)
	return cfg
}

// applyPlan fills in what the command line leaves to the default plan
// (label.ChoosePlan): the student, the query selection and the number of
// queries. A flag the user gave is kept; with the teacher-only stream
// nothing is filled in.
func applyPlan(c *cli.Context, cfg *label.Config, replicable bool) {
	mech := ""
	if c.IsSet("mechanism") {
		mech = cfg.Mechanism
	}
	plan := label.ChoosePlan(label.PlanInputs{
		Epsilon: cfg.Epsilon, Delta: cfg.Delta, Teachers: cfg.Teachers,
		Classes: cfg.Classes, Features: cfg.Features, PublicRows: cfg.PublicRows,
		Labels: len(cfg.Labels), Mechanism: mech, Replicable: replicable,
		TeachersOnly: c.Bool("teachers-only"), Params: cfg.Params,
	})
	cfg.Mechanism = plan.Mechanism
	if plan.Student == "" {
		if !c.IsSet("student") && !c.IsSet("select") && !c.IsSet("max-queries") {
			cfg.Plan = plan.Why
		}
		return
	}
	planned := false
	if !c.IsSet("student") {
		cfg.Student, planned = plan.Student, true
	}
	if !c.IsSet("select") {
		cfg.Select, planned = plan.Select, true
	}
	if !c.IsSet("max-queries") {
		cfg.MaxQueries, planned = plan.MaxQueries, true
	}
	if planned {
		cfg.Plan = plan.Why
	}
	// Everything left to pate: the run may choose dp-logreg instead, by
	// a noisy count of the sensitive rows (label/choose.go), with the
	// classes declared or discovered. It needs a budget to charge.
	cfg.Choose = mech == "" && !c.IsSet("student") && !c.IsSet("select") && !c.IsSet("max-queries") &&
		!c.IsSet("self-train") && cfg.Epsilon > 0 && len(cfg.Labels) == 1 &&
		cfg.PrivacyUnit == "" && cfg.Params == (label.MechanismParams{})
	// The number of teachers too, unless given: the chooser's count grows
	// it (label/teachercount.go).
	cfg.GrowTeachers = cfg.Choose && !c.IsSet("teachers")
}
