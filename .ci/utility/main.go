// Command utility measures the accuracy of pate's labels on the shared
// benchmark datasets, side by side with the non-private ceiling, and prints
// the README's utility table. It runs the pate binary as a user would
// (fixed seeds, a throw-away ledger), and counts every public row: a row
// left unlabelled counts as wrong.
//
//	go run ./.ci/utility [-data ../shared/datasets] [-seeds 3] [-eps 0.5,1,2,4]
//	    [-sets adult,breast_cancer,digits,dna,vehicle,vowel] [-runs default,gbt,pate,dplr]
//	    [-student "--student gbt"]
//
// Columns, for each dataset and ε (δ = 1e-5):
//
//   - default: the README's first command with only --private, --label,
//     --public, --epsilon, --delta and -o;
//   - best PATE: the best mean over a small grid of PATE + student settings
//     (teachers × planned queries); chosen on the truth, so it is an oracle's
//     choice, an upper reference for PATE rather than something a user gets;
//   - student: the default command plus the -student flags (default
//     --student gbt: a boosted-tree student, which also turns off the
//     default's choice of dp-logreg);
//   - PATE plan: --mechanism confident-gnmax, which keeps the default plan
//     (teachers, student, planned queries) but not the chooser: the PATE
//     candidate the default weighs (run "pdef");
//   - DP-LR: --mechanism dp-logreg with its planned settings, the other
//     candidate;
//   - cells: --mechanism cell-histogram with its planned settings (run
//     "cells");
//   - ceilings: pate's own logistic regression (LR), boosted trees (GBT,
//     bins from the public encoding, 200 rounds of depth 3 at 0.1) and
//     10-nearest-neighbours (10-NN),
//     each trained on every sensitive row with no privacy, on the same
//     public-data encoding.
//
// More sets, from R's mlbench, split the same way (letter, satellite,
// shuttle, glass): bash .ci/utility/mlbench/make.sh DIR, then
// -data DIR -sets letter,....
//
// It reads the datasets beside the repository, so it is a CI script, not a
// test. breast_cancer and digits come as one file each: they are shuffled
// once with a fixed seed and split 2/3 sensitive, 1/3 public, as the mlbench
// sets are.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/learners"
)

// dataset is one benchmark prepared as files a user would have.
type dataset struct {
	name      string
	label     string
	private   string // sensitive file, with the label
	public    string // public file, without the label
	truth     []string
	sensRows  int
	classes   int
	ceiling   float64 // logistic regression
	ceilGBT   float64
	ceilKNN   float64
	classList string
}

// grid is the PATE + student settings the "best PATE" column tries.
var grid = [][]string{
	{"--teachers", "250", "--student", "logreg", "--select", "uncertain", "--max-queries", "300"},
	{"--teachers", "250", "--student", "logreg", "--select", "uncertain", "--max-queries", "1000"},
	{"--teachers", "100", "--student", "logreg", "--select", "uncertain", "--max-queries", "300"},
	{"--teachers", "100", "--student", "logreg", "--select", "uncertain", "--max-queries", "1000"},
	{"--teachers", "50", "--student", "logreg", "--select", "uncertain", "--max-queries", "300"},
}

