package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/label/report"
)

// Every figure a user reads is a valid bound, wherever it is read: the
// ledger's total for a run, the progress bar's last "ε spent" and the HTML
// report's chart never state less than the run's own report states as
// spent, whatever the mechanism and however the run ends; an interrupted
// or failed run, which writes no report, is charged at least what its bar
// showed; and runs composed in the ledger are at least each run alone.
//
// On the main of before the ledger carried the Rényi orders a charge holds
// at, private-knn's cases failed here: the ledger converted its
// order-bounded ρ at order ≈ 167, its bar at any order, below its report.

// spendMechanisms are the mechanisms of the property, with the flags of
// explicit noise under which a run at spendEpsilon put on every public row
// exhausts its budget, and five queries leave it far below.
var spendMechanisms = []struct {
	name  string
	flags []string
}{
	{"default", nil}, // the chooser, classes released privately
	{"confident-gnmax", []string{"--classes", "0,1", "--sigma1", "300", "--sigma2", "150"}},
	{"gnmax", []string{"--classes", "0,1", "--sigma", "150"}},
	{"lnmax", []string{"--classes", "0,1", "--laplace-scale", "200"}},
	{"svt", []string{"--classes", "0,1", "--svt-cutoff", "3"}},
	{"stable-em", []string{"--classes", "0,1"}},
	{"private-learner", []string{"--classes", "0,1"}},
	{"private-knn", []string{"--classes", "0,1", "--sigma", "5", "--sample-rate", "0.01", "--knn-k", "6"}},
	{"dp-logreg", []string{"--classes", "0,1"}},
	{"cell-histogram", []string{"--classes", "0,1"}},
}

const spendEpsilon = "0.5"

// spendEndings are the ways a run ends.
var spendEndings = []struct {
	name  string
	short bool // also under -short
}{
	{"exhausted", true}, // every public row a query: the budget runs out
	{"fewer", true},     // five queries, far fewer than the budget affords
	{"stdin", true},     // the public rows on stdin, a stream that ends early
	{"failed", false},   // a malformed public row after queries were answered
	{"interrupted", false},
}

// spendFigures are what one run showed and recorded.
type spendFigures struct {
	report  float64 // the smallest ε the report states as spent; NaN: no report
	ledger  float64 // the ledger's total for the run alone
	bar     float64 // the bar's last "ε spent"; NaN: it showed none
	html    float64 // the HTML chart's last point; NaN: no HTML
	entries []byte  // the run's ledger lines
}

func TestSpendFiguresNeverBelowReport(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("signals are POSIX")
	}
	t.Parallel()
	bin := pateBinary(t)
	data := t.TempDir()
	sens := filepath.Join(data, "sens.csv")
	writeSpendSensitive(t, sens, 3000)
	pub := filepath.Join(data, "pub.parquet")
	writeBigPublic(t, pub, 4000)
	stdinCSV := filepath.Join(data, "stdin.csv")
	writeBigCSV(t, stdinCSV, 300)
	bad := filepath.Join(data, "bad.csv")
	writeBigCSV(t, bad, 60_000)
	appendLine(t, bad, "1,2,3\n") // one field too many: the strict public reader fails there
	var big string
	if !testing.Short() {
		big = filepath.Join(data, "big.parquet")
		writeBigPublic(t, big, 2_000_000)
	}

	for _, m := range spendMechanisms {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			var runs []spendFigures
			for _, end := range spendEndings {
				if testing.Short() && !end.short {
					continue
				}
				f := spendRun(t, bin, m.name, m.flags, end.name, sens, pub, stdinCSV, bad, big)
				t.Logf("%s: report %g, ledger %g, bar %g, html %g", end.name, f.report, f.ledger, f.bar, f.html)
				checkSpend(t, end.name, f)
				runs = append(runs, f)
			}
			checkComposed(t, runs)
		})
	}
}

