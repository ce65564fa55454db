package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	pateio "github.com/pate-tool/pate/io"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
	"github.com/pate-tool/pate/label/noise"
)

const replicateNotPrivate = "NOT PRIVATE: pate replicate splits and reads the sensitive data outside any mechanism; its figures are a diagnostic for the data owner, not for release."

func replicateCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "replicate",
		Usage: "would another sample of the population give the same labels? (a diagnostic, not private unless --private-report)",
		UsageText: `pate replicate --private F --label COL --public F --epsilon E --delta D [--splits 2] [--repeats R] [options]

The sensitive rows are split into disjoint random parts; each part labels the same public rows with the same
mechanism and budget, once with shared randomness (the same seed for partition and noise: the coupling of
replicability) and once with independent randomness. pate reports how often the released labels of two parts
differ (an abstention counts as a label), with a 95% Wilson interval over the queried public rows.

With --replicable each configuration is run twice, as it is and with pate label --replicable (the noise
keyed by public row from the shared seed, rounded to a grid with a shared random offset: the replicable
rounding of Impagliazzo et al. 2022), and both are reported with the fraction of queries answered (and,
with --truth COL, the accuracy of the answered rows), so that the gain in agreement can be set against its cost.

Without --private-report the figures are NOT PRIVATE (a diagnostic for the data owner). With
--private-report --report-epsilon E the disagreement counts are released with discrete Laplace noise
calibrated to their sensitivity to one sensitive row (repeats × (splits − 1) × queried rows: one row lives in
one part per repeat and may change every label of that part), charged E in the privacy ledger.

Examples:
   pate replicate --private testdata/adult_train.parquet --label income --public testdata/adult_public.parquet \
       --epsilon 2 --delta 1e-5 --max-queries 1500 --classes 0,1 --repeats 3
   pate replicate --private testdata/adult_train.parquet --label income --public testdata/adult_public.parquet \
       --epsilon 2 --delta 1e-5 --max-queries 1500 --classes 0,1 --private-report --report-epsilon 1
   pate replicate --private testdata/adult_train.parquet --label income --public testdata/adult_test.parquet \
       --truth income --epsilon 2 --delta 1e-5 --max-queries 1500 --classes 0,1 --replicable`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "private", Usage: "sensitive labelled data", Required: true},
			&cli.StringFlag{Name: "label", Usage: "label column of the sensitive data", Required: true},
			&cli.StringFlag{Name: "public", Usage: "public data to label (a file: it is read once per run)", Required: true},
			&cli.StringSliceFlag{Name: "features", Usage: "feature columns (default: every sensitive column but the label)"},
			&cli.StringSliceFlag{Name: "classes", Usage: "the public class set (default: released privately by each run)"},
			&cli.IntFlag{Name: "teachers", Value: 250, Usage: "teachers per run (each part has 1/splits of the data)"},
			&cli.StringFlag{Name: "learner", Value: "logreg", Usage: "logreg, nb or tree"},
			&cli.IntFlag{Name: "splits", Value: 2, Usage: "number of disjoint parts of the sensitive data"},
			&cli.IntFlag{Name: "repeats", Value: 3, Usage: "number of random splits"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the splits and of the shared randomness"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "replicable", Usage: "also label with --replicable (noise keyed by row from the shared seed, replicable rounding) and report how much it lowers the disagreement, and at what cost"},
			&cli.Float64Flag{Name: "replicable-width", Value: label.DefaultReplicableWidth, Usage: "with --replicable: the rounding grid, in standard deviations of the noise"},
			&cli.StringFlag{Name: "truth", Usage: "a column of the public file with the true labels: report the accuracy of the answered rows"},
			&cli.BoolFlag{Name: "private-report", Usage: "release the disagreement counts with discrete Laplace noise, charged --report-epsilon (otherwise the output is NOT PRIVATE)"},
			&cli.Float64Flag{Name: "report-epsilon", Usage: "with --private-report: the pure ε of the released counts (split evenly: two counts, four with --replicable)"},
		}, append(ledgerFlags(), budgetFlags()...)...),
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runReplicate(c, e)
		},
	}
}

