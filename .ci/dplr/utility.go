//go:build ignore

// utility measures differentially private logistic regression (learners'
// DPLogReg with label/noise's exact discrete Gaussian and label/rdp's
// planner) against the non-private ceiling (learners' LogReg on all
// sensitive rows) on the shared benchmark datasets: accuracy over all
// public rows, at several ε, δ = 1e-5, fixed seeds. It reads
// ../shared/datasets (the folder beside the repository), so it is a CI
// script, not a test.
//
//	go run .ci/dplr/utility.go [-data ../shared/datasets] [-seeds 3] [-eps 0.5,1,2,4]
//
// Each run is label.FitDPLogReg under a fresh filter: a noisy count of the
// sensitive rows, then the steps, the whole budget spent.
// breast_cancer and digits come as one file each: they are shuffled once
// with a fixed seed and split 2/3 sensitive, 1/3 public, as the mlbench sets
// are.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

type set struct {
	name            string
	xs, xp          *learners.Matrix
	ys, yp          []int32
	classes, params int
}

func main() {
	data := flag.String("data", "../shared/datasets", "shared datasets folder")
	seeds := flag.Int("seeds", 3, "seeds per cell")
	epsList := flag.String("eps", "0.5,1,2,4", "ε values")
	sets := flag.String("sets", "adult,breast_cancer,digits,dna,vehicle,vowel", "datasets")
	steps := flag.Int("steps", 0, "override steps")
	clip := flag.Float64("clip", 0, "override clip")
	lr := flag.Float64("lr", 0, "override learning rate")
	rowNorm := flag.Float64("rownorm", -1, "override row norm")
	l2 := flag.Float64("l2", -1, "override L2")
	tail := flag.Float64("tail", -1, "override tail-average share")
	stepScale := flag.Float64("stepscale", 1, "multiply the planned steps (tuning)")
	flag.Parse()
	var epss []float64
	for _, s := range strings.Split(*epsList, ",") {
		e, err := strconv.ParseFloat(s, 64)
		if err != nil {
			log.Fatal(err)
		}
		epss = append(epss, e)
	}
	const delta = 1e-5
	fmt.Printf("| dataset | sens. rows | classes | ceiling |")
	for _, e := range epss {
		fmt.Printf(" ε=%g |", e)
	}
	fmt.Printf(" ratio at ε=1 |\n|---|---:|---:|---:|")
	for range epss {
		fmt.Printf("---:|")
	}
	fmt.Println("---:|")
	for _, name := range strings.Split(*sets, ",") {
		s, err := load(*data, name)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		ceil := ceiling(s)
		fmt.Printf("| %s | %d | %d | %.3f |", name, s.xs.Rows, s.classes, ceil)
		var at1 float64
		t0 := time.Now()
		for _, eps := range epss {
			sum := 0.0
			for seed := 1; seed <= *seeds; seed++ {
				acc, err := runDP(s, eps, delta, uint64(seed), func(p *learners.DPLogRegParams) {
					p.Steps = max(1, int(math.Round(float64(p.Steps)**stepScale)))
					if *steps > 0 {
						p.Steps = *steps
					}
					if *clip > 0 {
						p.Clip = *clip
					}
					if *lr > 0 {
						p.LearnRate = *lr
					}
					if *rowNorm >= 0 {
						p.RowNorm = *rowNorm
					}
					if *l2 >= 0 {
						p.L2 = *l2
					}
					if *tail >= 0 {
						p.TailAverage = *tail
					}
				})
				if err != nil {
					log.Fatalf("%s ε=%g: %v", name, eps, err)
				}
				sum += acc
			}
			m := sum / float64(*seeds)
			if eps == 1 {
				at1 = m
			}
			fmt.Printf(" %.3f |", m)
		}
		fmt.Printf(" %.2f |", at1/ceil)
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, time.Since(t0).Round(time.Millisecond))
		fmt.Println()
	}
}

func runDP(s *set, eps, delta float64, seed uint64, tweak func(*learners.DPLogRegParams)) (float64, error) {
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return 0, err
	}
	m, rel, err := label.FitDPLogReg(f, s.xs, s.ys, s.classes, noise.NewSeededSource(seed, 0), noise.NewSeededSource(seed, 1), label.DPLogRegOptions{Adjust: tweak})
	if err != nil {
		return 0, err
	}
	if got := rdp.ZCDPEps(rel.Rho, delta); got > eps {
		return 0, fmt.Errorf("run spent ε = %v > %v", got, eps)
	}
	return accuracy(m, s.xp, s.yp), nil
}

func ceiling(s *set) float64 {
	m, err := (&learners.LogReg{C: 1, MaxIter: 1000, Tol: 1e-4}).Fit(s.xs, s.ys, s.classes)
	if err != nil {
		log.Fatal(err)
	}
	return accuracy(m, s.xp, s.yp)
}

