package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/learners"
)

// TestLabelAdultUtility is the acceptance figure of `pate label`: 250
// logistic-regression teachers on adult_train, the first 1,500 rows of
// adult_public as queries (Confident-GNMax, ε = 2, δ = 1e-5, fixed seed), and
// a logistic-regression student trained on the answered rows, scored on the
// other 14,781 rows of adult_test (--teachers-only: the test trains the
// student itself).
func TestLabelAdultUtility(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains 250 teachers")
	}
	dir := t.TempDir()
	out, rep := filepath.Join(dir, "labeled.arrow"), filepath.Join(dir, "report.json")
	code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--max-queries", "1500", "--epsilon", "2", "--delta", "1e-5",
		"--seed", "20261121", "--teachers-only", "-o", out, "--report", rep, "--quiet")
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
	if r.Queries.PublicRows != 16281 || r.Queries.Seen > 1500 {
		t.Errorf("queries: %+v", r.Queries)
	}

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, labelled := readAll(t, out, mem)
	defer release(labelled)
	released := int64Column(t, labelled, "income")
	source := stringColumn(t, labelled, "pate_source")
	_, truthRecs := readAll(t, "testdata/adult_test.parquet", mem)
	defer release(truthRecs)
	truth := int64Column(t, truthRecs, "income")
	pubSchema, pub := readAll(t, "testdata/adult_public.parquet", mem)
	defer release(pub)

	// The student sees the public features and the released labels only.
	features := make([]string, 0)
	for _, f := range pubSchema.Fields() {
		features = append(features, f.Name)
	}
	enc, err := learners.FitEncoder(pubSchema, features, pub, learners.EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	X := learners.NewMatrix(0, enc.Dim())
	all := learners.NewMatrix(len(truth), enc.Dim())
	off := 0
	for _, rec := range pub {
		if err := enc.Encode(rec, X); err != nil {
			t.Fatal(err)
		}
		copy(all.Data[off*enc.Dim():], X.Data[:X.Rows*enc.Dim()])
		off += X.Rows
	}
	var rows []int
	correct := 0
	for i := 0; i < 1500; i++ {
		if source[i] == label.SourceTeachers {
			rows = append(rows, i)
			if released[i] == truth[i] {
				correct++
			}
		}
	}
	train := learners.NewMatrix(len(rows), enc.Dim())
	y := make([]int32, len(rows))
	for j, i := range rows {
		copy(train.Row(j), all.Row(i))
		y[j] = int32(released[i])
	}
	lr, err := learners.NewLearner("logreg", learners.LearnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	student, err := lr.Fit(train, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	test := learners.NewMatrix(len(truth)-1500, enc.Dim())
	copy(test.Data, all.Data[1500*enc.Dim():])
	pred := make([]int32, test.Rows)
	student.Predict(test, pred)
	hit := 0
	for i, p := range pred {
		if int64(p) == truth[1500+i] {
			hit++
		}
	}
	acc := float64(hit) / float64(len(pred))
	t.Logf("answered %d of %d queries (labels correct on %.1f%% of them); params %+v", r.Queries.Answered, r.Queries.Seen,
		100*float64(correct)/float64(max(1, len(rows))), r.Params)
	t.Logf("guarantee ε = %g (δ = %g); realized ε = %g improved / %g classic / %g GDP",
		r.Guarantee.Epsilon, r.Guarantee.Delta, r.Spent.EpsilonImproved, r.Spent.EpsilonClassic, *r.Spent.EpsilonGDP)
	t.Logf("student accuracy on the other %d rows of adult_test: %.2f%%", len(pred), 100*acc)
	if acc < 0.82 {
		t.Errorf("student accuracy %.4f < 0.82", acc)
	}
}

// TestLabelStreamToStdout checks the output contract for a pipe: an Arrow
// IPC stream with the pate.* metadata and the public columns, the label and
// pate_source.
func TestLabelStreamToStdout(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := pate(t, "label", "--private", "testdata/breast_cancer.parquet", "--label", "label",
		"--public", "testdata/breast_cancer.parquet", "--keep", "mean_radius", "--teachers", "10",
		"--mechanism", "gnmax", "--sigma", "2", "--classes", "0,1", "--delta", "1e-5", "--seed", "3", "-o", "-", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r, err := ipc.NewReader(strings.NewReader(stdout), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatalf("stdout is not an Arrow IPC stream: %v", err)
	}
	defer r.Release()
	s := r.Schema()
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, ","), "mean_radius,label,pate_source"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	if s.Field(1).Type.ID() != arrow.INT64 || !s.Field(1).Nullable {
		t.Errorf("label column %v, want nullable int64", s.Field(1))
	}
	for _, k := range []string{"pate.version", "pate.mechanism", "pate.epsilon", "pate.delta", "pate.report"} {
		if _, ok := s.Metadata().GetValue(k); !ok {
			t.Errorf("metadata has no %s", k)
		}
	}
	rows := 0
	for r.Next() {
		rows += int(r.Record().NumRows())
	}
	if rows != 569 {
		t.Errorf("%d rows, want 569", rows)
	}
}

// TestLabelFileMetadataHoldsFinalReport checks that the file output carries
// the complete report, equal to the --report file.
func TestLabelFileMetadataHoldsFinalReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, rep := filepath.Join(dir, "o.arrow"), filepath.Join(dir, "r.json")
	code, _, stderr := pate(t, "label", "--private", "testdata/breast_cancer.parquet", "--label", "label",
		"--public", "testdata/breast_cancer.parquet", "--keep", "mean_radius,mean_texture", "--teachers", "10",
		"--epsilon", "1", "--delta", "1e-5", "--classes", "0,1", "--seed", "5", "-o", out, "--report", rep, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s, recs := readAll(t, out, mem)
	release(recs)
	embedded, ok := s.Metadata().GetValue("pate.report")
	if !ok {
		t.Fatal("no pate.report")
	}
	var a, b label.Report
	if err := json.Unmarshal([]byte(embedded), &a); err != nil {
		t.Fatalf("embedded report: %v", err)
	}
	file, _ := os.ReadFile(rep)
	if err := json.Unmarshal(file, &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("embedded report differs from the report file:\n%s\n%s", ja, jb)
	}
	if eps, _ := s.Metadata().GetValue("pate.epsilon"); strings.TrimSpace(eps) != "1" {
		t.Errorf("pate.epsilon = %q, want 1", eps)
	}
	if a.Queries.Answered == 0 || float64(a.Spent.EpsilonImproved) > 1 {
		t.Errorf("report %+v", a.Queries)
	}
}