// replicateResult is what pate replicate prints.
type replicateResult struct {
	Private     bool      `json:"private"`
	Note        string    `json:"note"`
	Splits      int       `json:"splits"`
	Repeats     int       `json:"repeats"`
	PublicRows  int       `json:"public_rows"`
	Queried     int       `json:"queried_rows"` // rows compared per pair of parts: the others abstain in every run
	Shared      agreement `json:"shared_randomness"`
	Independent agreement `json:"independent_randomness"`
	// Replicable is the same with pate label --replicable (--replicable).
	Replicable *replicableArms `json:"replicable,omitempty"`
	// Report describes the noise of a --private-report release.
	Report *privateReport `json:"private_report,omitempty"`
}

// replicableArms are the figures of the --replicable runs.
type replicableArms struct {
	Width       float64   `json:"width_sd"` // the rounding grid, in standard deviations of the noise
	Seed        string    `json:"seed"`     // how the shared seed was shared
	Shared      agreement `json:"shared_randomness"`
	Independent agreement `json:"independent_randomness"`
}

// agreement is the disagreement rate of the released labels between parts,
// and (not with --private-report) what the runs released.
type agreement struct {
	Compared int     `json:"rows_compared"`
	Differ   int     `json:"rows_differing"` // with --private-report: the noisy count, clamped to [0, rows_compared]
	Rate     float64 `json:"disagreement"`
	Low      float64 `json:"ci95_low"`
	High     float64 `json:"ci95_high"`

	// Not private: omitted with --private-report.
	AnswerVsAbstain int     `json:"answer_vs_abstain,omitempty"` // pairs where one part answered and the other abstained
	LabelVsLabel    int     `json:"label_vs_label,omitempty"`    // pairs where both answered, differently
	Queries         int     `json:"queries,omitempty"`           // queried rows over all runs
	Answered        int     `json:"answered,omitempty"`          // of them answered
	AnsweredFrac    float64 `json:"answered_fraction,omitempty"`
	Checked         int     `json:"answers_with_truth,omitempty"` // --truth: answered rows with a true label
	Correct         int     `json:"answers_correct,omitempty"`
	Accuracy        float64 `json:"answered_accuracy,omitempty"`
}

func (a *agreement) finish() {
	a.Rate = float64(a.Differ) / float64(max(1, a.Compared))
	a.Low, a.High = wilson(a.Differ, a.Compared, z95)
	a.AnsweredFrac = float64(a.Answered) / float64(max(1, a.Queries))
	a.Accuracy = float64(a.Correct) / float64(max(1, a.Checked))
}

// utility adds one run's answers (and their accuracy against truth, when
// known) over its first n rows.
func (a *agreement) utility(labels, truth []string, n int) {
	for i, v := range labels[:n] {
		a.Queries++
		if v == "" {
			continue
		}
		a.Answered++
		if truth != nil && truth[i] != "" {
			a.Checked++
			if truth[i] == v {
				a.Correct++
			}
		}
	}
}

// privateReport is the calibration of a --private-report release.
type privateReport struct {
	Epsilon         float64 `json:"epsilon"`           // pure ε of the whole release
	EpsilonPerCount float64 `json:"epsilon_per_count"` // each released count
	Sensitivity     int64   `json:"sensitivity"`       // of each count to one sensitive row
	LaplaceScale    string  `json:"laplace_scale"`     // exact: sensitivity / epsilon_per_count
	NoiseBound      int64   `json:"noise_bound"`       // |noise| ≤ this with probability ≥ 97.5%
	Basis           string  `json:"basis"`
}

const privateNote = "PRIVATE (only with --private-report): the disagreement counts (two, four with --replicable) are released with discrete Laplace noise " +
	"calibrated to their global sensitivity to one sensitive row; the rates and intervals are computed from the noisy counts. " +
	"Nothing else computed from the sensitive data is printed."

