package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

const notPrivate = "NOT PRIVATE: this analysis reads the vote histograms themselves. Use it to tune on data you may look at and to reproduce published figures; do not publish any of its figures that depend on the votes, the smooth-sensitivity one included."

// ssNotPrivate labels the smooth-sensitivity figure. pate analyze computes
// the paper's "ε ± std" (the expected value of a GNSS release and the std of
// its noise) but draws no noise: both numbers are exact functions of the
// votes, and so are the order they are taken at and, with --optimize-ss, β
// and σ_SS. Publishing them is not a smooth-sensitivity release. (Adding
// noise would not make it one by itself: for confident-gnmax the figure is
// an expected cost, and its smooth sensitivity, as in the reference script,
// bounds the change of the per-query costs, not of the probabilities of
// answering that weight them.)
const ssNotPrivate = "not private: exact function of the votes (no noise is drawn; the order, and with --optimize-ss β and σ_SS, are chosen from the votes too); not a release"

func analyzeCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "analyze",
		Usage: "privacy analysis of a vote file, as in PATE 2018 Table 2 (not private)",
		UsageText: `pate analyze --votes F [--mechanism M] [noise flags] --queries N --delta D [options]

The vote file has one integer column per class (how many teachers voted for it), one row per query.

Example (PATE 2018, MNIST):
   pate analyze --votes testdata/votes/mnist_250_teachers.parquet --mechanism confident-gnmax \
       --threshold 200 --sigma1 150 --sigma2 40 --queries 640 --delta 1e-5 --conversion classic \
       --optimize-ss          (or --beta 0.0329 --sigma-ss 6.23, the rounded values it prints)

Its figures are exact functions of the votes: NOT PRIVATE. The smooth-sensitivity
release itself (GNMax only; parameters fixed in advance; one noisy sample, its cost included):
   pate analyze --votes V --mechanism gnmax --sigma 40 --delta 1e-5 --release-ss \
       --beta 0.0329 --sigma-ss 6.23 --ss-order 8`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "votes", Usage: "vote counts: Parquet, Arrow or CSV, one integer column per class", Required: true},
			&cli.StringFlag{Name: "mechanism", Value: "confident-gnmax", Usage: "confident-gnmax, gnmax or lnmax"},
			&cli.Float64Flag{Name: "threshold", Usage: "Confident-GNMax threshold T"},
			&cli.Float64Flag{Name: "sigma1", Usage: "Confident-GNMax threshold noise σ1"},
			&cli.Float64Flag{Name: "sigma2", Usage: "Confident-GNMax / GNMax argmax noise σ2"},
			&cli.Float64Flag{Name: "sigma", Usage: "GNMax noise σ (same as --sigma2)"},
			&cli.Float64Flag{Name: "laplace-scale", Usage: "LNMax noise scale b"},
			&cli.IntFlag{Name: "queries", Usage: "analyse the first N rows (0: all)"},
			&cli.Float64Flag{Name: "delta", Usage: "δ", Required: true},
			&cli.StringFlag{Name: "orders", Value: "default", Usage: "RDP orders: default (the 298 PATE 2018 orders), pate2017, A:B, or a comma list"},
			&cli.StringFlag{Name: "conversion", Value: "improved", Usage: "RDP → (ε, δ): improved or classic (the published figures use classic)"},
			&cli.Float64Flag{Name: "beta", Usage: "smooth sensitivity β (with --sigma-ss)"},
			&cli.Float64Flag{Name: "sigma-ss", Usage: "noise of the smooth-sensitivity release (with --beta)"},
			&cli.BoolFlag{Name: "optimize-ss", Usage: "choose β and σ_SS from the votes as the PATE 2018 table script does (reproduces its printed figure exactly; NOT PRIVATE)"},
			&cli.BoolFlag{Name: "release-ss", Usage: "gnmax: draw one smooth-sensitivity release of the data-dependent ε (a noisy sample; needs --beta, --sigma-ss and --ss-order fixed in advance) and print only it"},
			&cli.Float64Flag{Name: "ss-order", Usage: "the Rényi order of --release-ss, fixed in advance"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.StringFlag{Name: "privacy-unit", Usage: "--release-ss: the privacy unit the votes' teachers were partitioned by (pate label --privacy-unit COL), recorded in the ledger (default: a row)"},
		}, ledgerFlags()...),
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runAnalyze(c, e)
		},
	}
}