func main() {
	data := flag.String("data", "../shared/datasets", "shared datasets folder")
	seeds := flag.Int("seeds", 3, "seeds per cell (1..N)")
	epsList := flag.String("eps", "0.5,1,2,4", "ε values")
	sets := flag.String("sets", "adult,breast_cancer,digits,dna,vehicle,vowel", "datasets")
	runs := flag.String("runs", "default,gbt,pate,dplr", "columns to run: default, gbt (the -student column), pate, pdef (PATE plan), dplr, cells")
	studentArgs := flag.String("student", "--student gbt", "flags added to the default command for the student column")
	bin := flag.String("pate", "", "pate binary (default: build the repository's)")
	flag.BoolVar(&declareClasses, "classes", true, "give --classes (false: the run discovers them privately, as the README's first command does)")
	flag.Parse()
	log.SetFlags(0)
	var epss []float64
	for _, s := range strings.Split(*epsList, ",") {
		e, err := strconv.ParseFloat(s, 64)
		if err != nil {
			log.Fatalf("-eps: %v", err)
		}
		epss = append(epss, e)
	}
	want := map[string]bool{}
	for _, r := range strings.Split(*runs, ",") {
		want[r] = true
	}
	tmp, err := os.MkdirTemp("", "pate-utility-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		*bin = filepath.Join(tmp, "pate")
		cmd := exec.Command("go", "build", "-o", *bin, ".")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("build pate: %v", err)
		}
	}
	fmt.Printf("| dataset | sens. rows | classes | LR ceiling | GBT ceiling | 10-NN ceiling | ε | default | %s | best PATE | PATE plan | DP-LR | cells | default / GBT ceiling |\n", *studentArgs)
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var short []string // cells where the default is below its best candidate − 0.02
	for _, name := range strings.Split(*sets, ",") {
		d, err := prepare(*data, tmp, name)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		for _, eps := range epss {
			t0 := time.Now()
			cell := func(extra []string) string {
				m, err := meanAcc(*bin, tmp, d, eps, *seeds, extra)
				if err != nil {
					log.Printf("%s ε=%g %v: %v", name, eps, extra, err)
					return "error"
				}
				return fmt.Sprintf("%.3f", m)
			}
			def, stu, best, pdef, dplr, cells, ratio := "", "", "", "", "", "", ""
			if want["default"] {
				def = cell(nil)
				if v, err := strconv.ParseFloat(def, 64); err == nil {
					ratio = fmt.Sprintf("%.2f", v/d.ceilGBT)
				}
			}
			if want["gbt"] {
				stu = cell(strings.Fields(*studentArgs))
			}
			if want["pate"] {
				bestV := -1.0
				for _, g := range grid {
					m, err := meanAcc(*bin, tmp, d, eps, *seeds, g)
					if err != nil {
						log.Printf("%s ε=%g %v: %v", name, eps, g, err)
						continue
					}
					if m > bestV {
						bestV, best = m, fmt.Sprintf("%.3f", m)
					}
				}
			}
			if want["pdef"] {
				pdef = cell([]string{"--mechanism", "confident-gnmax"})
			}
			if want["dplr"] {
				dplr = cell([]string{"--mechanism", "dp-logreg"})
			}
			if want["cells"] {
				cells = cell([]string{"--mechanism", "cell-histogram"})
			}
			if v, err := strconv.ParseFloat(def, 64); err == nil {
				for _, c := range []string{pdef, dplr, cells} {
					if w, err := strconv.ParseFloat(c, 64); err == nil && v < w-0.02 {
						short = append(short, fmt.Sprintf("%s ε=%g: default %s, candidate %s", name, eps, def, c))
					}
				}
			}
			fmt.Printf("| %s | %d | %d | %.3f | %.3f | %.3f | %g | %s | %s | %s | %s | %s | %s | %s |\n",
				name, d.sensRows, d.classes, d.ceiling, d.ceilGBT, d.ceilKNN, eps, def, stu, best, pdef, dplr, cells, ratio)
			log.Printf("%s ε=%g: %v", name, eps, time.Since(t0).Round(time.Second))
		}
	}
	if want["default"] && (want["pdef"] || want["dplr"] || want["cells"]) {
		if len(short) == 0 {
			fmt.Println("\nThe default is within 0.02 of its best candidate (PATE plan, DP-LR, cells) in every cell.")
		}
		for _, s := range short {
			fmt.Println("\nbelow its best candidate − 0.02: " + s)
		}
	}
}

// declareClasses gives every run --classes.
var declareClasses = true

