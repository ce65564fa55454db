// Command utility measures the accuracy of pate's labels on the shared
// benchmark datasets, side by side with the non-private ceiling, and prints
// the README's utility table. It runs the pate binary as a user would
// (fixed seeds, a throw-away ledger), and counts every public row: a row
// left unlabelled counts as wrong.
//
//	go run ./.ci/utility [-data ../shared/datasets] [-seeds 3] [-first-seed 1] [-eps 0.5,1,2,4]
//	    [-sets adult,breast_cancer,digits,dna,vehicle,vowel | all] [-runs default,gbt,pate,dplr]
//	    [-student "--student gbt"] [-ceilings lr,gbt,knn] [-default-classes] [-corpus]
//	    [-json out.json] [-pate BINARY] [-timeout 10m]
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
// The corpus (41 sets from Debian's R data packages, see
// .ci/utility/corpus/README.md): bash .ci/utility/corpus/make.sh DIR, then
//
//	go run ./.ci/utility -data DIR -corpus [-seeds 1] [-json out.json]
//	go run ./.ci/utility/corpus/check out.json
//
// -corpus runs every set in DIR (-sets all), the default as a newcomer
// types it (no --classes) beside each candidate run by name with --classes
// (pdef, dplr, cells), and the GBT and LR ceilings; it adds the majority
// rate (the sensitive majority class given to every public row) and the
// balanced accuracy (mean recall over the public truth's classes) of the
// default and of the GBT ceiling. -json writes every run (seed, accuracy,
// balanced accuracy, wall time, the plan the run reported, or its error)
// for the checker; it is rewritten after each set, so a cut run keeps what
// it measured. A run that fails labels nothing: it counts 0.
//
// It reads the datasets beside the repository, so it is a CI script, not a
// test. breast_cancer and digits come as one file each: they are shuffled
// once with a fixed seed and split 2/3 sensitive, 1/3 public, as the mlbench
// sets are.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	gbtBal    float64 // balanced accuracy of the GBT ceiling
	classList string
	// truthClasses is every class value, sorted; balanced accuracy averages
	// the recall of those in the truth.
	truthClasses []string
	features     int     // public columns
	minShare     float64 // smallest class's share of the sensitive rows
	minRows      int     // and its rows
	majority     float64 // public accuracy of the sensitive majority class
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
	firstSeed := flag.Int("first-seed", 1, "first seed (more seeds of a cut run: -first-seed 2 -seeds 3)")
	epsList := flag.String("eps", "0.5,1,2,4", "ε values")
	sets := flag.String("sets", "adult,breast_cancer,digits,dna,vehicle,vowel", "datasets, or all: every NAME with NAME_private, NAME_public and NAME_public_truth .parquet in -data")
	runs := flag.String("runs", "default,gbt,pate,dplr", "columns to run: default, gbt (the -student column), pate, pdef (PATE plan), dplr, cells")
	studentArgs := flag.String("student", "--student gbt", "flags added to the default command for the student column")
	bin := flag.String("pate", "", "pate binary (default: build the repository's)")
	flag.BoolVar(&declareClasses, "classes", true, "give --classes (false: the run discovers them privately, as the README's first command does)")
	defaultClasses := flag.Bool("default-classes", true, "give the default run --classes too (with -classes)")
	ceilList := flag.String("ceilings", "lr,gbt,knn", "non-private ceilings to train: lr, gbt, knn")
	corpus := flag.Bool("corpus", false, "the corpus run: -sets all -runs default,pdef,dplr,cells -ceilings lr,gbt -default-classes=false, unless given")
	jsonOut := flag.String("json", "", "write every run as JSON to this file (for .ci/utility/corpus/check)")
	timeout := flag.Duration("timeout", 10*time.Minute, "longest run; a run cut counts as failed")
	flag.Parse()
	log.SetFlags(0)
	if *corpus {
		given := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if !given["sets"] {
			*sets = "all"
		}
		if !given["runs"] {
			*runs = "default,pdef,dplr,cells"
		}
		if !given["ceilings"] {
			*ceilList = "lr,gbt"
		}
		if !given["default-classes"] {
			*defaultClasses = false
		}
	}
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
	wantCeil := map[string]bool{}
	for _, c := range strings.Split(*ceilList, ",") {
		wantCeil[c] = true
	}
	names := strings.Split(*sets, ",")
	if *sets == "all" {
		var err error
		if names, err = allSets(*data); err != nil {
			log.Fatal(err)
		}
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
	report := &Report{Binary: *bin, FirstSeed: *firstSeed, Seeds: *seeds, Eps: epss, Delta: 1e-5,
		DefaultClasses: declareClasses && *defaultClasses, CandidateClasses: declareClasses}
	fmt.Printf("| dataset | sens. rows | classes | majority | LR ceiling | GBT ceiling | GBT bal. | 10-NN ceiling | ε | default | default bal. | %s | best PATE | PATE plan | DP-LR | cells | default / GBT ceiling |\n", *studentArgs)
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var short []string // cells where the default is below its best candidate − 0.02
	for _, name := range names {
		d, err := prepare(*data, tmp, name, wantCeil)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		set := &SetResult{Name: name, SensRows: d.sensRows, PublicRows: len(d.truth), Classes: d.classes,
			Features: d.features, MinorityShare: d.minShare, MinorityRows: d.minRows, Majority: d.majority,
			LR: d.ceiling, GBT: d.ceilGBT, GBTBal: d.gbtBal, KNN: d.ceilKNN}
		for _, eps := range epss {
			t0 := time.Now()
			cell := func(run string, extra []string, declare bool) (float64, float64, bool) {
				rs := runSeeds(*bin, tmp, d, eps, *firstSeed, *seeds, extra, declare, *timeout)
				acc, bal, ok := 0.0, 0.0, true
				for _, r := range rs {
					r.Run, r.Eps = run, eps
					set.Runs = append(set.Runs, r)
					if r.Err != "" {
						log.Printf("%s ε=%g %s seed %d: %s", name, eps, run, r.Seed, r.Err)
						ok = false
					}
					acc += r.Acc / float64(len(rs))
					bal += r.Bal / float64(len(rs))
				}
				return acc, bal, ok
			}
			f3 := func(v float64, ok bool) string {
				if !ok {
					return fmt.Sprintf("%.3f (failed)", v)
				}
				return fmt.Sprintf("%.3f", v)
			}
			def, defBal, stu, best, pdef, dplr, cells, ratio := "", "", "", "", "", "", "", ""
			defV := -1.0
			if want["default"] {
				a, b, ok := cell("default", nil, *defaultClasses)
				def, defBal, defV = f3(a, ok), fmt.Sprintf("%.3f", b), a
				if d.ceilGBT > 0 {
					ratio = fmt.Sprintf("%.2f", a/d.ceilGBT)
				}
			}
			if want["gbt"] {
				a, _, ok := cell("student", strings.Fields(*studentArgs), *defaultClasses)
				stu = f3(a, ok)
			}
			if want["pate"] {
				bestV := -1.0
				for k, g := range grid {
					a, _, ok := cell(fmt.Sprintf("grid%d", k), g, true)
					if ok && a > bestV {
						bestV, best = a, fmt.Sprintf("%.3f", a)
					}
				}
			}
			cand := map[string]float64{}
			if want["pdef"] {
				a, _, ok := cell("pdef", []string{"--mechanism", "confident-gnmax"}, true)
				pdef, cand["PATE plan"] = f3(a, ok), a
			}
			if want["dplr"] {
				a, _, ok := cell("dplr", []string{"--mechanism", "dp-logreg"}, true)
				dplr, cand["DP-LR"] = f3(a, ok), a
			}
			if want["cells"] {
				a, _, ok := cell("cells", []string{"--mechanism", "cell-histogram"}, true)
				cells, cand["cells"] = f3(a, ok), a
			}
			if defV >= 0 {
				for c, w := range cand {
					if defV < w-0.02 {
						short = append(short, fmt.Sprintf("%s ε=%g: default %.3f, %s %.3f", name, eps, defV, c, w))
					}
				}
			}
			fmt.Printf("| %s | %d | %d | %.3f | %s | %s | %s | %s | %g | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				name, d.sensRows, d.classes, d.majority, ceil(wantCeil["lr"], d.ceiling), ceil(wantCeil["gbt"], d.ceilGBT),
				ceil(wantCeil["gbt"], d.gbtBal), ceil(wantCeil["knn"], d.ceilKNN), eps, def, defBal, stu, best, pdef, dplr, cells, ratio)
			log.Printf("%s ε=%g: %v", name, eps, time.Since(t0).Round(time.Second))
		}
		report.Sets = append(report.Sets, set)
		if *jsonOut != "" {
			if err := report.write(*jsonOut); err != nil {
				log.Fatal(err)
			}
		}
	}
	if want["default"] && (want["pdef"] || want["dplr"] || want["cells"]) {
		sort.Strings(short)
		if len(short) == 0 {
			fmt.Println("\nThe default is within 0.02 of its best candidate (PATE plan, DP-LR, cells) in every cell.")
		}
		for _, s := range short {
			fmt.Println("\nbelow a candidate − 0.02: " + s)
		}
	}
}

