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
	t.Parallel()
	for _, mech := range label.Mechanisms {
		t.Run(mech, func(t *testing.T) {
			dir := t.TempDir()
			rp, out := filepath.Join(dir, "r.json"), filepath.Join(dir, "l.arrow")
			args := []string{"label", "--private", "testdata/adult_train.parquet", "--label", "income",
				"--public", "testdata/adult_public.parquet", "--epsilon", "2", "--delta", "1e-5", "--teachers", "50",
				"--max-queries", "2000", "--mechanism", mech, "--seed", "3", "-q", "--no-ledger", "-o", out, "--report", rp}
			pure := mech == label.MechanismPrivateLearner || mech == label.MechanismSVT || mech == label.MechanismStableEM
			// A pure ε-DP guarantee needs a public class set; dp-logreg's
			// model has one output per class, so its cost needs it too.
			if pure || mech == label.MechanismDPLogReg || mech == label.MechanismPrivateKNN {
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

// TestAuditRederivesEveryFigure: audit accepts the report of a real run
// whose --epsilon has more decimals than reports print, for one label
// column and for two, with the classes discovered privately; and it refuses
// that report with the class discovery's threshold, or its ρ, edited.
func TestAuditRederivesEveryFigure(t *testing.T) {
	t.Parallel()
	one := []string{"--label", "income"}
	two := []string{"--label", "income", "--label", "sex", "--keep", "age"}
	tests := []struct {
		name   string
		labels []string
		eps    string
		edit   bool // also audit edited copies of the report
	}{
		{"one label", one, "2", true},
		{"one label, seven decimals", one, "1.0000001", false},
		{"two labels", two, "2", true},
		{"two labels, nine decimals", two, "2.000000001", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rp := filepath.Join(dir, "r.json")
			args := append([]string{"label", "--private", "testdata/adult_train.parquet", "--public", "testdata/adult_public.parquet",
				"--epsilon", tc.eps, "--delta", "1e-5", "--teachers", "50", "--max-queries", "300", "--seed", "3", "-q", "--no-ledger",
				"-o", filepath.Join(dir, "l.arrow"), "--report", rp}, tc.labels...)
			if code, _, stderr := pate(t, args...); code != 0 {
				t.Fatalf("label exit %d: %s", code, stderr)
			}
			js, err := os.ReadFile(rp)
			if err != nil {
				t.Fatal(err)
			}
			if code, stdout, stderr := pate(t, "audit", rp); code != 0 || !strings.Contains(stdout, "HOLDS") {
				t.Fatalf("honest report with ε = %s: exit %d\n%s%s", tc.eps, code, stdout, stderr)
			}
			if !tc.edit {
				return
			}
			var rep label.Report
			if err := json.Unmarshal(js, &rep); err != nil {
				t.Fatal(err)
			}
			discs := []*label.ClassDiscovery{rep.ClassDiscovery}
			if len(rep.Labels) > 0 {
				discs = discs[:0]
				for _, l := range rep.Labels {
					discs = append(discs, l.ClassDiscovery)
				}
			}
			for _, d := range discs {
				if d == nil || d.Threshold < 2 {
					t.Fatalf("the run released no classes privately: %+v", d)
				}
			}
			tau := strconv.FormatInt(discs[0].Threshold, 10)
			edits := []struct{ name, from, to string }{
				{"threshold edited to 1", `"threshold": ` + tau + `,`, `"threshold": 1,`},
				{"threshold one below", `"threshold": ` + tau + `,`, `"threshold": ` + strconv.FormatInt(discs[0].Threshold-1, 10) + `,`},
				{"discovery rho halved", `"rho": ` + strconv.FormatFloat(float64(discs[0].Rho), 'g', -1, 64) + `,`,
					`"rho": ` + strconv.FormatFloat(float64(discs[0].Rho)/2, 'g', -1, 64) + `,`},
			}
			for _, ed := range edits {
				body := strings.Replace(string(js), ed.from, ed.to, 1)
				if body == string(js) {
					t.Fatalf("%s: nothing to edit (%s)", ed.name, ed.from)
				}
				p := filepath.Join(dir, strings.ReplaceAll(ed.name, " ", "_")+".json")
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				if code, stdout, _ := pate(t, "audit", p); code != exitBudget {
					t.Errorf("%s: exit %d, want %d\n%s", ed.name, code, exitBudget, stdout)
				}
			}
		})
	}
}
