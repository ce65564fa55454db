package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestChosenMechanismMetadata: when the default plan's chooser picks
// dp-logreg (breast cancer: about one row per class and teacher), every
// output says pate.mechanism dp-logreg — the mechanism that ran — not the
// planned confident-gnmax: an Arrow file, a Parquet file, an Arrow stream
// in a file and on standard output, and pate predict's outputs of the
// labeler the run saved. (Before, pate.mechanism was written when the
// output was created, before the run chose, and never corrected.)
func TestChosenMechanismMetadata(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := []string{"label", "--private", "testdata/breast_cancer.parquet", "--label", "label", "--keep", "mean_radius",
		"--public", "testdata/breast_cancer.parquet", "--epsilon", "1", "--delta", "1e-5", "--classes", "0,1", "-q", "--no-ledger"}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	// The value must read back exact, with no padding: an equality check
	// on it is what a user writes. An Arrow IPC file is also read as
	// readers of the file format read it, from the schema in its footer.
	fileMechanism := func(t *testing.T, path string) string {
		t.Helper()
		s, recs := readAll(t, path, mem)
		release(recs)
		v, _ := s.Metadata().GetValue("pate.mechanism")
		if filepath.Ext(path) == ".arrow" {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fr, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
			if err != nil {
				t.Fatalf("not an Arrow IPC file: %v", err)
			}
			defer fr.Close()
			if footer, _ := fr.Schema().Metadata().GetValue("pate.mechanism"); footer != v {
				t.Errorf("pate.mechanism: %q in the footer's schema, %q in the leading one", footer, v)
			}
		}
		return v
	}
	streamMechanism := func(t *testing.T, stdout string) string {
		t.Helper()
		r, err := ipc.NewReader(strings.NewReader(stdout), ipc.WithAllocator(mem))
		if err != nil {
			t.Fatalf("stdout is not an Arrow IPC stream: %v", err)
		}
		defer r.Release()
		for r.Next() {
		}
		v, _ := r.Schema().Metadata().GetValue("pate.mechanism")
		return v
	}
	labeler := filepath.Join(dir, "bc.labeler")
	tests := []struct {
		name  string
		extra []string
		out   string // "" : standard output
		want  string
	}{
		{"arrow file", []string{"--seed", "11", "--save-labeler", labeler}, "o.arrow", "dp-logreg"},
		{"parquet file", []string{"--seed", "12"}, "o.parquet", "dp-logreg"},
		{"stream file", []string{"--seed", "13", "--format", "stream"}, "o.arrows", "dp-logreg"},
		{"stream on stdout", []string{"--seed", "14"}, "", "dp-logreg"},
		// Five teachers see enough rows each: the chooser keeps PATE.
		{"PATE kept, stream on stdout", []string{"--seed", "15", "--teachers", "5"}, "", "confident-gnmax"},
		{"PATE kept, arrow file", []string{"--seed", "16", "--teachers", "5"}, "p5.arrow", "confident-gnmax"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string(nil), base...), tc.extra...)
			out := "-"
			if tc.out != "" {
				out = filepath.Join(dir, tc.out)
			}
			code, stdout, stderr := pate(t, append(args, "-o", out)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var got string
			if tc.out == "" {
				got = streamMechanism(t, stdout)
			} else {
				got = fileMechanism(t, out)
			}
			if got != tc.want {
				t.Errorf("pate.mechanism = %q, want %s (the mechanism the chooser picked)", got, tc.want)
			}
		})
	}
	// pate predict with the saved labeler carries the saving run's mechanism.
	for _, out := range []string{"p.arrow", "p.parquet", ""} {
		name := out
		if name == "" {
			name = "stdout"
		}
		t.Run("predict "+name, func(t *testing.T) {
			path := "-"
			if out != "" {
				path = filepath.Join(dir, out)
			}
			code, stdout, stderr := pate(t, "predict", "--labeler", labeler, "--public", "testdata/breast_cancer.parquet", "--keep", "mean_radius", "-q", "-o", path)
			if code != 0 {
				t.Fatalf("pate predict: exit %d: %s", code, stderr)
			}
			var got string
			if out == "" {
				got = streamMechanism(t, stdout)
			} else {
				got = fileMechanism(t, path)
			}
			if got != "dp-logreg" {
				t.Errorf("pate predict: pate.mechanism = %q, want dp-logreg", got)
			}
		})
	}
}