// spendRun runs one mechanism to one ending, in a ledger of its own, and
// collects its figures.
func spendRun(t *testing.T, bin, mech string, flags []string, end, sens, pub, stdinCSV, bad, big string) spendFigures {
	t.Helper()
	dir := t.TempDir()
	rep, html := filepath.Join(dir, "report.json"), filepath.Join(dir, "report.html")
	led := filepath.Join(dir, "ledger")
	args := []string{"label", "--private", sens, "--label", "y", "--features", "x,z", "--epsilon", spendEpsilon,
		"--delta", "1e-5", "--ledger", led, "--dataset", "spend", "-o", filepath.Join(dir, "out.arrow"),
		"--report", rep, "--report-html", html}
	if mech != "default" {
		args = append(args, "--mechanism", mech)
	}
	args = append(args, flags...)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PATE_PROGRESS=always")
	switch end {
	case "exhausted":
		args = append(args, "--public", pub, "--teachers-only", "--batch-size", "1024")
	case "fewer":
		args = append(args, "--public", pub, "--teachers-only", "--max-queries", "5", "--batch-size", "1024")
	case "stdin":
		args = append(args, "--public", "-", "--max-queries", "1000")
		in, err := os.Open(stdinCSV)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		cmd.Stdin = in
	case "failed":
		args = append(args, "--public", bad, "--teachers-only", "--batch-size", "1024")
	case "interrupted":
		args = append(args, "--public", big, "--teachers-only", "--batch-size", "8192")
	}
	cmd.Args = append([]string{bin}, args...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var err error
	if end == "interrupted" {
		shown := regexp.MustCompile(`ε spent [0-9.]+|on release`)
		waitFor(t, 60*time.Second, func() bool { return shown.MatchString(stderr.String()) })
		// Let the bar draw more than its first figures.
		time.Sleep(150 * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case end == "interrupted" && err == nil:
		// A run whose budget ran out early streams its last rows fast: it
		// may finish before the signal. It is then a run that ended.
		t.Logf("%s: the run finished before the signal", end)
	case end == "interrupted":
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Fatalf("%s: want exit %d, got %v; stderr: %s", end, exitInterrupted, err, stderr.String())
		}
	case end == "failed":
		if err == nil {
			t.Fatalf("%s: the run did not fail; stderr: %s", end, stderr.String())
		}
	case err != nil:
		t.Fatalf("%s: %v; stderr: %s", end, err, stderr.String())
	}
	f := spendFigures{report: math.NaN(), bar: math.NaN(), html: math.NaN()}
	f.bar = lastBarEpsilon(stderr.String())
	if b, err := os.ReadFile(rep); err == nil {
		f.report = statedSpend(t, b)
	}
	if b, err := os.ReadFile(html); err == nil {
		f.html = htmlFinalEpsilon(t, b)
	}
	d := onlyDataset(t, led)
	f.ledger = d.Epsilon
	f.entries = ledgerBytes(t, led)
	return f
}

// checkSpend holds one run's figures to the property.
func checkSpend(t *testing.T, end string, f spendFigures) {
	t.Helper()
	// The ledger's figure and the report's are rounded up to 6 decimals,
	// the bar's to 3: each is ≥ the exact figure, so a bar is compared
	// with a figure rounded up as it is.
	if !math.IsNaN(f.report) {
		if !(f.ledger >= f.report) {
			t.Errorf("%s: the ledger's total ε %g is below the report's spend %g", end, f.ledger, f.report)
		}
		if !math.IsNaN(f.bar) && !(f.bar >= f.report) {
			t.Errorf("%s: the bar's last ε spent %g is below the report's spend %g", end, f.bar, f.report)
		}
		if !math.IsNaN(f.html) && !(f.html >= f.report) {
			t.Errorf("%s: the HTML report's ε %g is below the report's spend %g", end, f.html, f.report)
		}
	} else if !math.IsNaN(f.bar) && !(rdp.RoundUp(f.ledger, 3) >= f.bar) {
		// No report: the run stopped; what the bar showed was released.
		t.Errorf("%s: the ledger charged ε %g, below the %g the bar showed", end, f.ledger, f.bar)
	}
	if end == "failed" && math.IsInf(f.ledger, 1) {
		return // charged its maximum, unbounded: nothing is below it
	}
	if math.IsNaN(f.ledger) || f.ledger < 0 {
		t.Errorf("%s: the ledger's total ε %g", end, f.ledger)
	}
}

// checkComposed: the runs of one mechanism composed in one ledger are at
// least each alone (and every pair of them too).
func checkComposed(t *testing.T, runs []spendFigures) {
	t.Helper()
	compose := func(rs ...spendFigures) float64 {
		dir := t.TempDir()
		var all []byte
		for _, r := range rs {
			all = append(all, r.entries...)
		}
		if err := os.WriteFile(filepath.Join(dir, strings.Repeat("0", 64)+".jsonl"), all, 0o600); err != nil {
			t.Fatal(err)
		}
		return onlyDataset(t, dir).Epsilon
	}
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			c := compose(runs[i], runs[j])
			if !(c >= runs[i].ledger && c >= runs[j].ledger) {
				t.Errorf("runs %d and %d composed: ε %g, below one alone (%g, %g)", i, j, c, runs[i].ledger, runs[j].ledger)
			}
		}
	}
	if len(runs) > 0 {
		c := compose(runs...)
		for i, r := range runs {
			if !(c >= r.ledger) {
				t.Errorf("all runs composed: ε %g, below run %d alone (%g)", c, i, r.ledger)
			}
		}
	}
}

