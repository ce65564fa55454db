package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
)

// TestLabelHelpLayout: pate label --help lists the flags every run needs
// first, in the order a command line gives them, then the others in named
// groups, no line wider than 100 characters.
func TestLabelHelpLayout(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := pate(t, "label", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for i, line := range strings.Split(stdout, "\n") {
		if n := utf8.RuneCountInString(line); n > helpWidth {
			t.Errorf("line %d has %d characters: %q", i+1, n, line)
		}
	}
	required := strings.Index(stdout, requiredHelp+":")
	if required < 0 {
		t.Fatalf("no %q section:\n%s", requiredHelp, stdout)
	}
	last := required
	for _, flag := range []string{"--private", "--label", "--public", "--epsilon", "--delta", "--output value, -o"} {
		i := strings.Index(stdout[required:], "\n   "+flag)
		if i < 0 || required+i < last {
			t.Errorf("%s is not listed in order under %q", flag, requiredHelp)
			continue
		}
		last = required + i
	}
	for _, c := range labelCategories {
		if i := strings.Index(stdout, "\n"+c.name+":\n"); i < last {
			t.Errorf("group %q missing or before the flags every run needs", c.name)
		}
	}
	if strings.Contains(stdout, "\nOther:\n   --") && !strings.Contains(stdout, "\nOther:\n   --help") {
		t.Errorf("a flag is in no group:\n%s", stdout[strings.Index(stdout, "\nOther:"):])
	}
}

// TestLabelUsageOneLine: a missing required flag or an unknown one is one
// line on stderr (not the whole help), exit 2; an unknown flag gets the
// nearest name.
func TestLabelUsageOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no flags", []string{"label"}, "missing --private, --label, --public, --epsilon, --delta, -o"},
		{"some missing", []string{"label", "--private", "x.parquet", "--label", "y"}, "missing --public, --epsilon, --delta, -o"},
		{"explicit noise stands in for ε", []string{"label", "--private", "x.parquet", "--sigma", "40"}, "missing --label, --public, --delta, -o"},
		{"misspelt flag", []string{"label", "--privat", "x.parquet"}, "unknown flag --privat: did you mean --private?"},
		{"misspelt epsilon", []string{"label", "--epsilom", "1"}, "did you mean --epsilon?"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := pate(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty:\n%s", stdout)
			}
			if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr (%d lines) = %q, want one line with %q", lines, stderr, tc.want)
			}
		})
	}
}