// meanAcc runs pate seeds times with the given extra flags and returns the
// mean accuracy over all public rows.
func meanAcc(bin, tmp string, d *dataset, eps float64, seeds int, extra []string) (float64, error) {
	sum := 0.0
	for seed := 1; seed <= seeds; seed++ {
		out := filepath.Join(tmp, "out.arrow")
		args := []string{"label", "--private", d.private, "--label", d.label, "--public", d.public,
			"--epsilon", strconv.FormatFloat(eps, 'g', -1, 64), "--delta", "1e-5", "-o", out,
			"--seed", strconv.Itoa(seed), "--no-ledger"}
		if declareClasses {
			args = append(args, "--classes", d.classList)
		}
		args = append(args, extra...)
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("%v: %s", err, lastLine(stderr.String()))
		}
		got, err := readColumn(out, d.label)
		if err != nil {
			return 0, err
		}
		if len(got) != len(d.truth) {
			return 0, fmt.Errorf("%d output rows, want %d", len(got), len(d.truth))
		}
		ok := 0
		for i := range got {
			if got[i] != "" && got[i] == d.truth[i] {
				ok++
			}
		}
		sum += float64(ok) / float64(len(got))
	}
	return sum / float64(seeds), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// prepare writes the dataset's sensitive and public files into tmp and
// computes its ceiling.
func prepare(dir, tmp, name string) (*dataset, error) {
	var sens, pub []arrow.Record
	var truth []string
	lab := "class"
	switch name {
	case "adult":
		lab = "income"
		var err error
		if sens, err = readAll(filepath.Join(dir, "adult_train.parquet")); err != nil {
			return nil, err
		}
		if pub, err = readAll(filepath.Join(dir, "adult_test.parquet")); err != nil {
			return nil, err
		}
		if truth, err = column(pub, lab); err != nil {
			return nil, err
		}
	case "breast_cancer", "digits":
		lab = "label"
		all, err := readAll(filepath.Join(dir, name+".parquet"))
		if err != nil {
			return nil, err
		}
		one, err := concat(all)
		if err != nil {
			return nil, err
		}
		perm := rand.New(rand.NewPCG(20261124, 0)).Perm(int(one.NumRows()))
		cut := len(perm) * 2 / 3
		if sens, err = take(one, perm[:cut]); err != nil {
			return nil, err
		}
		if pub, err = take(one, perm[cut:]); err != nil {
			return nil, err
		}
		if truth, err = column(pub, lab); err != nil {
			return nil, err
		}
	default:
		var err error
		if sens, err = readAll(filepath.Join(dir, name+"_private.parquet")); err != nil {
			return nil, err
		}
		if pub, err = readAll(filepath.Join(dir, name+"_public.parquet")); err != nil {
			return nil, err
		}
		tr, err := readAll(filepath.Join(dir, name+"_public_truth.parquet"))
		if err != nil {
			return nil, err
		}
		if truth, err = column(tr, lab); err != nil {
			return nil, err
		}
	}
	pub = dropColumn(pub, lab)
	sensText, err := column(sens, lab)
	if err != nil {
		return nil, err
	}
	d := &dataset{name: name, label: lab, truth: truth, sensRows: len(sensText)}
	d.private = filepath.Join(tmp, name+"_private.arrow")
	d.public = filepath.Join(tmp, name+"_public.arrow")
	if err := write(d.private, sens); err != nil {
		return nil, err
	}
	if err := write(d.public, pub); err != nil {
		return nil, err
	}
	// The class set is public knowledge (--classes): the sorted values.
	vals := classes(append(append([]string(nil), sensText...), truth...))
	d.classes = len(vals)
	d.classList = strings.Join(vals, ",")
	ceils, err := ceilings(sens, pub, lab, sensText, truth, vals)
	if err != nil {
		return nil, err
	}
	d.ceiling, d.ceilGBT, d.ceilKNN = ceils[0], ceils[1], ceils[2]
	return d, nil
}

