package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
)

// labelRun is what one `pate label` run released, scored against the truth.
type labelRun struct {
	rows, answered, correct int64
	studentRows             int64
	studentCorrect          int64
	report                  label.Report
}

func (r labelRun) accuracy() float64 { return float64(r.correct) / float64(max(1, r.answered)) }
func (r labelRun) fraction() float64 { return float64(r.answered) / float64(max(1, r.rows)) }

// runAndScore runs pate label with args (plus -o and --report in a temp
// dir) and scores the released labels of column col against truth, row for
// row: the teachers' (mechanism's) labels and the student's separately.
func runAndScore(t *testing.T, truth []int64, col string, args ...string) labelRun {
	t.Helper()
	dir := t.TempDir()
	out, rep := filepath.Join(dir, "labeled.arrow"), filepath.Join(dir, "report.json")
	code, _, stderr := pate(t, append(append([]string{"label"}, args...), "-o", out, "--report", rep, "--quiet", "--no-ledger")...)
	if code != 0 {
		t.Fatalf("pate label %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var r labelRun
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r.report); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, recs := readAll(t, out, mem)
	defer release(recs)
	released := int64Column(t, recs, col)
	source := stringColumn(t, recs, label.SourceColumn)
	if len(released) != len(truth) {
		t.Fatalf("%d rows released, %d rows of truth", len(released), len(truth))
	}
	r.rows = int64(len(released))
	for i, v := range released {
		switch source[i] {
		case label.SourceTeachers:
			r.answered++
			if v == truth[i] {
				r.correct++
			}
		case label.SourceStudent:
			r.studentRows++
			if v == truth[i] {
				r.studentCorrect++
			}
		}
	}
	return r
}

func adultTruth(t *testing.T) []int64 {
	t.Helper()
	mem := memory.NewGoAllocator()
	_, recs := readAll(t, "testdata/adult_test.parquet", mem)
	defer release(recs)
	return int64Column(t, recs, "income")
}

// writeArrow writes recs (same schema) to an Arrow IPC file.
func writeArrow(t *testing.T, path string, schema *arrow.Schema, recs []arrow.Record) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// breastCancerSplit writes the first 380 rows of breast_cancer as the
// sensitive side and the other 189, without their label, as the public
// side, and returns the paths and the public rows' true labels.
func breastCancerSplit(t *testing.T, dir string) (sens, pub string, truth []int64) {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema, recs := readAll(t, "testdata/breast_cancer.parquet", mem)
	defer release(recs)
	tbl := array.NewTableFromRecords(schema, recs)
	defer tbl.Release()
	rec := func(lo, hi int64, withLabel bool) arrow.Record {
		var fields []arrow.Field
		var cols []arrow.Array
		for i, f := range schema.Fields() {
			if f.Name == "label" && !withLabel {
				continue
			}
			ch := array.NewChunkedSlice(tbl.Column(i).Data(), lo, hi)
			arr, err := array.Concatenate(ch.Chunks(), mem)
			ch.Release()
			if err != nil {
				t.Fatal(err)
			}
			fields = append(fields, f)
			cols = append(cols, arr)
		}
		r := array.NewRecord(arrow.NewSchema(fields, nil), cols, hi-lo)
		for _, c := range cols {
			c.Release()
		}
		return r
	}
	n := tbl.NumRows()
	s, p, l := rec(0, 380, true), rec(380, n, false), rec(380, n, true)
	defer s.Release()
	defer p.Release()
	defer l.Release()
	sens, pub = filepath.Join(dir, "bc_sensitive.arrow"), filepath.Join(dir, "bc_public.arrow")
	writeArrow(t, sens, s.Schema(), []arrow.Record{s})
	writeArrow(t, pub, p.Schema(), []arrow.Record{p})
	return sens, pub, int64Column(t, []arrow.Record{l}, "label")
}

// TestUtilityTable measures the README's utility table of the mechanisms: Adult
// (income) and breast_cancer, the four mechanisms, ε ∈ {0.5, 1, 2, 4},
// δ = 1e-5, fixed seeds, every public row a query; accuracy of the released
// labels on the answered rows (against the true labels), fraction answered,
// and, for the mechanisms that stop early (svt), the accuracy of a logreg
// student on the rows it labelled. Every run's guarantee must stay within
// its budget, and the table must be the README's, row for row (the runs are
// seeded): a change that moves a figure fails here until the README is
// regenerated (PATE_UTILITY_TABLE_OUT=file writes the table). It takes
// about a minute, so it runs only when asked:
//
//	PATE_UTILITY_TABLE=1 go test -run TestUtilityTable -v .
func TestUtilityTable(t *testing.T) {
	if os.Getenv("PATE_UTILITY_TABLE") == "" {
		t.Skip("set PATE_UTILITY_TABLE=1 to measure the README utility table (about a minute)")
	}
	dir := t.TempDir()
	bcSens, bcPub, bcTruth := breastCancerSplit(t, dir)
	type dataset struct {
		name    string
		truth   []int64
		col     string
		args    []string
		queries string // --max-queries of the confident-gnmax + student rows
	}
	sets := []dataset{
		{"Adult (income)", adultTruth(t), "income", []string{"--private", "testdata/adult_train.parquet", "--label", "income",
			"--public", "testdata/adult_public.parquet", "--teachers", "250"}, "1500"},
		{"breast_cancer", bcTruth, "label", []string{"--private", bcSens, "--label", "label", "--public", bcPub, "--teachers", "25"}, "60"},
	}
	mechs := []struct {
		name string
		args []string
	}{
		{"confident-gnmax", []string{"--mechanism", "confident-gnmax", "--teachers-only"}},
		{"gnmax", []string{"--mechanism", "gnmax", "--teachers-only"}},
		{"svt", []string{"--mechanism", "svt", "--student", "logreg"}},
		{"private-learner", []string{"--mechanism", "private-learner"}},
		{"stable-em", []string{"--mechanism", "stable-em"}},
		{"confident-gnmax + student", []string{"--mechanism", "confident-gnmax", "--student", "logreg", "--select", "first"}},
		{"stable-em + student", []string{"--mechanism", "stable-em", "--student", "logreg"}},
	}
	var b strings.Builder
	b.WriteString("| data | mechanism | ε | guarantee (ε, δ) | answered | accuracy of released labels | correct labels | student accuracy (rows) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, d := range sets {
		for _, m := range mechs {
			for _, eps := range []string{"0.5", "1", "2", "4"} {
				args := append(append(append([]string{}, d.args...), m.args...), "--epsilon", eps, "--delta", "1e-5",
					"--classes", "0,1", "--seed", "20261121")
				name := m.name
				if strings.HasSuffix(m.name, "student") {
					args = append(args, "--max-queries", d.queries)
					name = fmt.Sprintf("%s, first %s rows + student", strings.TrimSuffix(m.name, " + student"), d.queries)
				}
				r := runAndScore(t, d.truth, d.col, args...)
				checkWithinBudget(t, d.name+", "+name+", ε = "+eps, r, eps)
				st := "—"
				if r.studentRows > 0 {
					st = fmt.Sprintf("%.1f%% (%d)", 100*float64(r.studentCorrect)/float64(r.studentRows), r.studentRows)
				}
				fmt.Fprintf(&b, "| %s | %s | %s | (%g, %g) | %.1f%% (%d of %d) | %.1f%% | %d | %s |\n", d.name, name, eps,
					float64(r.report.Guarantee.Epsilon), float64(r.report.Guarantee.Delta),
					100*r.fraction(), r.answered, r.rows, 100*r.accuracy(), r.correct, st)
			}
		}
	}
	// svt with more teachers (Adult, ε = 2): the distances grow, the
	// teachers weaken.
	for _, k := range []string{"1000", "8000"} {
		r := runAndScore(t, sets[0].truth, "income", "--private", "testdata/adult_train.parquet", "--label", "income",
			"--public", "testdata/adult_public.parquet", "--teachers", k, "--mechanism", "svt", "--epsilon", "2", "--delta", "1e-5",
			"--classes", "0,1", "--seed", "20261121")
		checkWithinBudget(t, "Adult, svt, "+k+" teachers", r, "2")
		fmt.Fprintf(&b, "| Adult (income) | svt, %s teachers | 2 | (%g, %g) | %.1f%% (%d of %d) | %.1f%% | %d | — (released: %d of class 0, %d of class 1) |\n", k,
			float64(r.report.Guarantee.Epsilon), float64(r.report.Guarantee.Delta),
			100*r.fraction(), r.answered, r.rows, 100*r.accuracy(), r.correct, r.report.Released["0"], r.report.Released["1"])
	}
	t.Log("\n" + b.String())
	if p := os.Getenv("PATE_UTILITY_TABLE_OUT"); p != "" {
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if !strings.Contains(string(readme), row+"\n") {
			t.Errorf("the README's utility table lacks the row\n%s", row)
		}
	}
}

// checkWithinBudget: a run's guarantee stays within the budget it was
// given (ε as passed, δ = 1e-5), and its counts add up.
func checkWithinBudget(t *testing.T, what string, r labelRun, eps string) {
	t.Helper()
	budget, err := strconv.ParseFloat(eps, 64)
	if err != nil {
		t.Fatal(err)
	}
	if g := r.report.Guarantee; float64(g.Epsilon) > budget || float64(g.Delta) > 1e-5 {
		t.Errorf("%s: guarantee (%g, %g) exceeds the budget (%g, 1e-5)", what, g.Epsilon, g.Delta, budget)
	}
	if r.answered > r.rows || r.correct > r.answered || r.studentCorrect > r.studentRows || r.answered+r.studentRows > r.rows {
		t.Errorf("%s: counts do not add up: %+v", what, r)
	}
}