func runAnalyze(c *cli.Context, e *env) error {
	d := c.Float64("delta")
	if !(d > 0 && d < 1) {
		return usagef("--delta must be in (0, 1), got %g", d)
	}
	if c.Int("queries") < 0 {
		return usagef("--queries must not be negative")
	}
	conv := c.String("conversion")
	if conv != "classic" && conv != "improved" {
		return usagef("--conversion must be classic or improved, got %q", conv)
	}
	orders, err := rdp.ParseOrders(c.String("orders"))
	if err != nil {
		return usagef("--orders: %v", err)
	}
	if c.IsSet("beta") != c.IsSet("sigma-ss") {
		return usagef("--beta and --sigma-ss go together")
	}
	if c.IsSet("beta") && c.Bool("optimize-ss") {
		return usagef("--optimize-ss chooses --beta and --sigma-ss itself; give one or the other")
	}
	if c.Bool("release-ss") {
		return runReleaseSS(c, e)
	}
	for _, f := range []string{"dataset", "lifetime-epsilon", "lifetime-delta", "privacy-unit"} {
		if c.IsSet(f) {
			return usagef("--%s is for the ledger, which only --release-ss spends", f)
		}
	}
	if c.IsSet("ss-order") {
		return usagef("--ss-order goes with --release-ss")
	}
	sigma2 := c.Float64("sigma2")
	if c.IsSet("sigma") {
		sigma2 = c.Float64("sigma")
	}
	p := rdp.AnalyzeParams{
		Mechanism: c.String("mechanism"), Threshold: c.Float64("threshold"),
		Sigma1: c.Float64("sigma1"), Sigma2: sigma2, LaplaceScale: c.Float64("laplace-scale"),
		Queries: c.Int("queries"), Delta: d, Orders: orders, Conversion: conv,
		Beta: c.Float64("beta"), SigmaSS: c.Float64("sigma-ss"), OptimizeSS: c.Bool("optimize-ss"),
	}
	acc, ok := label.AnalyzeAccounting(p.Mechanism)
	if !ok {
		return usagef("--mechanism must be %s, got %q", orList(label.AnalyzableMechanisms()), p.Mechanism)
	}
	p.Accounting = acc
	switch acc {
	case rdp.ThresholdGaussian:
		if !(p.Sigma1 > 0 && p.Sigma2 > 0) {
			return usagef("%s needs --threshold, --sigma1 > 0 and --sigma2 > 0", p.Mechanism)
		}
	case rdp.Gaussian:
		if !(p.Sigma2 > 0) {
			return usagef("%s needs --sigma > 0", p.Mechanism)
		}
	case rdp.Laplace:
		if !(p.LaplaceScale > 0) {
			return usagef("%s needs --laplace-scale > 0", p.Mechanism)
		}
	}
	votes, err := readVotes(c.String("votes"), e)
	if err != nil {
		return err
	}
	res, err := rdp.Analyze(votes, p)
	if err != nil {
		return fmt.Errorf("%w: --votes %s: %v", label.ErrInvalidInput, c.String("votes"), err)
	}
	if c.Bool("json") {
		var ssNote *analyzeSSNote
		if res.SmoothSensitivity != nil {
			ssNote = &analyzeSSNote{Private: false, Releasable: false, Note: ssNotPrivate}
		}
		b, err := json.MarshalIndent(struct {
			Private bool           `json:"private"`
			Note    string         `json:"note"`
			SSNote  *analyzeSSNote `json:"smooth_sensitivity,omitempty"`
			Votes   string         `json:"votes"`
			Params  any            `json:"parameters"`
			Result  interface{}    `json:"result"`
		}{false, notPrivate, ssNote, c.String("votes"), p, res}, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the analysis as JSON: %w", err)
		}
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	printAnalysis(e.stdout, c.String("votes"), votes, p, res)
	return nil
}

// analyzeSSNote is what the JSON output says about the smooth-sensitivity
// figure beside it: that it is not private and not releasable.
type analyzeSSNote struct {
	Private    bool   `json:"private"`
	Releasable bool   `json:"releasable"`
	Note       string `json:"note"`
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
