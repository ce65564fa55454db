package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/learners"
)

// TestHelpShowsOneDefault: no flag's help line shows a default that says
// nothing ("(default: false)", "(default: 0)") or a second default beside
// the one its usage states.
func TestHelpShowsOneDefault(t *testing.T) {
	t.Parallel()
	e := &env{}
	for _, cmd := range []*cli.Command{labelCommand(e, new(bool)), predictCommand(e, new(bool)), aggregateCommand(e, new(bool)),
		replicateCommand(e, new(bool)), analyzeCommand(e, new(bool)), planCommand(e, new(bool)), auditCommand(e, new(bool))} {
		for _, f := range cmd.Flags {
			line := flagString(f)
			if strings.Contains(line, "(default: false)") || strings.Contains(line, "(default: 0)") || strings.Count(line, "(default") > 1 {
				t.Errorf("pate %s: %q", cmd.Name, line)
			}
		}
	}
}

// TestHelpNamesWhatTheCodeTakes: the learners --learner names are those
// learners.NewLearner takes, and every command that writes labels says
// that a .parquet -o writes Parquet.
func TestHelpNamesWhatTheCodeTakes(t *testing.T) {
	t.Parallel()
	for _, name := range learners.LearnerNames {
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(learnerUsage) {
			t.Errorf("--learner's help omits %s", name)
		}
	}
	e := &env{}
	for _, cmd := range []*cli.Command{labelCommand(e, new(bool)), predictCommand(e, new(bool)), aggregateCommand(e, new(bool))} {
		for _, f := range cmd.Flags {
			if f.Names()[0] == "output" && !strings.Contains(flagString(f), "Parquet") {
				t.Errorf("pate %s -o: %q does not say it writes Parquet", cmd.Name, flagString(f))
			}
		}
	}
}

// TestMechanismHelpNeedsClasses: --mechanism's help says "needs --classes"
// of exactly the mechanisms that refuse a run without --classes.
func TestMechanismHelpNeedsClasses(t *testing.T) {
	t.Parallel()
	var usage string
	for _, f := range budgetFlags() {
		if f.Names()[0] == "mechanism" {
			usage = f.(*cli.StringFlag).Usage
		}
	}
	// "name (what it is; needs --classes)": the parenthesis of each name.
	says := map[string]bool{}
	for _, m := range regexp.MustCompile(`([a-z-]+) \(([^()]*)\)`).FindAllStringSubmatch(usage, -1) {
		says[m[1]] = strings.Contains(m[2], "needs --classes")
	}
	for _, mech := range []string{label.MechanismPrivateLearner, "stable-em", "dp-logreg", "private-knn", "cell-histogram"} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			said, ok := says[mech]
			if !ok {
				t.Fatalf("--mechanism's help does not describe %s", mech)
			}
			_, _, stderr := pate(t, "label", "--no-ledger", "-q", "--private", "testdata/bad/sens.parquet", "--label", "y",
				"--public", "testdata/bad/pub.parquet", "--features", "x,z", "--teachers", "3", "--mechanism", mech,
				"--epsilon", "1", "--delta", "1e-5", "-o", t.TempDir()+"/out.arrow")
			if needs := strings.Contains(stderr, "needs --classes"); needs != said {
				t.Errorf("help says needs --classes: %v; without --classes the run says %q", said, stderr)
			}
		})
	}
}
