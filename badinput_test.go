package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLabelBadInputs: each bad input exits 2 with a message naming the file
// and the column or flag, and leaves no output file behind.
func TestLabelBadInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sensCSV := write("sens.csv", "x,z,unit,y\n1,2,a,0\n2,3,a,1\n3,4,b,0\n4,5,b,1\n5,6,c,0\n6,7,c,1\n")
	pubStrBC := write("pub_str_bc.csv", "mean_radius\nfoo\nbar\n")
	whole, err := os.ReadFile("testdata/adult_train.parquet")
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.parquet")
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := write("garbage.parquet", "PAR1 this is not parquet at all PAR1")

	bc := "testdata/breast_cancer.parquet"
	base := func(extra ...string) []string {
		args := []string{"label", "--private", bc, "--label", "label", "--public", bc, "--keep", "mean_radius",
			"--teachers", "5", "--epsilon", "1", "--delta", "1e-5", "--classes", "0,1", "--seed", "1", "--quiet"}
		return append(args, extra...)
	}
	tests := []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"misspelt label", []string{"label", "--private", bc, "--label", "lable", "--public", bc, "--epsilon", "1", "--delta", "1e-5", "--quiet"},
			[]string{bc, `"lable"`, "--label"}},
		{"label absent from sensitive", []string{"label", "--private", bc, "--label", "income", "--public", "testdata/adult_public.parquet", "--epsilon", "1", "--delta", "1e-5", "--quiet"},
			[]string{bc, `"income"`}},
		{"misspelt feature", base("--features", "mean_radius,mean_radios"), []string{bc, `"mean_radios"`, "--features"}},
		{"public lacks feature", []string{"label", "--private", sensCSV, "--label", "y", "--public", write("pub_nox.csv", "z\n1\n2\n"), "--teachers", "2", "--epsilon", "1", "--delta", "1e-5", "--classes", "0,1", "--quiet"},
			[]string{"pub_nox.csv", `"x"`}},
		// A sensitive CSV takes its feature types from the public file, so
		// only a typed sensitive file can disagree with it. (Fewer units or
		// rows than teachers is not an error: TestUnitsBelowTeachersStillRuns.)
		{"feature type differs from the public file", []string{"label", "--private", bc, "--label", "label", "--public", pubStrBC, "--features", "mean_radius", "--teachers", "2", "--epsilon", "1", "--delta", "1e-5", "--classes", "0,1", "--quiet"},
			[]string{`"mean_radius"`, bc, "pub_str_bc.csv"}},
		{"label type differs from --label-type", base("--label-type", "string"), []string{bc, `"label"`, "--label-type"}},
		{"unknown --label-type", base("--label-type", "float"), []string{"--label-type", "float"}},
		{"truncated parquet", []string{"label", "--private", truncated, "--label", "income", "--public", "testdata/adult_public.parquet", "--epsilon", "1", "--delta", "1e-5", "--quiet"},
			[]string{"truncated.parquet"}},
		{"garbage parquet", []string{"label", "--private", bc, "--label", "label", "--public", garbage, "--epsilon", "1", "--delta", "1e-5", "--quiet"},
			[]string{"garbage.parquet"}},
		{"missing file", []string{"label", "--private", filepath.Join(dir, "nope.parquet"), "--label", "y", "--public", bc, "--epsilon", "1", "--delta", "1e-5"},
			[]string{"nope.parquet"}},
		{"epsilon zero", base("--epsilon", "0"), []string{"--epsilon"}},
		{"epsilon negative", base("--epsilon", "-1"), []string{"--epsilon"}},
		{"delta one", base("--delta", "1"), []string{"--delta"}},
		{"delta zero", base("--delta", "0"), []string{"--delta"}},
		{"teachers zero", base("--teachers", "0"), []string{"--teachers"}},
		{"batch size zero", base("--batch-size", "0"), []string{"--batch-size"}},
		{"negative sigma", base("--mechanism", "gnmax", "--sigma", "-3"), []string{"--sigma"}},
		{"unknown mechanism", base("--mechanism", "magic"), []string{"--mechanism", "magic"}},
		{"unknown learner", base("--learner", "svm"), []string{"svm"}},
		{"public column named like the label", []string{"label", "--private", bc, "--label", "label", "--public", bc, "--teachers", "5", "--epsilon", "1", "--delta", "1e-5", "--quiet"},
			[]string{`"label"`, "--keep"}},
		{"flag after positional argument", append(base(), "extra.parquet", "--epsilon", "100"), []string{"extra.parquet"}},
		{"noise not given and no budget", []string{"label", "--private", bc, "--label", "label", "--public", bc, "--keep", "mean_radius", "--delta", "1e-5", "--quiet"},
			[]string{"--epsilon"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.arrow")
			args := tc.args
			// -o goes before any positional argument (urfave/cli stops at one).
			args = append(args[:1:1], append([]string{"-o", out}, args[1:]...)...)
			code, _, stderr := pate(t, args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
			msg := strings.TrimSpace(stderr)
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("message is not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not name %s", msg, w)
				}
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
				t.Errorf("message looks like a panic: %q", msg)
			}
			entries, _ := os.ReadDir(outDir)
			for _, e := range entries {
				t.Errorf("left %s behind", e.Name())
			}
		})
	}
}
