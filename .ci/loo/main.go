// Command loo validates the chooser's thresholds leave-one-dataset-out on
// a corpus run of the utility script: for each set, the thresholds are
// fitted on every other set (the grid point with the least summed regret,
// the rule's own constants first among equals) and the rule so fitted
// picks a candidate for the set left out; its regret is the best
// candidate's accuracy less the picked one's (means over the seeds).
//
//	go run ./.ci/utility -data DIR -corpus -json runs.json   (the corpus branch's harness)
//	go run ./.ci/loo -data DIR runs.json [more.json ...]
//
// The rule reads what a run reads: the sensitive row count (n̂ taken as
// n), the classes (declared), the encoded features of the public file
// (row identifiers left out, as the default does) and ε; it picks among
// the candidates run by name with --classes (pdef, dplr, cells). The
// thresholds: rows per class and teacher × min(ε, 1) for PATE, cells per
// encoded feature for the cells after PATE and before it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

type runFile struct {
	Delta float64 `json:"delta"`
	Sets  []struct {
		Name     string `json:"name"`
		SensRows int    `json:"sensitive_rows"`
		Classes  int    `json:"classes"`
		// EncodedFeatures, when given, stands for the public file's
		// encoding (sets split by the utility script itself).
		EncodedFeatures int `json:"encoded_features"`
		Runs            []struct {
			Run string  `json:"run"`
			Eps float64 `json:"eps"`
			Acc float64 `json:"acc"`
			Err string  `json:"error"`
		} `json:"runs"`
	} `json:"sets"`
}

// cell is one set at one ε: the rule's inputs and the candidates' mean
// accuracies.
type cell struct {
	set            string
	eps            float64
	perClass, cpf  float64
	pate, dplr, cl float64
	numeric        bool // no one-hot column in the encoding
	classes        int
	// snr is dp-logreg's rows a noise unit: n·√(2ρ)/√(parameters), the
	// quantity its own plan reads.
	snr float64
	// rpp is the rows a parameter of dp-logreg: n/((features+1)·classes).
	rpp float64
}

type rule struct {
	rows, weak, strong float64
	// numericMulti: the cells between weak and strong only for an
	// all-numeric encoding of at least numericMin classes.
	numericMulti bool
	// strongMulti: the strong cells only for at least strongMin classes.
	strongMulti bool
	// The class floors of the two conditions (0: 3, the rule's first),
	// and of the strong cells when the encoding has a one-hot column (0:
	// strongMin).
	numericMin, strongMin, strongMany int
	// lowSNR, when not 0: the cells, before everything, when dp-logreg's
	// snr is below it and the classes at least manyClasses.
	lowSNR      float64
	manyClasses int
	lowByRows   bool // lowSNR is in dp-logreg's rows a parameter, not rows a noise unit
}

func floor(v int) int {
	if v == 0 {
		return 3
	}
	return v
}

func (c cell) lowSignal(byRows bool) float64 {
	if byRows {
		return c.rpp
	}
	return c.snr
}

func (r rule) strongFloor(numeric bool) int {
	if !numeric && r.strongMany > 0 {
		return r.strongMany
	}
	return floor(r.strongMin)
}

func (r rule) pick(c cell) (string, float64) {
	switch {
	case r.lowSNR > 0 && c.lowSignal(r.lowByRows) < r.lowSNR && c.classes >= r.manyClasses:
		return "cells", c.cl
	case c.cpf >= r.strong && (!r.strongMulti || c.classes >= r.strongFloor(c.numeric)):
		return "cells", c.cl
	case c.perClass >= r.rows:
		return "PATE", c.pate
	case c.cpf >= r.weak && (!r.numericMulti || (c.numeric && c.classes >= floor(r.numericMin))):
		return "cells", c.cl
	}
	return "dp-logreg", c.dplr
}

func best(c cell) (string, float64) {
	name, v := "dp-logreg", c.dplr
	if c.cl > v {
		name, v = "cells", c.cl
	}
	if c.pate > v {
		name, v = "PATE", c.pate
	}
	return name, v
}

