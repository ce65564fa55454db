// Command check scores a corpus run of .ci/utility (its -json output)
// against the acceptance lines of the default's plan, prints a table per
// set and ε and a pass/fail line for each, and exits 1 when one fails:
//
//	go run ./.ci/utility -data DIR -corpus -json run.json
//	go run ./.ci/utility/corpus/check [-base base.json] run.json [more.json ...]
//
// Several files are merged (a corpus measured in parts, or more seeds of
// the same sets: runs of a set are pooled). Every figure is the mean over
// the seeds measured. The lines:
//
//   - regret: the default is within 0.02 of its best candidate (pdef, dplr,
//     cells) in ≥ 95% of the (set, ε) cells, and never more than 0.04
//     below;
//   - monotone: on every set, the mean accuracy at 2ε ≥ at ε − 0.01 (for
//     each ε whose double was measured);
//   - majority: never below the majority rate − 0.005;
//   - minority: balanced accuracy at ε = 1 at least halfway from 1/C to the
//     GBT ceiling's, on every set whose smallest class has ≥ 5% and ≥ 300
//     of the sensitive rows;
//   - ceiling: ≥ 0.90 of the GBT ceiling at ε = 1 on every set with ≥ 5,000
//     sensitive rows, and a median ≥ 0.90 over the corpus.
//
// With -base (a run of another binary on the same sets), it also prints the
// change of the default's accuracy per cell and checks its wall time: on
// each set, ≤ 3× the base's or ≤ 5 s. A failed run labelled nothing and
// counts 0.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"sort"
	"strings"
)

type report struct {
	Binary string `json:"binary"`
	Sets   []*set `json:"sets"`
}

type set struct {
	Name          string  `json:"name"`
	SensRows      int     `json:"sensitive_rows"`
	Classes       int     `json:"classes"`
	MinorityShare float64 `json:"minority_share"`
	MinorityRows  int     `json:"minority_rows"`
	Majority      float64 `json:"majority"`
	GBT           float64 `json:"gbt_ceiling"`
	GBTBal        float64 `json:"gbt_balanced"`
	Runs          []run   `json:"runs"`
}

type run struct {
	Run  string  `json:"run"`
	Eps  float64 `json:"eps"`
	Seed int     `json:"seed"`
	Acc  float64 `json:"acc"`
	Bal  float64 `json:"balanced"`
	Secs float64 `json:"secs"`
	Plan string  `json:"plan"`
	Err  string  `json:"error"`
}

// cell is the mean of one run name on one set and ε.
type cell struct {
	acc, bal, secs float64
	n, failed      int
	plans          map[string]int
}

var candidates = []string{"pdef", "dplr", "cells"}

func main() {
	base := flag.String("base", "", "a run of another binary on the same sets: print the default's change and check its wall time")
	eps1 := flag.Float64("eps1", 1, "the ε of the minority and ceiling lines")
	minShare := flag.Float64("min-share", 0.05, "minority line: smallest class's share of the sensitive rows")
	minRows := flag.Int("min-rows", 300, "minority line: smallest class's sensitive rows")
	bigRows := flag.Int("big", 5000, "ceiling line: sensitive rows from which every set must reach 0.90")
	flag.BoolVar(&skipFailed, "skip-failed", false, "leave out the runs that failed instead of counting them 0 (to read the lines where the default ran)")
	wide := flag.Bool("wide", false, "print one line per set (the default and its best candidate at each ε) instead of one per set and ε")
	flag.Parse()
	log.SetFlags(0)
	if flag.NArg() == 0 {
		log.Fatal("usage: check [-base base.json] run.json [more.json ...]")
	}
	sets, err := load(flag.Args())
	if err != nil {
		log.Fatal(err)
	}
	var baseSets map[string]*set
	if *base != "" {
		b, err := load([]string{*base})
		if err != nil {
			log.Fatal(err)
		}
		baseSets = map[string]*set{}
		for _, s := range b {
			baseSets[s.Name] = s
		}
	}
	o := options{eps1: *eps1, minShare: *minShare, minRows: *minRows, bigRows: *bigRows, wide: *wide}
	pass := true
	for _, v := range check(os.Stdout, sets, baseSets, o) {
		w := "PASS"
		if !v.ok {
			w, pass = "FAIL", false
		}
		fmt.Printf("%s  %s\n", w, v.line)
		for _, d := range v.details {
			fmt.Printf("        %s\n", d)
		}
	}
	if !pass {
		os.Exit(1)
	}
}

