package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/io/atomicfile"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/htmlreport"
)

func auditCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:      "audit",
		Usage:     "recompute a run's ε from its report and check the claim",
		ArgsUsage: "FILE",
		UsageText: `pate audit [--json] [--html F] FILE      (FILE: a JSON report, or a labelled Arrow file)

Recomputes ε from the recorded mechanism, noise parameters and event counts with the
accountant, compares it with the claimed ε, and explains the guarantee in plain words.
Exit 0: the claim holds; 3: the recomputed ε exceeds the claim; 2: the report is
malformed, truncated, or of an unknown version.

Examples:
   pate audit report.json
   pate audit --json labeled.arrow
   pate audit --html report.html report.json`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the audit as JSON"},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML report (charts, parameters, explanation) to this file"},
		},
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if c.Args().Len() != 1 {
				return usagef("pate audit takes one FILE (a JSON report or a labelled Arrow file), got %d arguments", c.Args().Len())
			}
			return runAudit(c, e, c.Args().First())
		},
	}
}

// loadReport reads a report from a JSON file or from the pate.report schema
// metadata of a labelled Arrow file.
func loadReport(path string) (*label.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return label.ParseReport(trimmed)
	}
	r, err := arrowio.Open(path, arrowio.ReadOptions{BatchSize: 1, Allocator: memory.DefaultAllocator})
	if err != nil {
		return nil, fmt.Errorf("%s: neither a JSON report nor a readable Arrow file: %w", path, err)
	}
	defer r.Close()
	md := r.Schema().Metadata()
	js, ok := md.GetValue("pate.report")
	if !ok {
		return nil, fmt.Errorf("%w: %s has no pate.report metadata (an Arrow stream written to stdout carries no final report: keep the --report file)", label.ErrInvalidInput, path)
	}
	// Files written before their patch shortened the value to its length
	// have it padded with spaces to its reserved size.
	js = strings.TrimRight(js, " ")
	if strings.Contains(js, `"status":"streamed`) {
		return nil, fmt.Errorf("%w: %s was written as a stream and carries only a provisional report: audit the --report file of the run", label.ErrInvalidInput, path)
	}
	if strings.Contains(js, "pate_reserved") {
		return nil, fmt.Errorf("%w: %s: the run did not finish (its report placeholder was never filled)", label.ErrInvalidInput, path)
	}
	return label.ParseReport([]byte(js))
}

func runAudit(c *cli.Context, e *env, path string) error {
	rep, err := loadReport(path)
	if err != nil {
		return fmt.Errorf("audit %s: %w", path, err)
	}
	res, auditErr := label.Audit(rep)
	if res == nil {
		return fmt.Errorf("audit %s: %w", path, auditErr)
	}
	if p := c.String("html"); p != "" {
		var buf bytes.Buffer
		if err := htmlreport.Write(&buf, rep, res); err != nil {
			return fmt.Errorf("--html %s: %w", p, err)
		}
		if err := writeFileAtomic(p, buf.Bytes()); err != nil {
			return fmt.Errorf("--html %s: %w", p, err)
		}
	}
	if c.Bool("json") {
		js, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the audit: %w", err)
		}
		fmt.Fprintln(e.stdout, string(js))
	} else {
		printAudit(e, path, res)
	}
	if auditErr != nil {
		return fmt.Errorf("audit %s: %w", path, auditErr)
	}
	return nil
}

func printAudit(e *env, path string, res *label.AuditResult) {
	w := e.stdout
	verdict := "HOLDS"
	if !res.Holds {
		verdict = "DOES NOT HOLD"
	}
	fmt.Fprintf(w, "audit of %s: the claim %s\n", path, verdict)
	fmt.Fprintf(w, "  claimed     ε = %g, δ = %g\n", res.ClaimedEpsilon, res.Delta)
	fmt.Fprintf(w, "  recomputed  ε = %g (ρ = %.9g, %s, %s)\n", res.Epsilon, res.ClaimRho, res.Mechanism, basisWord(res.Filter))
	per := "per event  "
	if len(res.Labels) > 0 {
		per = "per query  " // summed over the label columns
	}
	fmt.Fprintf(w, "  %s ρ_check = %.6g, ρ_answer = %.6g; discovery ρ = %.6g, δ = %g\n",
		per, res.RhoCheck, res.RhoAnswer, res.DiscoveryRho, res.DiscoveryDelta)
	for _, l := range res.Labels {
		fmt.Fprintf(w, "    label %s: ρ_check = %.6g, ρ_answer = %.6g, %d checks, %d argmaxes, ρ = %.9g (+ discovery %.6g)\n",
			l.Label, l.RhoCheck, l.RhoAnswer, l.ThresholdChecks, l.NoisyArgmaxes, l.Rho, l.DiscoveryRho)
	}
	fmt.Fprintf(w, "  events      %d queries, %d threshold checks, %d noisy argmaxes\n", res.Queries, res.ThresholdChecks, res.NoisyArgmaxes)
	fmt.Fprintf(w, "  realized    ρ = %.9g, ε = %g (improved, order %g), %g (classic, order %g)",
		float64(res.Spent.Rho), float64(res.Spent.EpsilonImproved), float64(res.Spent.OrderImproved),
		float64(res.Spent.EpsilonClassic), float64(res.Spent.OrderClassic))
	if res.Spent.EpsilonGDP != nil {
		fmt.Fprintf(w, ", %g (Gaussian DP)", float64(*res.Spent.EpsilonGDP))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "checks:")
	for _, ch := range res.Checks {
		mark := "ok  "
		if !ch.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %-42s report %.9g, recomputed %.9g\n", mark, ch.Name, ch.Claimed, ch.Recomputed)
	}
	fmt.Fprintln(w, "what it means:")
	for _, p := range res.Explanation {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}

func basisWord(filter bool) string {
	if filter {
		return "budget of a zCDP filter"
	}
	return "worst case of the queries put"
}

// writeFileAtomic writes b to a temporary file beside path and renames it.
func writeFileAtomic(path string, b []byte) error {
	return atomicfile.WriteFile(path, b, 0o600)
}

// writeHTMLReport writes the HTML report of a run (audited) atomically.
func writeHTMLReport(path string, rep *label.Report) error {
	res, err := label.Audit(rep)
	if res == nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, res); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}
