package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pate-tool/pate/label"
)

// TestAuditRoundTrip: audit on the report of a real run exits 0 and prints
// the same ε, for every mechanism; a report whose ε was edited down exits 3;
// a truncated or unknown-version report exits 2.
func TestAuditRoundTrip(t *testing.T) {
	for _, mech := range label.Mechanisms {
		t.Run(mech, func(t *testing.T) {
			dir := t.TempDir()
			rp, out := filepath.Join(dir, "r.json"), filepath.Join(dir, "l.arrow")
			args := []string{"label", "--private", "testdata/adult_train.parquet", "--label", "income",
				"--public", "testdata/adult_public.parquet", "--epsilon", "2", "--delta", "1e-5", "--teachers", "50",
				"--max-queries", "2000", "--mechanism", mech, "--seed", "3", "-q", "--no-ledger", "-o", out, "--report", rp}
			pure := mech == label.MechanismPrivateLearner || mech == label.MechanismSVT || mech == label.MechanismStableEM
			if pure { // issue 5: a pure ε-DP guarantee needs a public class set
				args = append(args, "--classes", "0,1")
			}
			code, _, stderr := pate(t, args...)
			if code != 0 {
				t.Fatalf("label exit %d: %s", code, stderr)
			}
			for _, f := range []string{rp, out} {
				code, stdout, stderr := pate(t, "audit", "--json", f)
				if code != 0 {
					t.Fatalf("audit %s exit %d: %s", f, code, stderr)
				}
				var res label.AuditResult
				if err := json.Unmarshal([]byte(stdout), &res); err != nil {
					t.Fatal(err)
				}
				// A pure run claims the smaller reading of its cap on events,
				// which may be below the budget.
				if !res.Holds || res.Epsilon != res.ClaimedEpsilon || res.ClaimedEpsilon > 2 || (!pure && res.ClaimedEpsilon != 2) {
					t.Fatalf("audit %s: holds %v, ε %v (claim %v)", f, res.Holds, res.Epsilon, res.ClaimedEpsilon)
				}
			}
			js, err := os.ReadFile(rp)
			if err != nil {
				t.Fatal(err)
			}
			var rep label.Report
			if err := json.Unmarshal(js, &rep); err != nil {
				t.Fatal(err)
			}
			claimed := strconv.FormatFloat(float64(rep.Guarantee.Epsilon), 'g', -1, 64)
			code, stdout, _ := pate(t, "audit", rp)
			if code != 0 || !strings.Contains(stdout, "recomputed  ε = "+claimed+" ") || !strings.Contains(stdout, "HOLDS") {
				t.Fatalf("text audit exit %d:\n%s", code, stdout)
			}
			edited := strings.Replace(string(js), `"epsilon": `+claimed+`,`, `"epsilon": 1.5,`, 1)
			if edited == string(js) {
				t.Fatalf("the report has no guarantee ε %s to edit", claimed)
			}
			cases := []struct {
				name string
				body string
				want int
			}{
				{"epsilon edited down", edited, exitBudget},
				{"truncated", string(js[:len(js)/3]), exitUsage},
				{"unknown version", strings.Replace(string(js), `"schema_version": 1`, `"schema_version": 7`, 1), exitUsage},
				{"not json", "hello", exitUsage},
			}
			for _, tc := range cases {
				p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
				if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
					t.Fatal(err)
				}
				if code, _, stderr := pate(t, "audit", p); code != tc.want {
					t.Errorf("%s: exit %d, want %d (%s)", tc.name, code, tc.want, stderr)
				}
			}
		})
	}
}

func TestAuditUsage(t *testing.T) {
	if code, _, _ := pate(t, "audit"); code != exitUsage {
		t.Errorf("no file: exit %d", code)
	}
	if code, _, _ := pate(t, "audit", "/nonexistent/r.json"); code != exitUsage {
		t.Errorf("missing file: exit %d", code)
	}
}