// options are the thresholds of the minority and ceiling lines.
type options struct {
	eps1     float64
	minShare float64
	minRows  int
	bigRows  int
	wide     bool // one table line per set
}

// verdict is one acceptance line.
type verdict struct {
	name    string // regret, monotone, majority, minority, ceiling, time
	ok      bool
	line    string
	details []string // the cells or sets that fail it
}

// check prints the table of sets × ε to w and returns the verdicts.
func check(w io.Writer, sets []*set, baseSets map[string]*set, o options) []verdict {
	head := "| set | sens. rows | C | min. share | majority | GBT | GBT bal. | ε | default | plan | best candidate | regret | default bal. | default s |"
	rule := "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|"
	if baseSets != nil {
		head += " base default | change | base s |"
		rule += "---:|---:|---:|"
	}
	if o.wide {
		wideTable(w, sets, o.eps1)
	} else {
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, rule)
	}
	var (
		regretCells, regretOK int
		regretWorst           = math.Inf(1)
		regretFail, regretBad []string
		monoFail, majFail     []string
		minFail, ceilFail     []string
		timeFail              []string
		minChecked, bigSets   int
		fracs                 []float64
	)
	for _, s := range sets {
		cells := means(s)
		epss := epsOf(cells)
		for _, e := range epss {
			def, ok := cells[key{"default", e}]
			if !ok {
				continue
			}
			best, bestName := -1.0, ""
			for _, c := range candidates {
				if v, ok := cells[key{c, e}]; ok && v.acc > best {
					best, bestName = v.acc, c
				}
			}
			regret := ""
			if bestName != "" {
				r := def.acc - best
				regret = fmt.Sprintf("%+.3f", r)
				regretCells++
				if r >= -0.02 {
					regretOK++
				} else {
					regretFail = append(regretFail, fmt.Sprintf("%s ε=%g: default %.3f, %s %.3f (%+.3f)", s.Name, e, def.acc, bestName, best, r))
				}
				if r < -0.04 {
					regretBad = append(regretBad, fmt.Sprintf("%s ε=%g (%+.3f)", s.Name, e, r))
				}
				regretWorst = math.Min(regretWorst, r)
			}
			if def.acc < s.Majority-0.005 {
				majFail = append(majFail, fmt.Sprintf("%s ε=%g: default %.3f, majority %.3f%s", s.Name, e, def.acc, s.Majority, failNote(def)))
			}
			if d2, ok := cells[key{"default", 2 * e}]; ok && d2.acc < def.acc-0.01 {
				monoFail = append(monoFail, fmt.Sprintf("%s: %.3f at ε=%g, %.3f at ε=%g", s.Name, def.acc, e, d2.acc, 2*e))
			}
			bestStr := ""
			if bestName != "" {
				bestStr = fmt.Sprintf("%s %.3f", bestName, best)
			}
			line := fmt.Sprintf("| %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %g | %.3f | %s | %s | %s | %.3f | %.1f |",
				s.Name, s.SensRows, s.Classes, s.MinorityShare, s.Majority, s.GBT, s.GBTBal, e, def.acc, plans(def), bestStr, regret, def.bal, def.secs)
			if baseSets != nil {
				if b, ok := baseSets[s.Name]; ok {
					if bd, ok := means(b)[key{"default", e}]; ok {
						line += fmt.Sprintf(" %.3f | %+.3f | %.1f |", bd.acc, def.acc-bd.acc, bd.secs)
						if def.secs > 3*bd.secs && def.secs > 5 {
							timeFail = append(timeFail, fmt.Sprintf("%s ε=%g: %.1f s, base %.1f s", s.Name, e, def.secs, bd.secs))
						}
					} else {
						line += " | | |"
					}
				} else {
					line += " | | |"
				}
			}
			if !o.wide {
				fmt.Fprintln(w, line)
			}
		}
		if def, ok := cells[key{"default", o.eps1}]; ok {
			c := float64(s.Classes)
			if s.MinorityShare >= o.minShare && s.MinorityRows >= o.minRows && s.GBTBal > 0 {
				minChecked++
				want := 1/c + (s.GBTBal-1/c)/2
				if def.bal < want {
					minFail = append(minFail, fmt.Sprintf("%s: balanced %.3f, want ≥ %.3f (1/C %.3f, GBT %.3f)", s.Name, def.bal, want, 1/c, s.GBTBal))
				}
			}
			if s.GBT > 0 {
				f := def.acc / s.GBT
				fracs = append(fracs, f)
				if s.SensRows >= o.bigRows {
					bigSets++
					if f < 0.90 {
						ceilFail = append(ceilFail, fmt.Sprintf("%s: %.2f of the GBT ceiling (%.3f of %.3f)", s.Name, f, def.acc, s.GBT))
					}
				}
			}
		}
	}

	fmt.Fprintln(w)
	for _, s := range sets {
		var failed []string
		for _, r := range s.Runs {
			if r.Run == "default" && r.Err != "" {
				failed = append(failed, fmt.Sprintf("ε=%g seed %d", r.Eps, r.Seed))
			}
		}
		if len(failed) > 0 {
			fmt.Fprintf(w, "%s: the default failed (labelled nothing, counted 0) at %s\n", s.Name, strings.Join(failed, ", "))
		}
	}
	fmt.Fprintln(w)
	var out []verdict
	add := func(name string, ok bool, line string, details []string) {
		out = append(out, verdict{name, ok, line, details})
	}
	share := 0.0
	if regretCells > 0 {
		share = float64(regretOK) / float64(regretCells)
	}
	add("regret", regretCells > 0 && share >= 0.95 && len(regretBad) == 0,
		fmt.Sprintf("regret: default within 0.02 of its best candidate in %d of %d cells (%.1f%%, want ≥ 95%%); worst %+.3f (want ≥ −0.04)", regretOK, regretCells, 100*share, regretWorst),
		regretFail)
	add("monotone", len(monoFail) == 0, fmt.Sprintf("monotone: mean at 2ε ≥ at ε − 0.01 on every set (%d failures)", len(monoFail)), monoFail)
	add("majority", len(majFail) == 0, fmt.Sprintf("majority: default ≥ majority rate − 0.005 in every cell (%d failures)", len(majFail)), majFail)
	add("minority", len(minFail) == 0, fmt.Sprintf("minority: balanced accuracy at ε=%g halfway from 1/C to GBT's on the %d sets whose smallest class has ≥ %.0f%% and ≥ %d sensitive rows (%d failures)", o.eps1, minChecked, 100*o.minShare, o.minRows, len(minFail)), minFail)
	med := median(fracs)
	add("ceiling", len(ceilFail) == 0 && med >= 0.90,
		fmt.Sprintf("ceiling: ≥ 0.90 of GBT at ε=%g on the %d sets with ≥ %d sensitive rows (%d failures); median over %d sets %.3f (want ≥ 0.90)", o.eps1, bigSets, o.bigRows, len(ceilFail), len(fracs), med),
		ceilFail)
	if baseSets != nil {
		add("time", len(timeFail) == 0, fmt.Sprintf("wall time: default ≤ 3× the base's or ≤ 5 s (%d failures)", len(timeFail)), timeFail)
	}
	return out
}

