package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/learners/kernel"
)

// TestVersionStatesBuild: pate --version and a label run's report say the
// version, the Go version, whether cgo was on and the vote kernel in use,
// and the audit accepts the report with them.
func TestVersionStatesBuild(t *testing.T) {
	t.Parallel()
	b := kernel.Build()
	cgo := map[bool]string{true: "cgo on", false: "cgo off"}[b.CGO]
	for _, flag := range []string{"--version", "-V"} {
		code, stdout, stderr := pate(t, flag)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", flag, code, stderr)
		}
		for _, want := range []string{"pate version " + version, runtime.Version(), cgo, "vote kernel " + b.Kernel} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s prints %q, want %q in it", flag, stdout, want)
			}
		}
	}

	dir := t.TempDir()
	out, rp := filepath.Join(dir, "o.arrow"), filepath.Join(dir, "r.json")
	code, _, stderr := pate(t, "label", "--private", "testdata/breast_cancer.parquet", "--label", "label",
		"--public", "testdata/breast_cancer.parquet", "--keep", "mean_radius", "--teachers", "10",
		"--epsilon", "1", "--delta", "1e-5", "--classes", "0,1", "--seed", "5", "--no-ledger", "-o", out,
		"--report", rp, "--quiet")
	if code != 0 {
		t.Fatalf("label exit %d: %s", code, stderr)
	}
	js, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	var rep label.Report
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	want := label.BuildReport{GoVersion: runtime.Version(), CGO: b.CGO, VoteKernel: b.Kernel}
	if rep.Version != version || rep.Build == nil || *rep.Build != want {
		t.Errorf("report version %q, build %+v, want %q and %+v", rep.Version, rep.Build, version, want)
	}
	for _, f := range []string{rp, out} {
		if code, stdout, stderr := pate(t, "audit", f); code != 0 || !strings.Contains(stdout, "HOLDS") {
			t.Errorf("audit %s: exit %d: %s%s", f, code, stdout, stderr)
		}
	}
}
