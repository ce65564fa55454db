package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pate-tool/pate/label"
)

// htmlRun runs pate label with --report and --report-html and returns the
// report and the page.
func htmlRun(t *testing.T, args ...string) (*label.Report, string) {
	t.Helper()
	dir := t.TempDir()
	rp, hp := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	args = append([]string{"label", "-q", "--no-ledger", "-o", filepath.Join(dir, "o.arrow"), "--report", rp, "--report-html", hp}, args...)
	if code, _, stderr := pate(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := label.ParseReport(b)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(hp)
	if err != nil {
		t.Fatal(err)
	}
	return rep, string(page)
}

// outcomeField is the value of the Outcome table's row data-field name.
func outcomeField(page, name string) (string, bool) {
	m := regexp.MustCompile(`data-field="` + regexp.QuoteMeta(name) + `">([^<]*)<`).FindStringSubmatch(page)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// TestHTMLReportOfRuns: the HTML page of a default run (PATE and a student
// chosen by the plan), of a cell-histogram run and of a dp-logreg run tells
// the truth about each: who labelled the rows, the ε spent as it grew
// (never below the report's stated spend), no teachers or queries where
// none were, and the audit's comparisons explained.
func TestHTMLReportOfRuns(t *testing.T) {
	t.Parallel()
	adult := []string{"--private", "testdata/adult_train.parquet", "--label", "income", "--public", "testdata/adult_public.parquet",
		"--epsilon", "1", "--delta", "1e-5"}
	bc := []string{"--private", "testdata/breast_cancer.parquet", "--label", "label", "--keep", "mean_radius",
		"--public", "testdata/breast_cancer.parquet", "--epsilon", "1", "--delta", "1e-5", "--classes", "0,1"}
	tests := []struct {
		name  string
		args  []string
		mech  string
		model bool // one DP model labels every row
	}{
		{"default run: PATE and a student", append(adult, "--seed", "21"), "confident-gnmax", false},
		// Small noise for many queries: the budget stops the queries, the
		// step that did not fit charged (one threshold check more than
		// the queries put), and the student labels the rest.
		{"stopped on the budget", append(adult, "--seed", "24", "--classes", "0,1", "--sigma1", "150", "--sigma2", "60",
			"--threshold", "200", "--max-queries", "3000"), "confident-gnmax", false},
		{"cell-histogram", append(bc, "--seed", "22", "--mechanism", "cell-histogram"), "cell-histogram", true},
		{"dp-logreg chosen by the default plan", append(bc, "--seed", "23"), "dp-logreg", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, page := htmlRun(t, tc.args...)
			if rep.Mechanism != tc.mech {
				t.Fatalf("the run used %s, want %s", rep.Mechanism, tc.mech)
			}
			if strings.HasPrefix(tc.name, "stopped") && !rep.Budget.StoppedOn {
				t.Fatalf("the run did not stop on the budget")
			}
			src := rep.Sources
			if src == nil {
				t.Fatal("the report has no sources")
			}
			// Who labelled the rows, in the Outcome, as the report counts them.
			if v, _ := outcomeField(page, "source_teachers"); v != strconv.FormatInt(src.Teachers, 10) {
				t.Errorf("rows labelled by the %s: page %q, report %d", map[bool]string{true: "model", false: "teachers"}[tc.model], v, src.Teachers)
			}
			if v, _ := outcomeField(page, "source_abstained"); v != strconv.FormatInt(src.Abstained, 10) {
				t.Errorf("rows left without a label: page %q, report %d", v, src.Abstained)
			}
			if rep.Student != nil {
				if v, ok := outcomeField(page, "source_student"); !ok || v != strconv.FormatInt(src.Student, 10) || src.Student == 0 {
					t.Errorf("rows labelled by the student: page %q, report %d", v, src.Student)
				}
				if !strings.Contains(page, "Labelled by the "+rep.Student.Learner+" student") {
					t.Errorf("the Outcome does not name the student")
				}
			}
			if _, ok := outcomeField(page, "abstained"); ok && rep.Student != nil {
				t.Errorf("the Outcome counts the student's rows as abstained")
			}
			if tc.model {
				for _, bad := range []string{"<th>Teachers</th>", "Queries put", "Noisy argmaxes", "Threshold checks", `id="chart-epsilon"`, `id="chart-answered"`} {
					if strings.Contains(page, bad) {
						t.Errorf("a run of one model shows %q", bad)
					}
				}
				if !strings.Contains(page, "Labelled by "+tc.mech) {
					t.Errorf("the Outcome does not say %s labelled the rows", tc.mech)
				}
			} else {
				checkRunningEpsilon(t, rep, page)
			}
			if rep.Choice != nil && !strings.Contains(page, "two figures compared, not one recomputed") {
				t.Errorf("the audit's row of the choice is not explained")
			}
		})
	}
}

// checkRunningEpsilon: the ε-over-the-queries line climbs (it is not the
// final figure at every point) and ends at no less than the report's
// stated spend.
func checkRunningEpsilon(t *testing.T, rep *label.Report, page string) {
	t.Helper()
	tl := rep.Timeline
	if len(tl) < 3 {
		t.Fatalf("timeline of %d points", len(tl))
	}
	for i := 1; i < len(tl); i++ {
		if tl[i].Rho < tl[i-1].Rho || tl[i].Epsilon < tl[i-1].Epsilon {
			t.Fatalf("the timeline's spend decreases at point %d", i)
		}
	}
	last := tl[len(tl)-1]
	if last.Rho != rep.Spent.Rho || last.Epsilon != rep.Spent.EpsilonImproved {
		t.Errorf("last point ρ %v ε %v; the report spent ρ %v ε %v", last.Rho, last.Epsilon, rep.Spent.Rho, rep.Spent.EpsilonImproved)
	}
	if !(tl[0].Rho < last.Rho) {
		t.Errorf("the timeline holds the final ρ from its first point (%v): not the running figure", tl[0].Rho)
	}
	m := regexp.MustCompile(`class="spend"[^>]*data-final-epsilon="([^"]+)"[^>]*points="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no spend line on the page")
	}
	final, _ := strconv.ParseFloat(m[1], 64)
	if final < float64(rep.Spent.EpsilonImproved) {
		t.Errorf("the page's final ε %v is below the report's %v", final, rep.Spent.EpsilonImproved)
	}
	pts := strings.Fields(m[2])
	if pts[0][strings.Index(pts[0], ","):] == pts[len(pts)-1][strings.Index(pts[len(pts)-1], ","):] {
		t.Errorf("the spend line is flat: %s … %s", pts[0], pts[len(pts)-1])
	}
}