// wideTable prints one line per set: the default and its best candidate at
// each ε ("default / best candidate"), and balanced accuracies at eps1.
func wideTable(w io.Writer, sets []*set, eps1 float64) {
	var all []float64
	for _, s := range sets {
		for _, e := range epsOf(means(s)) {
			if !containsF(all, e) {
				all = append(all, e)
			}
		}
	}
	sort.Float64s(all)
	head := "| set | sens. rows | C | min. share | majority | GBT |"
	rule := "|---|---:|---:|---:|---:|---:|"
	for _, e := range all {
		head += fmt.Sprintf(" ε=%g default / best cand. |", e)
		rule += "---|"
	}
	head += fmt.Sprintf(" bal. ε=%g default / GBT |", eps1)
	rule += "---|"
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, s := range sets {
		cells := means(s)
		line := fmt.Sprintf("| %s | %d | %d | %.3f | %.3f | %.3f |", s.Name, s.SensRows, s.Classes, s.MinorityShare, s.Majority, s.GBT)
		for _, e := range all {
			d, ok := cells[key{"default", e}]
			if !ok {
				line += " |"
				continue
			}
			best, bestName := -1.0, ""
			for _, c := range candidates {
				if v, ok := cells[key{c, e}]; ok && v.acc > best {
					best, bestName = v.acc, c
				}
			}
			f := ""
			if d.failed > 0 {
				f = "!"
			}
			line += fmt.Sprintf(" %.3f%s / %.3f %s |", d.acc, f, best, bestName)
		}
		if d, ok := cells[key{"default", eps1}]; ok {
			line += fmt.Sprintf(" %.3f / %.3f |", d.bal, s.GBTBal)
		} else {
			line += " |"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "\n(! = a run of the default failed and counts 0)")
}

func containsF(v []float64, x float64) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

type key struct {
	run string
	eps float64
}

// load reads the reports and pools the runs of sets that come more than once.
func load(paths []string) ([]*set, error) {
	byName := map[string]*set{}
	var order []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, s := range r.Sets {
			if prev, ok := byName[s.Name]; ok {
				prev.Runs = append(prev.Runs, s.Runs...)
				continue
			}
			byName[s.Name] = s
			order = append(order, s.Name)
		}
	}
	sort.Strings(order)
	out := make([]*set, len(order))
	for i, n := range order {
		out[i] = byName[n]
	}
	return out, nil
}

