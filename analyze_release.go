package main

// pate analyze --release-ss: the one part of pate analyze that releases a
// figure computed from the votes, and so spends budget and writes to the
// ledger; the rest of the command (cmd_analyze.go) prints figures that are
// not private.

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

// releaseNote says what a --release-ss output is.
const releaseNote = "SMOOTH-SENSITIVITY RELEASE: one noisy sample of the data-dependent ε of these votes (discrete Gaussian noise from the secure source, " +
	"scaled by the β-smooth sensitivity; β, σ_SS and the order fixed before the votes were read), its own cost included. " +
	"Each run draws new noise and is a new release that costs again: publish one sample, once. It is recorded in the privacy ledger (before the noise is drawn) at its own ε."

// releaseSSMechanism names a smooth-sensitivity release in the ledger.
const releaseSSMechanism = "gnmax-ss-release"

// runReleaseSS draws one smooth-sensitivity release of GNMax's
// data-dependent ε and prints only what is released: the parameters, fixed
// by the flags, the release's cost, which depends on them alone, and the
// sample. Nothing else computed from the votes is shown.
func runReleaseSS(c *cli.Context, e *env) error {
	if c.Bool("optimize-ss") {
		return usagef("--optimize-ss chooses β and σ_SS from the votes: it cannot go with --release-ss, whose parameters are fixed in advance (--beta, --sigma-ss, --ss-order)")
	}
	if acc, _ := label.AnalyzeAccounting(c.String("mechanism")); acc != rdp.Gaussian {
		return usagef("--release-ss is implemented for --mechanism gnmax only (the Confident-GNMax figure is an expected cost whose smooth sensitivity the analysis does not bound)")
	}
	if !c.IsSet("beta") || !c.IsSet("ss-order") {
		return usagef("--release-ss needs --beta, --sigma-ss and --ss-order, fixed in advance")
	}
	sigma := c.Float64("sigma2")
	if c.IsSet("sigma") {
		sigma = c.Float64("sigma")
	}
	if !(sigma > 0) {
		return usagef("gnmax needs --sigma > 0")
	}
	beta, sigmaSS, order, delta := c.Float64("beta"), c.Float64("sigma-ss"), c.Float64("ss-order"), c.Float64("delta")
	if !(beta > 0) || !(sigmaSS > 0) {
		return usagef("--beta and --sigma-ss must be > 0")
	}
	if cost := rdp.GNSSDiscreteRDP(beta, sigmaSS, order); math.IsInf(cost, 1) || math.IsNaN(cost) {
		return usagef("--ss-order %g is outside the orders where the release has a finite cost for --beta %g (1 < λ < e^{2β}/(e^{2β}−1))", order, beta)
	}
	// The release's own cost, data-independent: its ε at δ is what the
	// ledger charges (by basic composition: one order's RDP is no zCDP ρ).
	costEps, _ := rdp.EpsImproved([]float64{order}, []float64{rdp.GNSSDiscreteRDP(beta, sigmaSS, order)}, delta)
	costEps = rdp.RoundUp(costEps, 6)
	lr, votesStdin, err := openLedger(c, e, "--votes", c.String("votes"))
	if err != nil {
		return err
	}
	if lr != nil {
		lr.unit = c.String("privacy-unit")
	}
	ve := *e
	ve.stdin = votesStdin
	votes, err := readVotes(c.String("votes"), &ve)
	if err != nil {
		return err
	}
	if n := c.Int("queries"); n > 0 {
		if n > len(votes) {
			return usagef("--queries %d: the vote file has fewer rows", n)
		}
		votes = votes[:n]
	}
	// Write-ahead: the release is in the ledger before its noise is drawn.
	var entry *ledger.Run
	if lr != nil {
		entry, err = lr.record(ledger.BeginRequest{Mechanism: releaseSSMechanism, MaxRho: math.Inf(1), Delta: delta, Epsilon: costEps})
		if err != nil {
			return err
		}
	}
	r, err := label.ReleaseGNMaxSS(votes, sigma, beta, sigmaSS, order, delta, c.String("conversion"), noise.NewCryptoSource())
	if err != nil {
		// A refusal may depend on the votes: the entry stays, charged.
		sayRecorded(c, e, entry, "the release failed: charged its ε")
		return fmt.Errorf("%w: --votes %s: %v", label.ErrInvalidInput, c.String("votes"), err)
	}
	if entry != nil {
		if err := entry.End(math.Inf(1)); err != nil {
			return fmt.Errorf("--ledger: %w", err)
		}
		sayRecorded(c, e, entry, fmt.Sprintf("charged ε = %g at δ = %g", costEps, delta))
	}
	if c.Bool("json") {
		b, err := json.MarshalIndent(struct {
			Release bool             `json:"release"`
			Note    string           `json:"note"`
			Votes   string           `json:"votes"`
			Sigma   float64          `json:"sigma"`
			Queries int              `json:"queries"`
			Result  *rdp.GNSSRelease `json:"result"`
		}{true, releaseNote, c.String("votes"), sigma, len(votes), r}, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the release as JSON: %w", err)
		}
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	w := e.stdout
	fmt.Fprintf(w, "%s\n\n", releaseNote)
	fmt.Fprintf(w, "votes:                 %s (%d queries)\n", c.String("votes"), len(votes))
	fmt.Fprintf(w, "mechanism:             gnmax (σ = %g)\n", sigma)
	fmt.Fprintf(w, "release parameters:    β = %g, σ_SS = %g, order %g, grid %g (fixed in advance)\n", r.Beta, r.SigmaSS, r.Order, r.Grid)
	fmt.Fprintf(w, "cost of the release:   RDP %.6f at order %g (included below)\n", r.Cost, r.Order)
	fmt.Fprintf(w, "released ε:            %.6f at δ = %g (%s conversion; RDP %.6f at order %g, a noisy sample)\n", r.Eps, r.Delta, r.Conversion, r.RDP, r.Order)
	return nil
}