func main() {
	data := flag.String("data", "/tmp/pate-corpus", "corpus folder, as make.sh builds it (the public files give the encoded features)")
	teachers := flag.Int("teachers", 250, "the default plan's teachers")
	wide := flag.Bool("wide", false, "one line per set: the best candidate and both regrets at each ε")
	withLowSNR = flag.Bool("low-snr", false, "fit a condition that takes the cells first where dp-logreg's rows a noise unit are few and the classes many")
	tryLow = flag.Float64("try-low-snr", 0, "the rule's constants with the low-snr condition at this snr")
	byRows = flag.Bool("rows-a-parameter", false, "the low-signal condition reads dp-logreg's rows a parameter (ε-free) instead of its rows a noise unit; -low-snr and -try-low-snr thresholds are then in rows a parameter")
	tryMany = flag.Int("try-many", 9, "its classes, with -try-low-snr")
	fixedFloors = flag.Bool("fixed-floors", false, "fit the thresholds and the one-hot floor of the strong cells only, the other class floors fixed at 3")
	flag.Parse()
	log.SetFlags(0)
	type acc struct{ sum, n float64 }
	sums := map[string]map[float64]map[string]*acc{}
	meta := map[string][3]int{}
	delta := 1e-5
	for _, path := range flag.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			log.Fatal(err)
		}
		var f runFile
		if err := json.Unmarshal(b, &f); err != nil {
			log.Fatalf("%s: %v", path, err)
		}
		if f.Delta > 0 {
			delta = f.Delta
		}
		for _, s := range f.Sets {
			meta[s.Name] = [3]int{s.SensRows, s.Classes, s.EncodedFeatures}
			if sums[s.Name] == nil {
				sums[s.Name] = map[float64]map[string]*acc{}
			}
			for _, r := range s.Runs {
				if r.Run != "pdef" && r.Run != "dplr" && r.Run != "cells" {
					continue
				}
				m := sums[s.Name][r.Eps]
				if m == nil {
					m = map[string]*acc{}
					sums[s.Name][r.Eps] = m
				}
				if m[r.Run] == nil {
					m[r.Run] = &acc{}
				}
				m[r.Run].sum += r.Acc // a failed run labels nothing: 0
				m[r.Run].n++
			}
		}
	}
	var cells []cell
	var names []string
	for name := range sums {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		feats, numeric := meta[name][2], numericSets[name]
		if feats == 0 {
			var err error
			if feats, numeric, err = encodedFeatures(filepath.Join(*data, name+"_public.parquet")); err != nil {
				log.Fatalf("%s: %v", name, err)
			}
		}
		n, classes := meta[name][0], meta[name][1]
		var epss []float64
		for e := range sums[name] {
			epss = append(epss, e)
		}
		sort.Float64s(epss)
		for _, e := range epss {
			m := sums[name][e]
			if m["pdef"] == nil || m["dplr"] == nil || m["cells"] == nil {
				continue
			}
			cpf, err := label.ChoiceCellsPerFeature(int64(n), classes, feats, e, delta)
			if err != nil {
				log.Fatal(err)
			}
			snr := float64(n) * math.Sqrt(2*rdp.RhoForEps(e, delta)) / math.Sqrt(float64(learners.ParamCount(feats, classes)))
			rpp := float64(n) / float64(learners.ParamCount(feats, classes))
			cells = append(cells, cell{set: name, eps: e, cpf: cpf, numeric: numeric, classes: classes, snr: snr, rpp: rpp,
				perClass: float64(n) / float64(*teachers*classes) * math.Min(e, 1),
				pate:     m["pdef"].sum / m["pdef"].n, dplr: m["dplr"].sum / m["dplr"].n, cl: m["cells"].sum / m["cells"].n})
		}
	}
	inf := math.Inf(1)
	current := rule{label.ChooseRowsPerClass, label.ChooseCellsPerFeature, label.ChooseCellsStrong, true, true,
		label.ChooseCellsMinClasses, label.ChooseCellsMinClasses, label.ChooseCellsStrongManyClasses,
		label.ChooseCellsSparseRows, label.ChooseCellsMinClasses, true}
	if *tryLow > 0 {
		current.lowSNR, current.manyClasses, current.lowByRows = *tryLow, *tryMany, *byRows
	}
	grid := []rule{current}
	floors := []int{3, 4, 6, 8}
	if *fixedFloors {
		floors = []int{3}
	}
	lows := []float64{0}
	if *withLowSNR {
		lows = []float64{0, 3, 5, 7, 10}
		if *byRows {
			lows = []float64{0, 0.25, 0.5, 1, 2}
		}
	}
	for _, r := range []float64{10, 20, 30, 50, 75, 100, 200, inf} {
		for _, w := range []float64{2.5, 5, 7.5, 10, 15, 20, 30, inf} {
			for _, s := range []float64{10, 20, 30, 50, 100, inf} {
				if s >= w || s == inf {
					for _, sm := range []bool{false, true} {
						for _, fn := range floors {
							for _, fs := range floors {
								for _, many := range []int{0, 4, 6, 8} {
									for _, low := range lows {
										for _, mc := range []int{6, 9, 12} {
											if low == 0 && mc > 6 {
												continue
											}
											grid = append(grid, rule{r, w, s, false, sm, fn, fs, many, low, mc, *byRows}, rule{r, w, s, true, sm, fn, fs, many, low, mc, *byRows})
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	regret := func(r rule, skip string) float64 {
		t := 0.0
		for _, c := range cells {
			if c.set == skip {
				continue
			}
			_, b := best(c)
			_, p := r.pick(c)
			t += b - p
		}
		return t
	}
	fitted := map[string]rule{}
	for _, name := range names {
		bestR, bestT := grid[0], regret(grid[0], name)
		for _, r := range grid[1:] {
			if t := regret(r, name); t < bestT-1e-12 {
				bestR, bestT = r, t
			}
		}
		fitted[name] = bestR
	}
	if *wide {
		printWide(cells, current, fitted)
	}
	fmt.Println("| set | ε | rows a class and teacher × min(ε, 1) | cells a feature | PATE | DP-LR | cells | best | the rule picks | regret | fitted without the set (rows, cells, strong cells) | it picks | regret |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|---|---:|")
	within, worst, total := 0, 0.0, 0
	inWithin, inWorst := 0, 0.0
	for _, c := range cells {
		bn, bv := best(c)
		pn, pv := current.pick(c)
		if *wide {
			bn, pn = "", ""
		}
		f := fitted[c.set]
		ln, lv := f.pick(c)
		if !*wide {
			fmt.Printf("| %s | %g | %.3g | %.3g | %.3f | %.3f | %.3f | %s | %s | %.3f | %s | %s | %.3f |\n", c.set, c.eps, c.perClass, c.cpf,
				c.pate, c.dplr, c.cl, bn, pn, bv-pv, f, ln, bv-lv)
		}
		total++
		if bv-lv <= 0.02 {
			within++
		}
		worst = math.Max(worst, bv-lv)
		if bv-pv <= 0.02 {
			inWithin++
		}
		inWorst = math.Max(inWorst, bv-pv)
	}
	fmt.Printf("\n%d sets, %d (set, ε) cells. Fitted leave-one-dataset-out: within 0.02 of the best candidate in %d (%.0f%%), worst regret %.3f. "+
		"The rule's constants (%s): within 0.02 in %d (%.0f%%), worst %.3f.\n",
		len(names), total, within, 100*float64(within)/float64(max(total, 1)), worst, current, inWithin, 100*float64(inWithin)/float64(max(total, 1)), inWorst)
}

// numericSets are the sets of shared_readme.json whose encoding has no
// one-hot column.
var numericSets = map[string]bool{"breast_cancer": true, "digits": true, "dna": true, "vehicle": true, "vowel": true, "shuttle": true}

func (r rule) String() string {
	f := func(v float64) string {
		if math.IsInf(v, 1) {
			return "∞"
		}
		return fmt.Sprintf("%g", v)
	}
	s := f(r.rows) + ", " + f(r.weak) + ", " + f(r.strong)
	if r.numericMulti {
		s += fmt.Sprintf(", numeric ≥ %d classes", floor(r.numericMin))
	}
	if r.strongMulti {
		s += fmt.Sprintf(", strong ≥ %d classes", floor(r.strongMin))
		if r.strongMany > 0 {
			s += fmt.Sprintf(" (≥ %d with one-hot columns)", r.strongMany)
		}
	}
	if r.lowSNR > 0 {
		unit := "rows a noise unit"
		if r.lowByRows {
			unit = "rows a parameter"
		}
		s += fmt.Sprintf(", cells first below %g %s and ≥ %d classes", r.lowSNR, unit, r.manyClasses)
	}
	return s
}

var (
	fixedFloors, withLowSNR, byRows *bool
	tryLow                          *float64
	tryMany                         *int
)

// encodedFeatures is the width of the encoding the default fits on the
// public file, row identifiers left out.
func encodedFeatures(path string) (int, bool, error) {
	r, err := arrowio.Open(path, arrowio.ReadOptions{BatchSize: 64 << 10})
	if err != nil {
		return 0, false, err
	}
	var recs []arrow.Record
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for {
		rec, err := r.Read()
		if err != nil || rec == nil {
			break
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	var feats []string
	ids := map[string]bool{}
	for _, c := range learners.IDColumns(r.Schema(), fieldNames(r.Schema()), recs, 0) {
		ids[c.Name] = true
	}
	for _, name := range fieldNames(r.Schema()) {
		if !ids[name] {
			feats = append(feats, name)
		}
	}
	enc, err := learners.FitEncoder(r.Schema(), feats, recs, learners.EncoderOptions{})
	if err != nil {
		return 0, false, err
	}
	numeric := true
	for _, c := range enc.Columns {
		numeric = numeric && c.Kind != learners.KindString
	}
	return enc.Dim(), numeric, nil
}

func fieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// printWide prints one line per set: at each ε the best candidate and its
// accuracy, the regret of the rule's constants and of the rule fitted
// without the set.
func printWide(cells []cell, current rule, fitted map[string]rule) {
	short := map[string]string{"PATE": "P", "dp-logreg": "L", "cells": "C"}
	fmt.Println("| set | best candidate at ε = 0.5, 1, 2, 4 (P PATE, L dp-logreg, C cells) | regret of the rule | regret fitted without the set | fitted without the set |")
	fmt.Println("|---|---|---|---|---|")
	for i := 0; i < len(cells); {
		j := i
		var b, r, l []string
		for ; j < len(cells) && cells[j].set == cells[i].set; j++ {
			c := cells[j]
			bn, bv := best(c)
			_, pv := current.pick(c)
			_, lv := fitted[c.set].pick(c)
			b = append(b, fmt.Sprintf("%s %.3f", short[bn], bv))
			r = append(r, fmt.Sprintf("%.3f", bv-pv))
			l = append(l, fmt.Sprintf("%.3f", bv-lv))
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", cells[i].set, strings.Join(b, ", "), strings.Join(r, ", "), strings.Join(l, ", "), fitted[cells[i].set])
		i = j
	}
	fmt.Println()
}
