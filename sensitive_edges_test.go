package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// The tests of this file run pairs of neighbouring sensitive files through
// pate label and check that nothing the run shows outside its mechanisms
// (the output schema, whether it runs at all, its stderr) tells them apart.

// edgeCSV writes a sensitive CSV of n rows with a feature x (distinct
// integers, so that every row is a unit of its own), a unit column u
// (units[i], or "" for a null) and a 0/1 label y, then the extra lines.
func edgeCSV(t *testing.T, dir, name string, n int, unit func(i int) string, extra ...string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("x,u,y\n")
	for i := 0; i < n; i++ {
		x := rng.IntN(1_000_000)
		y := 0
		if x > 500_000 {
			y = 1
		}
		fmt.Fprintf(&b, "%d,%s,%d\n", x, unit(i), y)
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func edgePublic(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("x\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "%d\n", i*16_661)
	}
	p := filepath.Join(dir, "pub.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func rowUnit(i int) string { return fmt.Sprintf("r%d", i) }

// edgeRun runs pate label and returns its exit code, its stderr with the
// output path replaced by OUT, and the output schema (nil on failure).
func edgeRun(t *testing.T, private, public string, extra ...string) (int, string, *arrow.Schema) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.arrow")
	args := append([]string{"label", "--private", private, "--label", "y", "--public", public,
		"--features", "x", "--epsilon", "2", "--delta", "1e-5", "--max-queries", "40",
		"--seed", "5", "--no-ledger", "-o", out}, extra...)
	code, _, stderr := pate(t, args...)
	// The inputs' and output's paths hold random digits (t.TempDir), which
	// the checks for leaked row numbers must not see.
	stderr = strings.ReplaceAll(stderr, out, "OUT")
	stderr = strings.ReplaceAll(stderr, private, "PRIVATE")
	stderr = strings.ReplaceAll(stderr, public, "PUBLIC")
	if code != 0 {
		return code, stderr, nil
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s, recs := readAll(t, out, mem)
	release(recs)
	return code, stderr, s
}

// labelType is the type of the output's label column y.
func labelType(t *testing.T, s *arrow.Schema) arrow.DataType {
	t.Helper()
	f, ok := s.FieldsByName("y")
	if !ok {
		t.Fatalf("no label column in %v", s)
	}
	return f[0].Type
}

// TestSensitiveCSVSchemaIsDeclared: a sensitive CSV of 0/1 labels and the
// same file plus one row "0.5,…,x" give the same output schema and the
// same stderr; a value that does not fit its column, even after the first
// 10,000 rows, neither aborts the run nor is quoted. The schema comes from
// the public file and the declarations (--classes, --label-type).
func TestSensitiveCSVSchemaIsDeclared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pub := edgePublic(t, dir)
	a := edgeCSV(t, dir, "a.csv", 3000, rowUnit)
	aPlus := edgeCSV(t, dir, "a_plus.csv", 3000, rowUnit, "0.5,secret,x")
	tests := []struct {
		name  string
		extra []string
		want  arrow.DataType
	}{
		{"classes discovered", nil, arrow.BinaryTypes.String},
		{"integer classes declared", []string{"--classes", "0,1"}, arrow.PrimitiveTypes.Int64},
		{"label type declared", []string{"--label-type", "int64"}, arrow.PrimitiveTypes.Int64},
		{"string classes declared", []string{"--classes", "0,1", "--label-type", "string"}, arrow.BinaryTypes.String},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			codeA, errA, sA := edgeRun(t, a, pub, tc.extra...)
			codeB, errB, sB := edgeRun(t, aPlus, pub, tc.extra...)
			if codeA != 0 || codeB != 0 {
				t.Fatalf("exit %d and %d, want 0 and 0; stderr:\n%s\n%s", codeA, codeB, errA, errB)
			}
			if !arrow.NewSchema(sA.Fields(), nil).Equal(arrow.NewSchema(sB.Fields(), nil)) {
				t.Errorf("one sensitive row changed the output schema:\n%v\n%v", sA, sB)
			}
			if got := labelType(t, sA); !arrow.TypeEqual(got, tc.want) {
				t.Errorf("label column is %s, want %s", got, tc.want)
			}
			if errA != errB {
				t.Errorf("one sensitive row changed stderr:\n%s\n%s", errA, errB)
			}
			if strings.Contains(errB, "secret") || strings.Contains(errB, "0.5") {
				t.Errorf("stderr quotes the sensitive row: %s", errB)
			}
		})
	}

	t.Run("a misfit after row 10,000", func(t *testing.T) {
		late := edgeCSV(t, dir, "late.csv", 10_050, rowUnit, "0.5,secret,x")
		code, stderr, s := edgeRun(t, late, pub, "--classes", "0,1", "--teachers", "20")
		if code != 0 {
			t.Fatalf("exit %d, want 0; stderr: %s", code, stderr)
		}
		if got := labelType(t, s); !arrow.TypeEqual(got, arrow.PrimitiveTypes.Int64) {
			t.Errorf("label column is %s, want int64", got)
		}
		for _, leak := range []string{"secret", "0.5", `"x"`, "10052", "line"} {
			if strings.Contains(stderr, leak) {
				t.Errorf("stderr has %q: %s", leak, stderr)
			}
		}
	})
}

// TestUnitsBelowTeachersStillRuns: with --teachers k, a sensitive file with
// k units and one with k−1 behave alike: both release labels, and no
// stderr line states a count of units or of empty teachers. The counts
// are there with --diagnostics, marked NOT PRIVATE.
func TestUnitsBelowTeachersStillRuns(t *testing.T) {
	t.Parallel()
	const k = 12
	dir := t.TempDir()
	pub := edgePublic(t, dir)
	unitOf := func(units int) func(int) string {
		return func(i int) string { return fmt.Sprintf("p%d", i%units) }
	}
	kUnits := edgeCSV(t, dir, "k.csv", 240, unitOf(k))
	fewer := edgeCSV(t, dir, "k1.csv", 240, unitOf(k-1))
	args := []string{"--privacy-unit", "u", "--teachers", fmt.Sprint(k), "--classes", "0,1"}
	codeK, errK, sK := edgeRun(t, kUnits, pub, args...)
	codeF, errF, sF := edgeRun(t, fewer, pub, args...)
	if codeK != 0 || codeF != 0 {
		t.Fatalf("exit %d with %d units and %d with %d, want 0 and 0; stderr:\n%s\n%s", codeK, k, codeF, k-1, errK, errF)
	}
	if !arrow.NewSchema(sK.Fields(), nil).Equal(arrow.NewSchema(sF.Fields(), nil)) {
		t.Errorf("the output schemas differ:\n%v\n%v", sK, sF)
	}
	for _, stderr := range []string{errK, errF} {
		// The plan's line states its public rule, whose constants may
		// contain the digits of k−1 (n = 11·k·√(ρ/r)).
		stderr = regexp.MustCompile(`(?m)^pate: plan: .*$`).ReplaceAllString(stderr, "")
		for _, leak := range []string{"fewer than", "received no", "units", fmt.Sprint(k - 1)} {
			if strings.Contains(stderr, leak) {
				t.Errorf("stderr has %q: %s", leak, stderr)
			}
		}
	}

	_, diag, _ := edgeRun(t, fewer, pub, append(args, "--diagnostics")...)
	if !strings.Contains(diag, "pate: NOT PRIVATE diagnostic: ") || !strings.Contains(diag, "fewer than") {
		t.Errorf("--diagnostics does not report the missing units: %s", diag)
	}
}

// TestNullPrivacyUnitDropped: rows whose privacy unit is null are dropped
// silently (no abort, no row index on stderr); --diagnostics counts them.
func TestNullPrivacyUnitDropped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pub := edgePublic(t, dir)
	sens := edgeCSV(t, dir, "nulls.csv", 400, func(i int) string {
		if i == 137 || i == 251 {
			return ""
		}
		return fmt.Sprintf("p%d", i%40)
	})
	args := []string{"--privacy-unit", "u", "--teachers", "10", "--classes", "0,1"}
	code, stderr, _ := edgeRun(t, sens, pub, args...)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, stderr)
	}
	for _, leak := range []string{"137", "138", "251", "null"} {
		if strings.Contains(stderr, leak) {
			t.Errorf("stderr has %q: %s", leak, stderr)
		}
	}
	_, diag, _ := edgeRun(t, sens, pub, append(args, "--diagnostics")...)
	if !strings.Contains(diag, "NOT PRIVATE diagnostic: ") || !strings.Contains(diag, "2 rows with a null privacy unit") {
		t.Errorf("--diagnostics does not count the dropped rows: %s", diag)
	}
	if strings.Contains(diag, "137") {
		t.Errorf("even the diagnostic names a row: %s", diag)
	}
}