const reportBasis = "pure ε-DP, discrete Laplace (Canonne–Kamath–Steinke 2020) with scale sensitivity/ε per count; " +
	"sensitivity = repeats × (splits − 1) × queried rows: each row lies in one part per repeat (keyed hash of the row), " +
	"its removal changes that part's teachers, which may change every label that part releases, so every pair of parts " +
	"that includes it may change by up to the number of queried rows; the counts (ε split evenly) compose to ε; " +
	"intervals: 97.5% Wilson widened by the 97.5% noise bound (≥ 95% by a union bound)"

// Quantiles of the standard normal for two-sided 95% and 97.5% intervals.
const (
	z95  = 1.959963984540054
	z975 = 2.241402727604947
)

// wilson is the Wilson score interval of k successes in n trials at the
// two-sided normal quantile z.
func wilson(k, n int, z float64) (float64, float64) {
	if n == 0 {
		return 0, 1
	}
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return max(0, mid-half), min(1, mid+half)
}

// reportSensitivity is how much one sensitive row can change one
// disagreement count: in each repeat the row lies in exactly one part (the
// split is a keyed hash of the row, so removing it leaves the other parts as
// they were); that part's teachers change, which may change all of its
// queried labels, so each of the splits−1 pairs with that part may change
// by up to queried rows. Nothing smaller holds for every data set: one
// teacher's changed vote can tip every row whose noisy margin is within a
// vote of a decision boundary, and with shared noise that can be every row.
func reportSensitivity(repeats, splits, queried int) int64 {
	return int64(repeats) * int64(splits-1) * int64(queried)
}

// laplaceFor is the discrete Laplace scale that makes a count of the given
// sensitivity eps-DP: sensitivity/eps, exactly (eps as its exact binary value).
func laplaceFor(sensitivity int64, eps float64) (*big.Rat, error) {
	e, err := noise.RatFromFloat(eps)
	if err != nil || e.Sign() <= 0 {
		return nil, fmt.Errorf("ε must be a positive finite number, got %g", eps)
	}
	return new(big.Rat).Quo(new(big.Rat).SetInt64(max(1, sensitivity)), e), nil
}

// laplaceBound is the smallest u with P(|Z| > u) ≤ miss for Z discrete
// Laplace with scale t: P(|Z| > u) = 2p^(u+1)/(1+p), p = exp(−1/t). It
// describes the noise for the reader (float64 is fine here: it is not on
// the noise path).
func laplaceBound(t *big.Rat, miss float64) int64 {
	tf, _ := t.Float64()
	p := math.Exp(-1 / tf)
	u := int64(math.Ceil(math.Log(miss*(1+p)/2)/math.Log(p))) - 1
	for u > 0 && 2*math.Pow(p, float64(u))/(1+p) <= miss { // P(|Z| > u−1) already small enough
		u--
	}
	for 2*math.Pow(p, float64(u+1))/(1+p) > miss {
		u++
	}
	return max(0, u)
}

// release replaces a's count with count + discrete Laplace noise of scale t
// drawn from src (clamped to [0, compared]: post-processing) and widens its
// interval by the noise's 97.5% bound u.
func (a *agreement) release(l *noise.DiscreteLaplace, u int64, src noise.Source) {
	noisy := int64(a.Differ) + l.Sample(src)
	n := a.Compared
	*a = agreement{Compared: n} // nothing but the noisy count is released
	a.Differ = int(min(max(noisy, 0), int64(n)))
	a.Rate = float64(a.Differ) / float64(max(1, n))
	lo := int(min(max(noisy-u, 0), int64(n)))
	hi := int(min(max(noisy+u, 0), int64(n)))
	a.Low, _ = wilson(lo, n, z975)
	_, a.High = wilson(hi, n, z975)
}