// ceilings trains pate's logistic regression, boosted trees and 10-NN on
// every sensitive row, on the encoding fitted on the public rows (the
// trees' bins too), and returns their public accuracies in that order.
func ceilings(sens, pub []arrow.Record, lab string, ys, yp, vals []string) ([]float64, error) {
	idx := map[string]int32{}
	for i, v := range vals {
		idx[v] = int32(i)
	}
	var feats []string
	for _, f := range pub[0].Schema().Fields() {
		feats = append(feats, f.Name)
	}
	enc, err := learners.FitEncoder(pub[0].Schema(), feats, pub, learners.EncoderOptions{})
	if err != nil {
		return nil, err
	}
	xs, err := encode(enc, sens)
	if err != nil {
		return nil, err
	}
	xp, err := encode(enc, pub)
	if err != nil {
		return nil, err
	}
	y := make([]int32, len(ys))
	for i, v := range ys {
		y[i] = idx[v]
	}
	ls := []learners.Learner{
		&learners.LogReg{C: 1, MaxIter: 1000, Tol: 1e-4},
		// A ceiling, not a student: the large-set recipe whatever the rows.
		&learners.GBT{Bins: learners.PublicBins(xp, learners.DefaultMaxBins), Rounds: 200, Shrinkage: 0.1, MinLeaf: 3},
		&learners.KNN{K: 10},
	}
	var accs []float64
	out := make([]int32, xp.Rows)
	for _, l := range ls {
		m, err := l.Fit(xs, y, len(vals))
		if err != nil {
			return nil, err
		}
		m.Predict(xp, out)
		ok := 0
		for i := range out {
			if vals[out[i]] == yp[i] {
				ok++
			}
		}
		accs = append(accs, float64(ok)/float64(len(out)))
	}
	return accs, nil
}

func classes(all []string) []string {
	seen := map[string]bool{}
	var vals []string
	for _, v := range all {
		if v != "" && !seen[v] {
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
	return vals
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

func readAll(path string) ([]arrow.Record, error) {
	r, err := arrowio.Open(path, arrowio.ReadOptions{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rec.Retain()
		out = append(out, rec)
	}
}

// readColumn returns the text of column name of an output file, "" for a
// null (an unlabelled row).
func readColumn(path, name string) ([]string, error) {
	recs, err := readAll(path)
	if err != nil {
		return nil, err
	}
	return column(recs, name)
}

func column(recs []arrow.Record, name string) ([]string, error) {
	var out []string
	for _, r := range recs {
		idx := r.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("no column %q", name)
		}
		col := r.Column(idx[0])
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				out = append(out, "")
				continue
			}
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

func dropColumn(recs []arrow.Record, name string) []arrow.Record {
	out := make([]arrow.Record, len(recs))
	for k, r := range recs {
		var fields []arrow.Field
		var cols []arrow.Array
		for i, f := range r.Schema().Fields() {
			if f.Name != name {
				fields = append(fields, f)
				cols = append(cols, r.Column(i))
			}
		}
		out[k] = array.NewRecord(arrow.NewSchema(fields, nil), cols, r.NumRows())
	}
	return out
}

func concat(recs []arrow.Record) (arrow.Record, error) {
	if len(recs) == 1 {
		return recs[0], nil
	}
	s := recs[0].Schema()
	cols := make([]arrow.Array, s.NumFields())
	var n int64
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for k, r := range recs {
			parts[k] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	for _, r := range recs {
		n += r.NumRows()
	}
	return array.NewRecord(s, cols, n), nil
}

// take returns the rows of rec in the given order as one record.
func take(rec arrow.Record, rows []int) ([]arrow.Record, error) {
	parts := make([]arrow.Record, len(rows))
	for k, i := range rows {
		parts[k] = rec.NewSlice(int64(i), int64(i+1))
	}
	one, err := concat(parts)
	if err != nil {
		return nil, err
	}
	return []arrow.Record{one}, nil
}

func write(path string, recs []arrow.Record) error {
	w, err := arrowio.Create(path, recs[0].Schema(), arrowio.WriteOptions{Format: arrowio.WriteFile})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Commit(nil)
}