// skipFailed leaves failed runs out of the means.
var skipFailed bool

func means(s *set) map[key]*cell {
	m := map[key]*cell{}
	for _, r := range s.Runs {
		if skipFailed && r.Err != "" {
			continue
		}
		k := key{r.Run, r.Eps}
		c := m[k]
		if c == nil {
			c = &cell{plans: map[string]int{}}
			m[k] = c
		}
		c.acc += r.Acc
		c.bal += r.Bal
		c.secs += r.Secs
		c.n++
		if r.Err != "" {
			c.failed++
			c.plans["failed"]++
		} else {
			c.plans[r.Plan]++
		}
	}
	for _, c := range m {
		c.acc /= float64(c.n)
		c.bal /= float64(c.n)
		c.secs /= float64(c.n)
	}
	return m
}

func epsOf(m map[key]*cell) []float64 {
	seen := map[float64]bool{}
	var out []float64
	for k := range m {
		if !seen[k.eps] {
			seen[k.eps] = true
			out = append(out, k.eps)
		}
	}
	sort.Float64s(out)
	return out
}

func plans(c *cell) string {
	var ps []string
	for p, n := range c.plans {
		if n == c.n {
			ps = append(ps, p)
		} else {
			ps = append(ps, fmt.Sprintf("%s×%d", p, n))
		}
	}
	sort.Strings(ps)
	return strings.Join(ps, " ")
}

func failNote(c *cell) string {
	if c.failed > 0 {
		return fmt.Sprintf(" (%d of %d runs failed)", c.failed, c.n)
	}
	return ""
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
