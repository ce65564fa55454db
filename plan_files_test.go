package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePlanCSVs writes a sensitive and a public CSV with a numeric and a
// categorical feature (which encodes to a column per kept category, so
// that the encoded count differs from the column count).
func writePlanCSVs(t *testing.T, dir string) (sens, pub string) {
	t.Helper()
	colors := []string{"red", "green", "blue", "black"}
	var s, p strings.Builder
	s.WriteString("x,color,id,y\n")
	p.WriteString("x,color,id\n")
	for i := range 400 {
		fmt.Fprintf(&s, "%d.5,%s,%d,%d\n", i%7, colors[i%4], i, (i%7)/4)
		fmt.Fprintf(&p, "%d.25,%s,%d\n", i%5, colors[(i+1)%4], 1000+i)
	}
	sens, pub = filepath.Join(dir, "sens.csv"), filepath.Join(dir, "pub.csv")
	if err := os.WriteFile(sens, []byte(s.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, []byte(p.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return sens, pub
}

type planJSON struct {
	Choice struct {
		Rows     int64  `json:"rows"`
		Features int    `json:"features"`
		Chosen   string `json:"chosen"`
	} `json:"choice"`
}

// TestPlanTakesTheFilesAsLabel: given the files as pate label takes them,
// pate plan weighs the encoded features the run weighs (the report's
// choice section), so that it predicts the run's choice; without them it
// weighs what --encoded-features says.
func TestPlanTakesTheFilesAsLabel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sens, pub := writePlanCSVs(t, dir)
	tests := []struct {
		name  string
		extra []string
	}{
		{"default features", []string{"--exclude", "id"}},
		{"features named", []string{"--features", "x,color"}},
		{"one feature", []string{"--features", "color"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			report := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"label", "--no-ledger", "-q", "--private", sens, "--label", "y", "--public", pub,
				"--classes", "0,1", "--teachers", "20", "--epsilon", "1", "--delta", "1e-5", "--seed", "7",
				"-o", filepath.Join(t.TempDir(), "out.arrow"), "--report", report}, tc.extra...)
			if code, _, stderr := pate(t, args...); code != 0 {
				t.Fatalf("label: exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Choice *struct {
					Features int    `json:"features"`
					Chosen   string `json:"chosen"`
				} `json:"choice"`
			}
			if err := json.Unmarshal(b, &rep); err != nil || rep.Choice == nil {
				t.Fatalf("report without a choice: %v", err)
			}
			code, out, stderr := pate(t, append([]string{"plan", "--json", "--private", sens, "--label", "y", "--public", pub,
				"--classes", "2", "--teachers", "20", "--epsilon", "1", "--delta", "1e-5"}, tc.extra...)...)
			if code != 0 {
				t.Fatalf("plan: exit %d: %s", code, stderr)
			}
			var p planJSON
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if p.Choice.Features != rep.Choice.Features || p.Choice.Rows != 400 {
				t.Errorf("plan weighs %d encoded features of %d rows; the run weighed %d features of 400 rows",
					p.Choice.Features, p.Choice.Rows, rep.Choice.Features)
			}
			if p.Choice.Chosen != rep.Choice.Chosen {
				t.Errorf("plan chooses %s, the run chose %s", p.Choice.Chosen, rep.Choice.Chosen)
			}
			if !strings.Contains(stderr, "NOT PRIVATE") {
				t.Errorf("the exact row count is not marked as not private: %q", stderr)
			}
		})
	}
}

// TestPlanAdultChoosesAsTheRun: on Adult with 400 teachers (40.7 rows per
// class and teacher, under PATE's 50) a default run chooses dp-logreg: two
// classes never take the cells, whatever the 112 encoded features. pate
// plan given the files weighs those features as the run does; given only
// --rows it weighs none, and says so in its figures.
func TestPlanAdultChoosesAsTheRun(t *testing.T) {
	t.Parallel()
	base := []string{"plan", "--json", "--epsilon", "1", "--delta", "1e-5", "--classes", "2", "--teachers", "400"}
	tests := []struct {
		name     string
		args     []string
		features int
		chosen   string
	}{
		{"files", []string{"--private", "testdata/adult_train.parquet", "--label", "income", "--public", "testdata/adult_public.parquet"}, 112, "dp-logreg"},
		{"rows and encoded features", []string{"--rows", "32561", "--encoded-features", "112"}, 112, "dp-logreg"},
		{"rows alone", []string{"--rows", "32561"}, 0, "dp-logreg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := pate(t, append(base, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var p planJSON
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if p.Choice.Features != tc.features || p.Choice.Chosen != tc.chosen {
				t.Errorf("plan: %d features → %s, want %d → %s", p.Choice.Features, p.Choice.Chosen, tc.features, tc.chosen)
			}
		})
	}
}

// TestPlanFileFlagsUsage: the column flags need the files; the encoded
// count is for a plan without them.
func TestPlanFileFlagsUsage(t *testing.T) {
	t.Parallel()
	base := []string{"plan", "--epsilon", "1", "--delta", "1e-5", "--classes", "2"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"columns without files", []string{"--rows", "100", "--features", "age"}, "--features names columns of the files"},
		{"encoded count with files", []string{"--private", "testdata/bad/sens.parquet", "--label", "y", "--public", "testdata/bad/pub.parquet", "--encoded-features", "3"}, "--encoded-features is for a plan without files"},
		{"a file missing", []string{"--private", "testdata/bad/sens.parquet", "--label", "y"}, "missing --public"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := pate(t, append(base, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}