// TestLabelWarnings: a plan whose noise exceeds the teachers' widest vote
// margin, or a δ above label.DeltaSaneBound, is warned of; a sane run is
// not.
func TestLabelWarnings(t *testing.T) {
	t.Parallel()
	base := []string{"label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--classes", "0,1", "--seed", "7", "--no-ledger"}
	tests := []struct {
		name string
		args []string
		want []string // warnings, by a word each; nil: none
	}{
		{"sane", []string{"--epsilon", "1", "--delta", "1e-5"}, nil},
		{"ε 0.1 with PATE named", []string{"--mechanism", "confident-gnmax", "--epsilon", "0.1", "--delta", "1e-5"}, []string{"larger than the 250 teachers"}},
		{"σ 40 with 20 teachers", []string{"--mechanism", "gnmax", "--sigma", "40", "--delta", "1e-5", "--teachers", "20"}, []string{"larger than the 20 teachers"}},
		{"δ 0.01", []string{"--epsilon", "1", "--delta", "0.01"}, []string{"δ = 0.01 is above 0.0001"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out.arrow")
			code, _, stderr := pate(t, append(append(slices.Clone(base), tc.args...), "-o", out)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := strings.Count(stderr, "pate: warning:"); got != len(tc.want) {
				t.Errorf("%d warnings, want %d:\n%s", got, len(tc.want), stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("no warning with %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestLabelDefaultLabelsEveryRow is the acceptance of the default plan:
// the README's first command at ε = 1 with no tuning flag labels every
// Adult row, through the teachers or the student, and agrees with the
// true income on at least 81% of them; the summary says so in one line;
// the report records the command line (without the seed's value), the
// feature columns and the plan, and pate audit accepts it.
func TestLabelDefaultLabelsEveryRow(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains 250 teachers")
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	out, rep := filepath.Join(dir, "labeled.arrow"), filepath.Join(dir, "report.json")
	code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--epsilon", "1", "--delta", "1e-5", "-o", out,
		"--report", rep, "--seed", "1", "--no-ledger")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "public rows labelled by: the teachers ") || !strings.Contains(stderr, ", nobody 0 (") {
		t.Errorf("the summary does not say every row was labelled:\n%s", stderr)
	}

	_, truthRecs := readAll(t, "testdata/adult_test.parquet", mem)
	truth := int64Column(t, truthRecs, "income")
	release(truthRecs)
	_, recs := readAll(t, out, mem)
	got, sources := int64Column(t, recs, "income"), stringColumn(t, recs, label.SourceColumn)
	release(recs)
	if len(got) != len(truth) {
		t.Fatalf("%d rows, want %d", len(got), len(truth))
	}
	agree := 0
	for i, v := range got {
		if v < 0 || (sources[i] != label.SourceTeachers && sources[i] != label.SourceStudent) {
			t.Fatalf("row %d: label %d from %q, want a label from the teachers or the student", i, v, sources[i])
		}
		if v == truth[i] {
			agree++
		}
	}
	if acc := float64(agree) / float64(len(got)); acc < 0.81 {
		t.Errorf("agreement with the true income %.4f, want ≥ 0.81", acc)
	} else {
		t.Logf("agreement with the true income %.4f", acc)
	}

	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var r label.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(r.CommandLine, "--seed"); i < 0 || r.CommandLine[i+1] == "1" || !slices.Contains(r.CommandLine, "--epsilon") {
		t.Errorf("command line %q: want it whole, the seed's value left out", r.CommandLine)
	}
	if len(r.Features) != 14 || !slices.Contains(r.Features, "age") {
		t.Errorf("features %q, want Adult's 14", r.Features)
	}
	if r.Plan == "" || r.Student == nil || r.Selection != label.SelectUncertain {
		t.Errorf("plan %q, student %v, selection %q: want the default plan recorded", r.Plan, r.Student, r.Selection)
	}
	if code, stdout, stderr := pate(t, "audit", rep); code != 0 {
		t.Errorf("pate audit: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestLabelReportRecordsTheRun: the report records the command line (a
// seed's value left out, in both spellings), the feature columns used and
// the plan, and pate audit accepts it; --teachers-only gives the
// teacher-only stream, with no student and rows left unlabelled.
func TestLabelReportRecordsTheRun(t *testing.T) {
	t.Parallel()
	base := []string{"label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--features", "age,education_num,hours_per_week",
		"--classes", "0,1", "--teachers", "20", "--epsilon", "2", "--delta", "1e-5", "--no-ledger", "-q"}
	tests := []struct {
		name        string
		args        []string
		wantStudent bool
		wantPlan    string
	}{
		{"default plan, --seed N", []string{"--seed", "987654321"}, true, "student"},
		{"teacher-only stream, --seed=N", []string{"--seed=987654321", "--teachers-only", "--max-queries", "300"}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, rep := filepath.Join(dir, "out.arrow"), filepath.Join(dir, "report.json")
			code, _, stderr := pate(t, append(append(slices.Clone(base), tc.args...), "-o", out, "--report", rep)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(rep)
			if err != nil {
				t.Fatal(err)
			}
			var r label.Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			line := strings.Join(r.CommandLine, " ")
			if strings.Contains(line, "987654321") || !strings.Contains(line, "--features age,education_num,hours_per_week") {
				t.Errorf("command line %q: want it whole, the seed's value left out", line)
			}
			if want := []string{"age", "education_num", "hours_per_week"}; !slices.Equal(r.Features, want) {
				t.Errorf("features %q, want %q", r.Features, want)
			}
			if (r.Student != nil) != tc.wantStudent || !strings.Contains(r.Plan, tc.wantPlan) || (tc.wantPlan == "") != (r.Plan == "") {
				t.Errorf("student %v, plan %q: want a student %v, a plan with %q", r.Student, r.Plan, tc.wantStudent, tc.wantPlan)
			}
			if !tc.wantStudent && (r.Sources == nil || r.Sources.Abstained == 0 || r.Sources.Student != 0) {
				t.Errorf("sources %+v: the teacher-only stream leaves rows unlabelled and has no student", r.Sources)
			}
			if code, stdout, stderr := pate(t, "audit", rep); code != 0 {
				t.Errorf("pate audit: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}
