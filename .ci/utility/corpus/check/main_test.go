package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// corpus returns one set whose default passes every line: it matches its
// best candidate, grows with ε, beats the majority, recalls the minority
// and reaches the GBT ceiling.
func corpus() []*set {
	s := &set{Name: "good", SensRows: 6000, Classes: 2, MinorityShare: 0.2, MinorityRows: 1200,
		Majority: 0.8, GBT: 0.9, GBTBal: 0.8}
	for _, e := range []float64{0.5, 1, 2, 4} {
		for seed := 1; seed <= 2; seed++ {
			s.Runs = append(s.Runs,
				run{Run: "default", Eps: e, Seed: seed, Acc: 0.88, Bal: 0.75, Secs: 1, Plan: "dp-logreg"},
				run{Run: "dplr", Eps: e, Seed: seed, Acc: 0.89, Bal: 0.75},
				run{Run: "cells", Eps: e, Seed: seed, Acc: 0.85, Bal: 0.7})
		}
	}
	return []*set{s}
}

func opts() options { return options{eps1: 1, minShare: 0.05, minRows: 300, bigRows: 5000} }

func verdicts(sets []*set, base map[string]*set) map[string]verdict {
	m := map[string]verdict{}
	for _, v := range check(io.Discard, sets, base, opts()) {
		m[v.name] = v
	}
	return m
}

// setRun changes the accuracy of a run at ε, on every seed.
func setRun(s *set, name string, eps, acc float64) {
	for i := range s.Runs {
		if s.Runs[i].Run == name && s.Runs[i].Eps == eps {
			s.Runs[i].Acc = acc
		}
	}
}

// setDefault changes the default's accuracy (and balanced accuracy when bal ≥ 0)
// at ε, on every seed.
func setDefault(s *set, eps, acc, bal float64) {
	for i := range s.Runs {
		r := &s.Runs[i]
		if r.Run == "default" && r.Eps == eps {
			r.Acc = acc
			if bal >= 0 {
				r.Bal = bal
			}
		}
	}
}

func TestCheckLines(t *testing.T) {
	for name, v := range verdicts(corpus(), nil) {
		if !v.ok {
			t.Errorf("good corpus: %s fails: %s %v", name, v.line, v.details)
		}
	}
	tests := []struct {
		name  string
		edit  func(s *set)
		fails []string
	}{
		// 0.03 below a candidate in one of four cells (75% < 95%), but
		// not by more than 0.04.
		{"regret", func(s *set) { setRun(s, "dplr", 4, 0.91) }, []string{"regret"}},
		{"regret beyond 0.04", func(s *set) { setRun(s, "cells", 4, 0.925) }, []string{"regret"}},
		// 0.88 → 0.865 between ε = 1 and 2 (regret −0.025 there too).
		{"monotone", func(s *set) { setDefault(s, 2, 0.865, -1) }, []string{"monotone", "regret"}},
		{"majority", func(s *set) { s.Majority = 0.886 }, []string{"majority"}},
		// halfway from 1/2 to 0.8 is 0.65.
		{"minority", func(s *set) { setDefault(s, 1, 0.88, 0.64) }, []string{"minority"}},
		{"minority too small to count", func(s *set) { setDefault(s, 1, 0.88, 0.64); s.MinorityRows = 299 }, nil},
		{"minority share too small to count", func(s *set) { setDefault(s, 1, 0.88, 0.64); s.MinorityShare = 0.049 }, nil},
		// 0.88 / 1.0 < 0.90 on a set of ≥ 5,000 sensitive rows.
		{"ceiling", func(s *set) { s.GBT = 1 }, []string{"ceiling"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sets := corpus()
			tc.edit(sets[0])
			got := verdicts(sets, nil)
			want := map[string]bool{}
			for _, f := range tc.fails {
				want[f] = true
			}
			for name, v := range got {
				if v.ok == want[name] {
					t.Errorf("%s: ok = %v, want %v (%s %v)", name, v.ok, !want[name], v.line, v.details)
				}
			}
		})
	}
}

// A failed run labelled nothing: it counts 0.
func TestFailedRunCountsZero(t *testing.T) {
	sets := corpus()
	s := sets[0]
	for i := range s.Runs {
		if s.Runs[i].Run == "default" && s.Runs[i].Eps == 1 && s.Runs[i].Seed == 2 {
			s.Runs[i] = run{Run: "default", Eps: 1, Seed: 2, Err: "exit status 2"}
		}
	}
	c := means(s)[key{"default", 1}]
	if c.acc != 0.44 || c.failed != 1 {
		t.Fatalf("mean %v with %d failed, want 0.44 with 1", c.acc, c.failed)
	}
	if got := verdicts(sets, nil); got["majority"].ok {
		t.Error("a failed run did not pull the default below the majority")
	}
}

func TestWallTimeAgainstBase(t *testing.T) {
	base := map[string]*set{"good": corpus()[0]}
	for _, tc := range []struct {
		secs float64
		ok   bool
	}{{3, true}, {5, true}, {5.5, false}} {
		sets := corpus()
		for i := range sets[0].Runs {
			sets[0].Runs[i].Secs = tc.secs
		}
		base["good"].Runs[0].Secs = 1
		if v := verdicts(sets, base)["time"]; v.ok != tc.ok {
			t.Errorf("%g s against 1 s: ok = %v, want %v", tc.secs, v.ok, tc.ok)
		}
	}
}

// Files of the same sets (more seeds) are pooled.
func TestLoadPools(t *testing.T) {
	dir := t.TempDir()
	a, b := corpus()[0], corpus()[0]
	for i := range b.Runs {
		b.Runs[i].Seed += 2
		if b.Runs[i].Run == "default" {
			b.Runs[i].Acc = 0.78
		}
	}
	var paths []string
	for i, s := range []*set{a, b} {
		p := filepath.Join(dir, []string{"a.json", "b.json"}[i])
		data, err := json.Marshal(report{Sets: []*set{s}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sets, err := load(paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 {
		t.Fatalf("%d sets, want 1", len(sets))
	}
	c := means(sets[0])[key{"default", 1}]
	if c.n != 4 || c.acc < 0.829 || c.acc > 0.831 {
		t.Fatalf("pooled %d runs, mean %v; want 4, 0.83", c.n, c.acc)
	}
}

// One cell in 20 more than 0.02 below (95%) passes the share, but not when
// it is more than 0.04 below.
func TestRegretShareAndWorst(t *testing.T) {
	for _, tc := range []struct {
		cand float64
		ok   bool
	}{{0.91, true}, {0.925, false}} {
		var sets []*set
		for i := 0; i < 5; i++ {
			s := corpus()[0]
			s.Name = string(rune('a' + i))
			sets = append(sets, s)
		}
		setRun(sets[0], "dplr", 4, tc.cand)
		if v := verdicts(sets, nil)["regret"]; v.ok != tc.ok {
			t.Errorf("candidate %g: ok = %v, want %v (%s)", tc.cand, v.ok, tc.ok, v.line)
		}
	}
}