// ceil prints a ceiling, "-" when it was not trained.
func ceil(trained bool, v float64) string {
	if !trained {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// Report is what -json writes: every run of every set, for
// .ci/utility/corpus/check.
type Report struct {
	Binary           string       `json:"binary"`
	FirstSeed        int          `json:"first_seed"`
	Seeds            int          `json:"seeds"` // the last seed
	Eps              []float64    `json:"eps"`
	Delta            float64      `json:"delta"`
	DefaultClasses   bool         `json:"default_classes"`   // the default run had --classes
	CandidateClasses bool         `json:"candidate_classes"` // pdef, dplr, cells had --classes
	Sets             []*SetResult `json:"sets"`
}

// SetResult is one dataset: its shape, non-private references and runs.
type SetResult struct {
	Name          string      `json:"name"`
	SensRows      int         `json:"sensitive_rows"`
	PublicRows    int         `json:"public_rows"`
	Classes       int         `json:"classes"`
	Features      int         `json:"features"`
	MinorityShare float64     `json:"minority_share"` // smallest class's share of the sensitive rows
	MinorityRows  int         `json:"minority_rows"`  // its sensitive rows
	Majority      float64     `json:"majority"`       // public accuracy of the sensitive majority class
	LR            float64     `json:"lr_ceiling,omitempty"`
	GBT           float64     `json:"gbt_ceiling,omitempty"`
	GBTBal        float64     `json:"gbt_balanced,omitempty"`
	KNN           float64     `json:"knn_ceiling,omitempty"`
	Runs          []RunResult `json:"runs"`
}

// RunResult is one pate run. A failed run labelled nothing: Acc and Bal
// are 0 and Err says why.
type RunResult struct {
	Run  string  `json:"run"` // default, pdef, dplr, cells, student, gridN
	Eps  float64 `json:"eps"`
	Seed int     `json:"seed"`
	Acc  float64 `json:"acc"`
	Bal  float64 `json:"balanced"`
	Secs float64 `json:"secs"`
	Plan string  `json:"plan,omitempty"` // the mechanism its guarantee line names
	Err  string  `json:"error,omitempty"`
}

func (r *Report) write(path string) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// allSets lists the sets of dir that come as the three split files.
func allSets(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*_public_truth.parquet"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range m {
		name := strings.TrimSuffix(filepath.Base(f), "_public_truth.parquet")
		_, e1 := os.Stat(filepath.Join(dir, name+"_private.parquet"))
		_, e2 := os.Stat(filepath.Join(dir, name+"_public.parquet"))
		if e1 == nil && e2 == nil {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-sets all: no NAME_public_truth.parquet in %s", dir)
	}
	sort.Strings(out)
	return out, nil
}

// declareClasses gives the runs --classes (the default run only with
// -default-classes).
var declareClasses = true

// planRE finds the mechanism a run's guarantee line names.
var planRE = regexp.MustCompile(`guarantee[^\n]*\[([^\]]+)\]`)

// runSeeds runs pate with seeds first..seeds with the given extra flags and scores
// each run on all public rows.
func runSeeds(bin, tmp string, d *dataset, eps float64, first, seeds int, extra []string, declare bool, timeout time.Duration) []RunResult {
	var out []RunResult
	for seed := first; seed <= seeds; seed++ {
		r := RunResult{Seed: seed}
		t0 := time.Now()
		plan, got, err := runOnce(bin, tmp, d, eps, seed, extra, declare && declareClasses, timeout)
		r.Secs = time.Since(t0).Seconds()
		r.Plan = plan
		if err == nil && len(got) != len(d.truth) {
			err = fmt.Errorf("%d output rows, want %d", len(got), len(d.truth))
		}
		if err != nil {
			r.Err = err.Error()
		} else {
			r.Acc, r.Bal = score(got, d.truth, d.truthClasses)
		}
		out = append(out, r)
	}
	return out
}

func runOnce(bin, tmp string, d *dataset, eps float64, seed int, extra []string, declare bool, timeout time.Duration) (string, []string, error) {
	out := filepath.Join(tmp, "out.arrow")
	os.Remove(out)
	args := []string{"label", "--private", d.private, "--label", d.label, "--public", d.public,
		"--epsilon", strconv.FormatFloat(eps, 'g', -1, 64), "--delta", "1e-5", "-o", out,
		"--seed", strconv.Itoa(seed), "--no-ledger"}
	if declare {
		args = append(args, "--classes", d.classList)
	}
	args = append(args, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", nil, fmt.Errorf("cut after %v", timeout)
		}
		return "", nil, fmt.Errorf("%v: %s", err, lastLine(stderr.String()))
	}
	plan := ""
	if m := planRE.FindStringSubmatch(stderr.String()); m != nil {
		plan = m[1]
	}
	got, err := readColumn(out, d.label)
	return plan, got, err
}

// score returns the accuracy over all rows (an unlabelled row is wrong) and
// the balanced accuracy: the mean over the truth's classes of their recall.
func score(got, truth, classes []string) (acc, bal float64) {
	hit, n := map[string]int{}, map[string]int{}
	ok := 0
	for i := range got {
		n[truth[i]]++
		if got[i] != "" && got[i] == truth[i] {
			ok++
			hit[truth[i]]++
		}
	}
	k := 0
	for _, c := range classes {
		if n[c] > 0 {
			bal += float64(hit[c]) / float64(n[c])
			k++
		}
	}
	if k > 0 {
		bal /= float64(k)
	}
	return float64(ok) / float64(len(got)), bal
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
func prepare(dir, tmp, name string, want map[string]bool) (*dataset, error) {
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
	for _, v := range vals {
		if strings.Contains(v, ",") {
			return nil, fmt.Errorf("class %q has a comma: --classes cannot name it", v)
		}
	}
	d.classList = strings.Join(vals, ",")
	d.truthClasses = vals
	d.features = int(pub[0].NumCols())
	count := map[string]int{}
	for _, v := range sensText {
		if v != "" {
			count[v]++
		}
	}
	maj, labelled := "", 0
	d.minRows = len(sensText)
	for _, v := range vals {
		labelled += count[v]
		if maj == "" || count[v] > count[maj] {
			maj = v
		}
		if count[v] < d.minRows {
			d.minRows = count[v]
		}
	}
	if labelled > 0 {
		d.minShare = float64(d.minRows) / float64(labelled)
	}
	for _, v := range truth {
		if v == maj {
			d.majority++
		}
	}
	d.majority /= float64(len(truth))
	ceils, err := ceilings(sens, pub, lab, sensText, truth, vals, want)
	if err != nil {
		return nil, err
	}
	d.ceiling, d.ceilGBT, d.ceilKNN, d.gbtBal = ceils["lr"][0], ceils["gbt"][0], ceils["knn"][0], ceils["gbt"][1]
	return d, nil
}

// ceilings trains pate's logistic regression, boosted trees and 10-NN on
// every sensitive row, on the encoding fitted on the public rows (the
// trees' bins too), and returns the public accuracy and balanced accuracy
// of those asked for (lr, gbt, knn); the others are zeros.
func ceilings(sens, pub []arrow.Record, lab string, ys, yp, vals []string, want map[string]bool) (map[string][2]float64, error) {
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
	ls := map[string]learners.Learner{
		"lr": &learners.LogReg{C: 1, MaxIter: 1000, Tol: 1e-4},
		// A ceiling, not a student: the large-set recipe whatever the rows.
		"gbt": &learners.GBT{Bins: learners.PublicBins(xp, learners.DefaultMaxBins), Rounds: 200, Shrinkage: 0.1, MinLeaf: 3},
		"knn": &learners.KNN{K: 10},
	}
	accs := map[string][2]float64{}
	out := make([]int32, xp.Rows)
	got := make([]string, xp.Rows)
	for name, l := range ls {
		if !want[name] {
			continue
		}
		m, err := l.Fit(xs, y, len(vals))
		if err != nil {
			return nil, err
		}
		m.Predict(xp, out)
		for i := range out {
			got[i] = vals[out[i]]
		}
		a, b := score(got, yp, vals)
		accs[name] = [2]float64{a, b}
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