func runReplicate(c *cli.Context, e *env) error {
	splits, repeats := c.Int("splits"), c.Int("repeats")
	if splits < 2 {
		return usagef("--splits must be at least 2, got %d", splits)
	}
	if repeats < 1 {
		return usagef("--repeats must be at least 1, got %d", repeats)
	}
	if eps := c.Float64("epsilon"); c.IsSet("epsilon") && !(eps > 0 && eps <= math.MaxFloat64) {
		return usagef("--epsilon must be a positive finite number, got %g", eps)
	}
	if d := c.Float64("delta"); !(d > 0 && d < 1) {
		return usagef("--delta must be in (0, 1), got %g", d)
	}
	if c.String("public") == "-" || c.String("private") == "-" {
		return usagef("pate replicate reads its inputs several times: give files, not stdin")
	}
	private := c.Bool("private-report")
	reportEps := c.Float64("report-epsilon")
	switch {
	case private && !c.IsSet("report-epsilon"):
		return usagef("--private-report needs --report-epsilon (the ε charged for the released counts)")
	case private && !(reportEps > 0 && reportEps <= math.MaxFloat64):
		return usagef("--report-epsilon must be a positive finite number, got %g", reportEps)
	case !private && c.IsSet("report-epsilon"):
		return usagef("--report-epsilon is only used with --private-report")
	case !private && (c.IsSet("lifetime-epsilon") || c.IsSet("dataset")):
		return usagef("--lifetime-epsilon and --dataset are for the ledger, which only --private-report spends")
	}
	mem := memory.DefaultAllocator
	// A CSV --private is read with declared types (the public file's, the
	// label's from --classes), as pate label reads it: its schema must not
	// depend on its values.
	pubSchema, err := schemaOf(mem, c.String("public"))
	if err != nil {
		return fmt.Errorf("--public: %w", err)
	}
	_, types, err := declaredTypes(c, []string{c.String("label")}, pubSchema)
	if err != nil {
		return err
	}
	whole, err := readWhole(mem, c.String("private"), types)
	if err != nil {
		return err
	}
	defer whole.Release()
	n := int(whole.NumRows())
	if n < splits {
		// The row count is not quoted: it is a fact about the sensitive data.
		return fmt.Errorf("%w: %s has fewer rows than --splits %d", label.ErrInvalidInput, c.String("private"), splits)
	}

	var truth []string
	if col := c.String("truth"); col != "" {
		if private {
			return usagef("--truth is not private: it cannot be used with --private-report")
		}
		if truth, err = readColumnText(mem, c.String("public"), col); err != nil {
			return err
		}
	}

	res := replicateResult{Private: false, Note: replicateNotPrivate, Splits: splits, Repeats: repeats}
	// arms: plain shared, plain independent, and with --replicable the same
	// two with replicable runs.
	arms := []*agreement{&res.Shared, &res.Independent}
	if c.Bool("replicable") {
		res.Replicable = &replicableArms{Width: c.Float64("replicable-width"), Seed: replicateVia}
		arms = append(arms, &res.Replicable.Shared, &res.Replicable.Independent)
	}
	base := c.Uint64("seed")
	for r := 0; r < repeats; r++ {
		parts := splitParts(label.SplitUnits(whole, splits, noise.NewSeededSource(base, uint64(1000+r))), splits)
		labels := make([][][]string, len(arms)) // arm, part, row
		for i := range labels {
			labels[i] = make([][]string, splits)
		}
		for p := range parts {
			if len(parts[p]) == 0 {
				return fmt.Errorf("%w: repeat %d: part %d of %s is empty", label.ErrInvalidInput, r, p, c.String("private"))
			}
			sub, err := takeRows(mem, whole, parts[p])
			if err != nil {
				return err
			}
			for i := range arms {
				seed := base + uint64(r)*1_000_003 // shared by the parts
				if i%2 == 1 {
					seed += uint64(p+1) * 7919 // independent
				}
				var rep *label.Replicable
				if i >= 2 {
					rep = &label.Replicable{Key: replicateKey(seed), Width: c.Float64("replicable-width"), Via: replicateVia}
				}
				if labels[i][p], err = replicateRun(c, sub, seed, rep); err != nil {
					break
				}
			}
			sub.Release()
			if err != nil {
				return fmt.Errorf("repeat %d, part %d: %w", r, p, err)
			}
		}
		res.PublicRows = len(labels[0][0])
		res.Queried = queriedRows(c.Int64("max-queries"), res.PublicRows)
		if truth != nil && len(truth) != res.PublicRows {
			return fmt.Errorf("%w: --truth %s: %d values for %d public rows", label.ErrInvalidInput, c.String("truth"), len(truth), res.PublicRows)
		}
		for i, arm := range arms {
			for a := 0; a < splits; a++ {
				arm.utility(labels[i][a], truth, res.Queried)
				for b := a + 1; b < splits; b++ {
					compare(arm, labels[i][a][:res.Queried], labels[i][b][:res.Queried])
				}
			}
		}
	}
	for _, arm := range arms {
		arm.finish()
	}
	if private {
		if err := releaseReport(c, e, &res, arms, reportEps); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	w := e.stdout
	fmt.Fprintf(w, "%s\n\n", res.Note)
	fmt.Fprintf(w, "%d repeats × %d disjoint parts of %s; the first %d of %d public rows (the queries) compared per pair of parts\n",
		repeats, splits, c.String("private"), res.Queried, res.PublicRows)
	printArm(w, "", "shared randomness:     ", &res.Shared, private, truth != nil)
	printArm(w, "", "independent randomness:", &res.Independent, private, truth != nil)
	if rr := res.Replicable; rr != nil {
		fmt.Fprintf(w, "with --replicable (rounding grid %g σ; shared seed %s):\n", rr.Width, rr.Seed)
		printArm(w, "  ", "shared randomness:     ", &rr.Shared, private, truth != nil)
		printArm(w, "  ", "independent randomness:", &rr.Independent, private, truth != nil)
	}
	if p := res.Report; p != nil {
		fmt.Fprintf(w, "private report: ε = %g (pure; %g per count), sensitivity %d rows per count, discrete Laplace scale %s, |noise| ≤ %d with 97.5%%\n",
			p.Epsilon, p.EpsilonPerCount, p.Sensitivity, p.LaplaceScale, p.NoiseBound)
	}
	return nil
}

// queriedRows is the number of public rows put to the teachers in every
// run: the others abstain in all of them, so they never differ.
func queriedRows(maxQueries int64, rows int) int {
	if maxQueries > 0 && maxQueries < int64(rows) {
		return int(maxQueries)
	}
	return rows
}

// releaseReport charges the report's ε in the ledger (write-ahead), then
// replaces the counts by their noisy versions.
func releaseReport(c *cli.Context, e *env, res *replicateResult, arms []*agreement, eps float64) error {
	sens := reportSensitivity(res.Repeats, res.Splits, res.Queried)
	perCount := eps / float64(len(arms))
	t, err := laplaceFor(sens, perCount)
	if err != nil {
		return usagef("--report-epsilon: %v", err)
	}
	lap, err := noise.NewDiscreteLaplace(t)
	if err != nil {
		return fmt.Errorf("%w: --report-epsilon %g: the noise scale %s: %v", label.ErrInvalidInput, eps, t.RatString(), err)
	}
	lr, _, err := openLedgerForLabel(c, e)
	if err != nil {
		return err
	}
	var run *ledger.Run
	rho := eps * eps / 2 // pure ε-DP is ε²/2-zCDP (Bun & Steinke 2016, Proposition 1.4)
	if lr != nil {
		// The same dataset as pate label's: the ledger composes them.
		run, err = lr.record(c, ledger.BeginRequest{
			Labels: []string{c.String("label")}, Mechanism: "replicate-report",
			MaxRho: rho, Delta: c.Float64("delta"), Epsilon: eps,
		})
		if err != nil {
			return err
		}
	}
	u := laplaceBound(t, 0.025)
	src := noise.NewCryptoSource() // never seeded: a seeded report would not be private
	for _, a := range arms {
		a.release(lap, u, src)
	}
	res.Private, res.Note = true, privateNote
	res.Report = &privateReport{Epsilon: eps, EpsilonPerCount: perCount, Sensitivity: sens,
		LaplaceScale: t.FloatString(6), NoiseBound: u, Basis: reportBasis}
	if run != nil {
		if err := run.End(rho); err != nil {
			return fmt.Errorf("--ledger: %w", err)
		}
		sayRecorded(c, e, run, "charged the report's ε")
	}
	return nil
}

func printArm(w io.Writer, indent, name string, a *agreement, private, truth bool) {
	fmt.Fprintf(w, "%s%s %.4f of the released labels differ (95%% CI %.4f–%.4f)\n", indent, name, a.Rate, a.Low, a.High)
	if private {
		return
	}
	fmt.Fprintf(w, "%s    %d answer vs abstention, %d label vs label; %.4f of the queries answered", indent, a.AnswerVsAbstain, a.LabelVsLabel, a.AnsweredFrac)
	if truth {
		fmt.Fprintf(w, ", %.4f of the answers correct", a.Accuracy)
	}
	fmt.Fprintln(w)
}

func compare(a *agreement, x, y []string) {
	for i := range x {
		a.Compared++
		if x[i] != y[i] {
			a.Differ++
			if x[i] == "" || y[i] == "" {
				a.AnswerVsAbstain++
			} else {
				a.LabelVsLabel++
			}
		}
	}
}

// replicateVia is how pate replicate shares the seed of its --replicable runs.
const replicateVia = "derived from --seed by pate replicate (a diagnostic, not a release)"

// replicateKey is the shared key of a --replicable run of pate replicate.
func replicateKey(seed uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("pate replicate key "), seed)
}

