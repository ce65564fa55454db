package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

// planInputs returns the rows and the encoded features pate plan weighs
// the default run's choice with: --rows and --encoded-features as given,
// or, given the files (--private, --public, --label), the features
// pate label would encode from them and, without --rows, the sensitive
// file's row count (said on stderr to be exact and not private: the run
// takes a noisy count of it).
func planInputs(c *cli.Context, e *env) (rows int64, features, oneHot int, err error) {
	rows, features, oneHot = c.Int64("rows"), c.Int("encoded-features"), c.Int("one-hot-features")
	if rows < 0 || c.Int("teachers") < 1 || features < 0 {
		return 0, 0, 0, usagef("--rows and --encoded-features must be ≥ 0 and --teachers ≥ 1")
	}
	if oneHot < 0 || oneHot > features && !c.IsSet("public") {
		return 0, 0, 0, usagef("--one-hot-features must be between 0 and --encoded-features")
	}
	files := c.IsSet("private") || c.IsSet("public") || c.IsSet("label")
	if !files {
		for _, f := range []string{"features", "exclude", "privacy-unit"} {
			if c.IsSet(f) {
				return 0, 0, 0, usagef("--%s names columns of the files: give --private, --label and --public (or --encoded-features N without them)", f)
			}
		}
		return rows, features, oneHot, nil
	}
	if c.IsSet("encoded-features") {
		return 0, 0, 0, usagef("--encoded-features is for a plan without files: with them, plan encodes the features as the run does")
	}
	if err := missingFlags(c, []string{"private", "label", "public"}); err != nil {
		return 0, 0, 0, err
	}
	if c.String("private") == "-" || c.String("public") == "-" {
		return 0, 0, 0, usagef("pate plan reads files, not stdin")
	}
	mem := memory.DefaultAllocator
	pub, err := arrowio.Open(c.String("public"), arrowio.ReadOptions{BatchSize: 16384, Allocator: mem, CountRows: true})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("--public: %w", err)
	}
	defer pub.Close()
	labels := []string{c.String("label")}
	_, types, err := declaredTypes(c, labels, pub.Schema())
	if err != nil {
		return 0, 0, 0, err
	}
	sens, err := arrowio.Open(c.String("private"), arrowio.ReadOptions{Allocator: mem, CSVTypes: types, CountRows: !c.IsSet("rows")})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("--private: %w", err)
	}
	defer sens.Close()
	cfg := label.Config{
		Label: labels[0], Labels: labels, Features: nilIfEmpty(splitList(c.StringSlice("features"))),
		Exclude: splitList(c.StringSlice("exclude")), PrivacyUnit: c.String("privacy-unit"),
		Teachers: c.Int("teachers"), Mechanism: label.MechanismConfidentGNMax, Epsilon: c.Float64("epsilon"),
		Delta: c.Float64("delta"), PublicRows: pub.NumRows(), BatchSize: 16384, Version: version,
		SensitiveName: inputName(c.String("private")), PublicName: inputName(c.String("public")),
	}
	if c.IsSet("one-hot-features") {
		return 0, 0, 0, usagef("--one-hot-features is for a plan without files: with them, plan encodes the features as the run does")
	}
	_, features, oneHot, err = label.EncodedFeatures(context.Background(), cfg, sens.Schema(), pub)
	if err != nil {
		return 0, 0, 0, err
	}
	if !c.IsSet("rows") {
		if rows, err = countRows(sens); err != nil {
			return 0, 0, 0, fmt.Errorf("--private: %w", err)
		}
		fmt.Fprintf(e.stderr, "pate: NOT PRIVATE: --rows %d is the exact row count of --private (for the data owner: do not publish it); the run decides on a noisy count\n", rows)
	}
	return rows, features, oneHot, nil
}

// countRows is r's row count: from its metadata, or else (a CSV read with
// declared types, whose malformed records are skipped) by reading it.
func countRows(r *arrowio.Reader) (int64, error) {
	if n := r.NumRows(); n >= 0 {
		return n, nil
	}
	var n int64
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n += rec.NumRows()
		rec.Release()
	}
}

// printChoice prints only the choice of a default run (pate plan --rows
// without queries or noise).
func printChoice(c *cli.Context, e *env, eps, delta float64, ch *planChoice) error {
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return usagef("%v", err)
	}
	if c.Bool("json") {
		b, _ := json.MarshalIndent(struct {
			Epsilon float64     `json:"epsilon"`
			Delta   float64     `json:"delta"`
			Budget  float64     `json:"rho_budget"`
			Choice  *planChoice `json:"choice"`
		}{eps, delta, f.Budget(), ch}, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	fmt.Fprintf(e.stdout, "budget:      ε = %g, δ = %g  (zCDP filter budget ρ = %.6g)\n", eps, delta, f.Budget())
	writeChoice(e.stdout, ch)
	return nil
}

func writeChoice(w io.Writer, ch *planChoice) {
	fmt.Fprintf(w, "choice:      %s\n", ch.Rule)
	fmt.Fprintf(w, "             noisy row count σ = %g (%.0f%% of ρ; a run with no --mechanism, classes declared or discovered)\n", ch.CountSigma, 100*ch.CountRhoShare)
	fmt.Fprintf(w, "             %d rows / (%d teachers · %d classes) = %.3g → %s\n", ch.Rows, ch.Teachers, ch.Classes, ch.RowsPerClass, ch.Chosen)
	for _, c := range ch.Candidates {
		mark, name := "no ", c.Mechanism
		if c.Eligible {
			mark = "yes"
		}
		if c.Student != "" {
			name += " + " + c.Student + " student"
		}
		fmt.Fprintf(w, "  candidate  %s %s: %s\n", mark, name, c.Why)
	}
	fmt.Fprintln(w, "             the first eligible candidate runs; the choice costs the count alone (no candidate is trained to compare)")
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