// statedSpend is the smallest ε a report states as spent: any of its
// readings is a claim a user may take.
func statedSpend(t *testing.T, b []byte) float64 {
	t.Helper()
	rep, err := label.ParseReport(b)
	if err != nil {
		t.Fatal(err)
	}
	sp := rep.Spent
	eps := math.Min(float64(sp.EpsilonImproved), float64(sp.EpsilonClassic))
	for _, r := range []*report.Float{sp.EpsilonGDP, sp.EpsilonPure} {
		if r != nil {
			eps = math.Min(eps, float64(*r))
		}
	}
	if math.IsInf(eps, 1) || math.IsNaN(eps) {
		t.Fatalf("the report states no spend: %s", b)
	}
	return eps
}

var (
	barEpsilon  = regexp.MustCompile(`ε spent ([0-9]+\.[0-9]+)`)
	htmlEpsilon = regexp.MustCompile(`data-final-epsilon="([^"]+)"`)
)

// lastBarEpsilon is the last "ε spent" the bar drew (NaN: none).
func lastBarEpsilon(stderr string) float64 {
	m := barEpsilon.FindAllStringSubmatch(stderr, -1)
	if len(m) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(m[len(m)-1][1], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// htmlFinalEpsilon is the last point of the HTML report's ε chart (NaN:
// the chart has none).
func htmlFinalEpsilon(t *testing.T, b []byte) float64 {
	t.Helper()
	m := htmlEpsilon.FindSubmatch(b)
	if m == nil {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("data-final-epsilon %q: %v", m[1], err)
	}
	return v
}

// writeSpendSensitive writes a sensitive CSV of n rows (x, z, y) on the
// public rows' grid, y a noisy threshold of x + z.
func writeSpendSensitive(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "x,z,y")
	for i := range n {
		// Distinct rows: class discovery counts a repeated row once.
		x, z := float64(i%19-9)+float64(i%101)/101, (i/19)%7
		y := 0
		if x+float64(z) > 1 {
			y = 1
		}
		if i%13 == 0 {
			y = 1 - y
		}
		fmt.Fprintf(w, "%g,%d,%d\n", x, z, y)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPrivateKNNLedgerOrders is the review's counterexample: one
// private-knn answer at ε = 8 (σ 1.13, γ 0.01, k 6) is charged a ρ that
// holds on the Rényi orders 2..4; its report converts it there (ε 3.089),
// and the ledger must not read it at order ≈ 167 (it said 0.0712).
func TestPrivateKNNLedgerOrders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rep := filepath.Join(dir, "report.json")
	code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--mechanism", "private-knn", "--classes", "0,1",
		"--epsilon", "8", "--delta", "1e-5", "--sigma", "1.13", "--sample-rate", "0.01", "--knn-k", "6",
		"--max-queries", "1", "--teachers-only", "--dataset", "demo", "--ledger", filepath.Join(dir, "ledger"),
		"--report", rep, "-q", "-o", filepath.Join(dir, "out.arrow"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	stated := statedSpend(t, b)
	if stated < 3 {
		t.Fatalf("the report states ε %g, want ≈ 3.089 (order 4)", stated)
	}
	d := onlyDataset(t, filepath.Join(dir, "ledger"))
	if !(d.Epsilon >= stated) {
		t.Fatalf("the ledger's total ε %g is below the report's %g", d.Epsilon, stated)
	}
	if d.MaxOrder != 4 {
		t.Errorf("the ledger's total holds on the orders 2..%d, want 2..4", d.MaxOrder)
	}
}