func accuracy(m learners.Model, x *learners.Matrix, y []int32) float64 {
	out := make([]int32, x.Rows)
	m.Predict(x, out)
	ok := 0
	for i := range out {
		if out[i] == y[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(out))
}

// readAll reads a whole file as record batches.
func readAll(path string) ([]arrow.Record, *arrow.Schema, error) {
	r, err := arrowio.Open(path, arrowio.ReadOptions{})
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var out []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, rec)
	}
	return out, r.Schema(), nil
}

// labels returns the text of every value of column name.
func labels(recs []arrow.Record, name string) ([]string, error) {
	var out []string
	for _, r := range recs {
		idx := r.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("no column %q", name)
		}
		col := r.Column(idx[0])
		for i := 0; i < col.Len(); i++ {
			switch c := col.(type) {
			case *array.Int64:
				out = append(out, strconv.FormatInt(c.Value(i), 10))
			case *array.String:
				out = append(out, c.Value(i))
			default:
				out = append(out, c.ValueStr(i))
			}
		}
	}
	return out, nil
}

func features(s *arrow.Schema, label string) []string {
	var out []string
	for _, f := range s.Fields() {
		if f.Name != label {
			out = append(out, f.Name)
		}
	}
	return out
}

func encode(enc *learners.Encoder, recs []arrow.Record) (*learners.Matrix, error) {
	x := &learners.Matrix{Cols: enc.Dim()}
	tmp := learners.NewMatrix(0, enc.Dim())
	for _, r := range recs {
		if err := enc.Encode(r, tmp); err != nil {
			return nil, err
		}
		x.Data = append(x.Data, tmp.Data...)
		x.Rows += tmp.Rows
	}
	return x, nil
}

func slice(recs []arrow.Record, rows []int) []arrow.Record {
	// Rows of one-batch files, in the given order, as one-row slices.
	var out []arrow.Record
	for _, i := range rows {
		out = append(out, recs[0].NewSlice(int64(i), int64(i+1)))
	}
	return out
}

func load(dir, name string) (*set, error) {
	var sens, pub []arrow.Record
	var ysText, ypText []string
	label := "class"
	switch name {
	case "adult":
		label = "income"
		var err error
		if sens, _, err = readAll(filepath.Join(dir, "adult_train.parquet")); err != nil {
			return nil, err
		}
		if pub, _, err = readAll(filepath.Join(dir, "adult_test.parquet")); err != nil {
			return nil, err
		}
		if ypText, err = labels(pub, label); err != nil {
			return nil, err
		}
	case "breast_cancer", "digits":
		label = "label"
		all, _, err := readAll(filepath.Join(dir, name+".parquet"))
		if err != nil {
			return nil, err
		}
		if len(all) != 1 {
			return nil, fmt.Errorf("%d batches, want 1", len(all))
		}
		perm := rand.New(rand.NewPCG(20261124, 0)).Perm(int(all[0].NumRows()))
		cut := len(perm) * 2 / 3
		sens, pub = slice(all, perm[:cut]), slice(all, perm[cut:])
		if ypText, err = labels(pub, label); err != nil {
			return nil, err
		}
	default:
		var err error
		if sens, _, err = readAll(filepath.Join(dir, name+"_private.parquet")); err != nil {
			return nil, err
		}
		if pub, _, err = readAll(filepath.Join(dir, name+"_public.parquet")); err != nil {
			return nil, err
		}
		truth, _, err := readAll(filepath.Join(dir, name+"_public_truth.parquet"))
		if err != nil {
			return nil, err
		}
		if ypText, err = labels(truth, label); err != nil {
			return nil, err
		}
	}
	ysText, err := labels(sens, label)
	if err != nil {
		return nil, err
	}
	// The class set is public: the sorted values (numerically when they are
	// integers).
	seen := map[string]bool{}
	var vals []string
	for _, v := range append(append([]string(nil), ysText...), ypText...) {
		if !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	sort.Slice(vals, func(a, b int) bool {
		x, e1 := strconv.ParseInt(vals[a], 10, 64)
		y, e2 := strconv.ParseInt(vals[b], 10, 64)
		if e1 == nil && e2 == nil {
			return x < y
		}
		return vals[a] < vals[b]
	})
	idx := map[string]int32{}
	for i, v := range vals {
		idx[v] = int32(i)
	}
	conv := func(t []string) []int32 {
		out := make([]int32, len(t))
		for i, v := range t {
			out[i] = idx[v]
		}
		return out
	}
	feats := features(pub[0].Schema(), label)
	enc, err := learners.FitEncoder(pub[0].Schema(), feats, pub, learners.EncoderOptions{})
	if err != nil {
		return nil, err
	}
	s := &set{name: name, ys: conv(ysText), yp: conv(ypText), classes: len(vals)}
	if s.xs, err = encode(enc, sens); err != nil {
		return nil, err
	}
	if s.xp, err = encode(enc, pub); err != nil {
		return nil, err
	}
	s.params = learners.ParamCount(enc.Dim(), s.classes)
	return s, nil
}
