package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTMLReportFlags: pate label --report-html and pate audit --html both
// write a self-contained page with the four charts.
func TestHTMLReportFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rp, h1, h2 := filepath.Join(dir, "r.json"), filepath.Join(dir, "label.html"), filepath.Join(dir, "audit.html")
	code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--epsilon", "1", "--delta", "1e-5", "--teachers", "30",
		"--max-queries", "1000", "--seed", "5", "-q", "--no-ledger", "-o", filepath.Join(dir, "l.arrow"),
		"--report", rp, "--report-html", h1)
	if code != 0 {
		t.Fatalf("label exit %d: %s", code, stderr)
	}
	if code, _, stderr := pate(t, "audit", "--html", h2, rp); code != 0 {
		t.Fatalf("audit exit %d: %s", code, stderr)
	}
	for _, p := range []string{h1, h2} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"<!DOCTYPE html>", `id="chart-epsilon"`, `id="chart-answered"`, `id="chart-labels"`, `id="chart-conversions"`, `data-holds="true"`} {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s lacks %s", p, s)
			}
		}
	}
	a, _ := os.ReadFile(h1)
	b, _ := os.ReadFile(h2)
	if string(a) != string(b) {
		t.Errorf("the page of pate label and of pate audit differ for the same run")
	}
}
