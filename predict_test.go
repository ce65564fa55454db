package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// saveAdultLabeler runs pate label with a student of the given learner on
// the 16,281 Adult public rows and saves its labeler; it returns the
// labelled output and the labeler file.
func saveAdultLabeler(t *testing.T, learner string) (out, labeler string) {
	t.Helper()
	dir := t.TempDir()
	out, labeler = filepath.Join(dir, "labeled.arrow"), filepath.Join(dir, "adult.labeler")
	code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--teachers", "100", "--max-queries", "600",
		"--epsilon", "2", "--delta", "1e-5", "--seed", "20261124", "--student", learner,
		"--save-labeler", labeler, "-o", out, "--quiet", "--no-ledger")
	if code != 0 {
		t.Fatalf("pate label: exit %d: %s", code, stderr)
	}
	return out, labeler
}

// TestPredictMatchesStudent: pate predict with a labeler saved by pate label
// --student gives, on the 16,281 Adult public rows, exactly the labels the
// saving run's student wrote, labels every row as the student, and carries
// the saving run's guarantee and the labeler's hash.
func TestPredictMatchesStudent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		learner string
		long    bool // skipped under -short
	}{
		{"logreg", false},
		{"nb", true},
		{"tree", true},
		{"gbt", false},
		{"knn", true},
	}
	for _, tc := range tests {
		t.Run(tc.learner, func(t *testing.T) {
			t.Parallel()
			if tc.long && testing.Short() {
				t.Skip("one labelling run per learner")
			}
			labelled, labeler := saveAdultLabeler(t, tc.learner)
			pred := filepath.Join(t.TempDir(), "pred.arrow")
			code, _, stderr := pate(t, "predict", "--labeler", labeler, "--public", "testdata/adult_public.parquet",
				"-o", pred, "--batch-size", "1000", "--workers", "3")
			if code != 0 {
				t.Fatalf("pate predict: exit %d: %s", code, stderr)
			}

			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			_, want := readAll(t, labelled, mem)
			defer release(want)
			schema, got := readAll(t, pred, mem)
			defer release(got)
			wl, ws := int64Column(t, want, "income"), stringColumn(t, want, "pate_source")
			gl, gs := int64Column(t, got, "income"), stringColumn(t, got, "pate_source")
			if len(gl) != 16281 || len(wl) != 16281 {
				t.Fatalf("%d predicted rows, %d labelled, want 16281", len(gl), len(wl))
			}
			student := 0
			for i := range gl {
				if gs[i] != "student" {
					t.Fatalf("row %d: pate_source %q, want student", i, gs[i])
				}
				if ws[i] != "student" {
					continue
				}
				student++
				if gl[i] != wl[i] {
					t.Fatalf("row %d: predict says %d, the saving run's student %d", i, gl[i], wl[i])
				}
			}
			if student < 10000 {
				t.Fatalf("only %d rows labelled by the student", student)
			}

			md := schema.Metadata()
			hash, _ := md.GetValue("pate.labeler")
			if len(hash) != 64 {
				t.Fatalf("pate.labeler = %q, want a SHA-256", hash)
			}
			if eps, _ := md.GetValue("pate.epsilon"); eps != "2" {
				t.Errorf("pate.epsilon = %q, want the saving run's 2", eps)
			}
			var rep struct {
				Guarantee struct{ Epsilon float64 } `json:"guarantee"`
				Labeler   struct{ SHA256 string }   `json:"labeler"`
			}
			rs, _ := md.GetValue("pate.report")
			if err := json.Unmarshal([]byte(rs), &rep); err != nil {
				t.Fatalf("pate.report: %v", err)
			}
			if rep.Guarantee.Epsilon != 2 || rep.Labeler.SHA256 != hash {
				t.Errorf("pate.report: guarantee ε %g, labeler %q; want 2 and %q", rep.Guarantee.Epsilon, rep.Labeler.SHA256, hash)
			}
		})
	}
}

// TestPredictBadLabeler: a corrupted, truncated, future-version or foreign
// labeler file exits 2 with a one-line message and writes no output.
func TestPredictBadLabeler(t *testing.T) {
	t.Parallel()
	_, labeler := saveAdultLabeler(t, "logreg")
	good, err := os.ReadFile(labeler)
	if err != nil {
		t.Fatal(err)
	}
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		data []byte
		want string // in the message
	}{
		{"empty", nil, "not a valid labeler"},
		{"foreign", []byte("PAR1 not a labeler at all, but long enough to have a header and more"), "not a valid labeler"},
		{"magic only", good[:8], "truncated"},
		{"header only", good[:20], "truncated"},
		{"cut in the manifest", good[:len(good)/3], "truncated"},
		{"cut in the model", good[:len(good)-100], "truncated"},
		{"checksum cut", good[:len(good)-1], "truncated"},
		{"bit flip in the manifest", mod(func(b []byte) []byte { b[40] ^= 0x20; return b }), "checksum"},
		{"bit flip in the model", mod(func(b []byte) []byte { b[len(b)-40] ^= 1; return b }), "checksum"},
		{"bit flip in the checksum", mod(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "checksum"},
		{"bytes appended", append(append([]byte(nil), good...), 0), "after the checksum"},
		{"future version", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 2); return b }), "newer format"},
		{"version 0", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 0); return b }), "version 0"},
		{"huge manifest length", mod(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[12:], 1<<62); return b }), "truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			lf, out := filepath.Join(dir, "bad.labeler"), filepath.Join(dir, "out.arrow")
			if err := os.WriteFile(lf, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := pate(t, "predict", "--labeler", lf, "--public", "testdata/adult_public.parquet", "-o", out)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
			}
			if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line saying %q", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("an output was written (stat: %v)", err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("%d files in the output folder, want the labeler alone", len(ents))
			}
		})
	}
}

// TestSaveLabelerNeedsStudent: --save-labeler without a student to save
// (--teachers-only) is a usage error before anything runs.
func TestSaveLabelerNeedsStudent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--epsilon", "1", "--delta", "1e-5", "--teachers-only",
		"--save-labeler", filepath.Join(dir, "x.labeler"), "-o", filepath.Join(dir, "o.arrow"), "--no-ledger")
	if code != 2 || !strings.Contains(stderr, "--save-labeler needs a student") {
		t.Fatalf("exit %d, stderr %q; want 2 and --save-labeler needs a student", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files written, want none", len(ents))
	}
}