// readColumnText reads one column of a file as text ("" for nulls).
func readColumnText(mem memory.Allocator, path, col string) ([]string, error) {
	r, err := pateio.Open(path, pateio.ReadOptions{Allocator: mem})
	if err != nil {
		return nil, fmt.Errorf("--public: %w", err)
	}
	defer r.Close()
	idx := r.Schema().FieldIndices(col)
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: --truth %q: %s has no such column (or has it twice)", label.ErrInvalidInput, col, path)
	}
	var out []string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("--public: %w", err)
		}
		a := rec.Column(idx[0])
		for i := 0; i < a.Len(); i++ {
			v := ""
			if !a.IsNull(i) {
				v = a.ValueStr(i)
			}
			out = append(out, v)
		}
		rec.Release()
	}
}

// splitParts groups row indices by their part.
func splitParts(part []int, k int) [][]int {
	parts := make([][]int, k)
	for i, p := range part {
		parts[p] = append(parts[p], i)
	}
	return parts
}

// schemaOf opens a file only for its schema.
func schemaOf(mem memory.Allocator, path string) (*arrow.Schema, error) {
	r, err := pateio.Open(path, pateio.ReadOptions{Allocator: mem})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Schema(), nil
}

// readWhole reads a file into one record (its batches concatenated).
func readWhole(mem memory.Allocator, path string, types map[string]arrow.DataType) (arrow.Record, error) {
	sens, err := pateio.Open(path, pateio.ReadOptions{Allocator: mem, CSVTypes: types})
	if err != nil {
		return nil, fmt.Errorf("--private: %w", err)
	}
	defer sens.Close()
	var recs []arrow.Record
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for {
		rec, err := sens.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--private: %w", err)
		}
		recs = append(recs, rec)
	}
	schema := sens.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for j := range cols {
		chunks := make([]arrow.Array, len(recs))
		for i, r := range recs {
			chunks[i] = r.Column(j)
		}
		if len(chunks) == 0 {
			cols[j] = array.MakeArrayOfNull(mem, schema.Field(j).Type, 0)
			continue
		}
		if cols[j], err = array.Concatenate(chunks, mem); err != nil {
			return nil, fmt.Errorf("--private: column %q: %w", schema.Field(j).Name, err)
		}
	}
	return array.NewRecord(schema, cols, -1), nil
}

