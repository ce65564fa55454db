package replicate

import "math"

// NotPrivate is the note of figures released without Release.
const NotPrivate = "NOT PRIVATE: pate replicate splits and reads the sensitive data outside any mechanism; its figures are a diagnostic for the data owner, not for release."

// Result is what a replication measures (and, after Release, releases).
type Result struct {
	Private     bool      `json:"private"`
	Note        string    `json:"note"`
	Splits      int       `json:"splits"`
	Repeats     int       `json:"repeats"`
	PublicRows  int       `json:"public_rows"`
	Queried     int       `json:"queried_rows"` // rows compared per pair of parts: the others abstain in every run
	Shared      Agreement `json:"shared_randomness"`
	Independent Agreement `json:"independent_randomness"`
	// Replicable is the same with replicable rounding (Options.Replicable).
	Replicable *ReplicableArms `json:"replicable,omitempty"`
	// Report describes the noise of a private release (Release).
	Report *PrivateReport `json:"private_report,omitempty"`
}

// ReplicableArms are the figures of the runs with replicable rounding.
type ReplicableArms struct {
	Width       float64   `json:"width_sd"` // the rounding grid, in standard deviations of the noise
	Seed        string    `json:"seed"`     // how the shared seed was shared
	Shared      Agreement `json:"shared_randomness"`
	Independent Agreement `json:"independent_randomness"`
}

// Agreement is the disagreement rate of the released labels between parts,
// and (not after Release) what the runs released.
type Agreement struct {
	Compared int     `json:"rows_compared"`
	Differ   int     `json:"rows_differing"` // after Release: the noisy count, clamped to [0, rows_compared]
	Rate     float64 `json:"disagreement"`
	Low      float64 `json:"ci95_low"`
	High     float64 `json:"ci95_high"`

	// Not private: omitted after Release.
	AnswerVsAbstain int     `json:"answer_vs_abstain,omitempty"` // pairs where one part answered and the other abstained
	LabelVsLabel    int     `json:"label_vs_label,omitempty"`    // pairs where both answered, differently
	Queries         int     `json:"queries,omitempty"`           // queried rows over all runs
	Answered        int     `json:"answered,omitempty"`          // of them answered
	AnsweredFrac    float64 `json:"answered_fraction,omitempty"`
	Checked         int     `json:"answers_with_truth,omitempty"` // with truth: answered rows with a true label
	Correct         int     `json:"answers_correct,omitempty"`
	Accuracy        float64 `json:"answered_accuracy,omitempty"`
}

func (a *Agreement) finish() {
	a.Rate = float64(a.Differ) / float64(max(1, a.Compared))
	a.Low, a.High = wilson(a.Differ, a.Compared, z95)
	a.AnsweredFrac = float64(a.Answered) / float64(max(1, a.Queries))
	a.Accuracy = float64(a.Correct) / float64(max(1, a.Checked))
}

// utility adds one run's answers (and their accuracy against truth, when
// known) over its first n rows.
func (a *Agreement) utility(labels, truth []string, n int) {
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

// compare adds the pairs of labels of two parts (an abstention, "", counts
// as a label).
func (a *Agreement) compare(x, y []string) {
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

// queriedRows is the number of public rows put to the teachers in every
// run: the others abstain in all of them, so they never differ.
func queriedRows(maxQueries int64, rows int) int {
	if maxQueries > 0 && maxQueries < int64(rows) {
		return int(maxQueries)
	}
	return rows
}