// takeRows copies the given rows of whole into one record.
func takeRows(mem memory.Allocator, whole arrow.Record, rows []int) (arrow.Record, error) {
	b := array.NewRecordBuilder(mem, whole.Schema())
	defer b.Release()
	for j := 0; j < int(whole.NumCols()); j++ {
		col := whole.Column(j)
		fb := b.Field(j)
		for _, r := range rows {
			if err := appendValue(fb, col, r); err != nil {
				return nil, fmt.Errorf("column %q: %w", whole.Schema().Field(j).Name, err)
			}
		}
	}
	return b.NewRecord(), nil
}

func appendValue(b array.Builder, a arrow.Array, i int) error {
	if a.IsNull(i) {
		b.AppendNull()
		return nil
	}
	switch col := a.(type) {
	case *array.Int64:
		b.(*array.Int64Builder).Append(col.Value(i))
	case *array.Int32:
		b.(*array.Int32Builder).Append(col.Value(i))
	case *array.Float64:
		b.(*array.Float64Builder).Append(col.Value(i))
	case *array.Float32:
		b.(*array.Float32Builder).Append(col.Value(i))
	case *array.String:
		b.(*array.StringBuilder).Append(col.Value(i))
	case *array.Boolean:
		b.(*array.BooleanBuilder).Append(col.Value(i))
	default:
		return fmt.Errorf("type %s is not supported by pate replicate", a.DataType())
	}
	return nil
}

// oneRecord serves a single record.
type oneRecord struct {
	rec  arrow.Record
	done bool
}

func (o *oneRecord) Schema() *arrow.Schema { return o.rec.Schema() }
func (o *oneRecord) Read() (arrow.Record, error) {
	if o.done {
		return nil, io.EOF
	}
	o.done = true
	o.rec.Retain()
	return o.rec, nil
}

// labelsOf collects the released label of every row as text ("" when the
// row abstained).
type labelsOf struct{ out []string }

func (l *labelsOf) Write(rec arrow.Record) error {
	n := int(rec.NumCols())
	lab, src := rec.Column(n-2), rec.Column(n-1).(*array.String)
	for i := 0; i < int(rec.NumRows()); i++ {
		v := ""
		if src.Value(i) != label.SourceAbstained && !lab.IsNull(i) {
			v = lab.ValueStr(i)
		}
		l.out = append(l.out, v)
	}
	return nil
}

// replicateRun labels the public file with the sensitive rows of sub.
func replicateRun(c *cli.Context, sub arrow.Record, seed uint64, rep *label.Replicable) ([]string, error) {
	mem := memory.DefaultAllocator
	pub, err := pateio.Open(c.String("public"), pateio.ReadOptions{BatchSize: 16384, Allocator: mem})
	if err != nil {
		return nil, fmt.Errorf("--public: %w", err)
	}
	defer pub.Close()
	cfg := label.Config{
		Label:            c.String("label"),
		Classes:          nilIfEmpty(splitList(c.StringSlice("classes"))),
		Features:         nilIfEmpty(splitList(c.StringSlice("features"))),
		Keep:             []string{},
		Teachers:         c.Int("teachers"),
		Learner:          c.String("learner"),
		Mechanism:        c.String("mechanism"),
		Epsilon:          c.Float64("epsilon"),
		Delta:            c.Float64("delta"),
		MaxQueries:       c.Int64("max-queries"),
		PublicRows:       pub.NumRows(),
		Params:           mechanismParams(c),
		AnsweredFraction: c.Float64("answered-fraction"),
		SigmaRatio:       c.Float64("sigma-ratio"),
		SensitiveName:    inputName(c.String("private")),
		PublicName:       inputName(c.String("public")),
		Seed:             &seed,
		Replicable:       rep,
		BatchSize:        16384,
		Allocator:        mem,
		Version:          version,
	}
	lab, err := label.New(cfg, sub.Schema(), pub.Schema())
	if err != nil {
		return nil, err
	}
	out := &labelsOf{}
	if _, err := lab.Run(c.Context, &oneRecord{rec: sub}, pub, out); err != nil {
		return nil, err
	}
	return out.out, nil
}
