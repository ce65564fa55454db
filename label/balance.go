package label

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/learners"
)

// balanceMaxLoss is the most expected accuracy (under the released
// model's own probabilities) that the models labelling every row
// (dp-logreg, the cells) give up to lean their decision towards balanced
// accuracy (learners.BalanceAlpha): a minority class the model tells apart
// is no longer drowned by the majority's prior, and a model that cannot
// tell it apart keeps its plain argmax.
var balanceMaxLoss = 0.005

// balanceMinRows is the fewest sensitive rows (the released noisy count)
// with which a model's decision is leant at all: trained on fewer, its
// probabilities are too rough for the accuracy it expects of itself to
// guard anything (glass, 142 rows of 6 classes, lost 0.023 at ε = 2 with
// the leaning). The balanced-accuracy line asks for sets of 300
// sensitive rows and more.
const balanceMinRows = 300

// balanceFloor is the least class share the balancing divides by.
const balanceFloor = 1e-3

// balanceSampleRows bounds the public rows the shares are estimated on.
const balanceSampleRows = 20000

// balanceSample is a thinned sample of the encoded public head.
func balanceSample(enc *learners.Encoder, head []arrow.Record) (*learners.Matrix, error) {
	if enc == nil || len(head) == 0 {
		return nil, nil // no public rows to weigh the decision on: the plain argmax
	}
	rows := 0
	for _, r := range head {
		rows += int(r.NumRows())
	}
	pub, err := publicSample(enc, head, rows, balanceSampleRows)
	if err != nil {
		return nil, invalid("encoding the public rows: %w", err)
	}
	return pub, nil
}

// balanceLinear leans a released linear model's decision towards balanced
// accuracy, weighed on its probabilities over the public sample
// (post-processing of a released model and public rows), when its noisy
// count of rows is at least balanceMinRows.
func balanceLinear(m learners.Model, pub *learners.Matrix, noisyRows int64) (learners.Model, learners.Balance, error) {
	if balanceMaxLoss <= 0 || noisyRows < balanceMinRows {
		return m, learners.Balance{}, nil
	}
	return learners.BalancedLinear(m, pub, balanceMaxLoss, balanceFloor)
}

// balanceCells leans the released noisy cells × classes table's decision
// towards balanced accuracy: the cells are weighed as rows (a cell's
// probabilities its clamped noisy histogram normalised, its weight the
// histogram's sum: post-processing of the table), and each class's column
// is divided by its share to the chosen power. The table is scaled by 2^10
// before the division so that integer rounding loses nothing the argmax
// needs. It returns the table to label with.
func balanceCells(table []int64, classes int, noisyRows int64) ([]int64, learners.Balance) {
	if balanceMaxLoss <= 0 || classes < 2 || len(table) == 0 || noisyRows < balanceMinRows {
		return table, learners.Balance{}
	}
	cells := len(table) / classes
	probs := make([]float64, len(table))
	weight := make([]float64, cells)
	for i := 0; i < cells; i++ {
		sum := 0.0
		for c := 0; c < classes; c++ {
			sum += float64(max(table[i*classes+c], 0))
		}
		weight[i] = sum
		for c := 0; c < classes; c++ {
			if sum > 0 {
				probs[i*classes+c] = float64(max(table[i*classes+c], 0)) / sum
			} else {
				probs[i*classes+c] = 1 / float64(classes)
			}
		}
	}
	b := learners.BalanceAlpha(probs, weight, classes, balanceMaxLoss, balanceFloor)
	if b.Alpha == 0 {
		return table, b
	}
	w := make([]float64, classes)
	wmax := 0.0
	for c := range w {
		w[c] = math.Pow(math.Max(b.Shares[c], balanceFloor), -b.Alpha)
		wmax = math.Max(wmax, w[c])
	}
	out := make([]int64, len(table))
	for i, v := range table {
		out[i] = int64(math.Round(float64(v) * 1024 * w[i%classes] / wmax))
	}
	return out, b
}

// describeBalance states in the report (decision) and its plan line how
// the model's decision was leant towards balanced accuracy.
func describeBalance(rep *Report, b learners.Balance) {
	if b.Shares == nil {
		return
	}
	shares := make([]string, len(b.Shares))
	for i, s := range b.Shares {
		shares[i] = strconv.FormatFloat(s, 'f', 3, 64)
	}
	d := fmt.Sprintf("the plain argmax: the classes are about even, or leaning towards balanced accuracy would cost more than %g of the "+
		"accuracy the model expects of itself (class shares %s; expected accuracy %.3f, balanced accuracy %.3f)",
		balanceMaxLoss, strings.Join(shares, ", "), b.PlainAcc, b.PlainBA)
	if b.Alpha > 0 {
		d = fmt.Sprintf("leant towards balanced accuracy: each class's probability divided by its share^%g "+
			"(class shares %s; the model's own expectation: accuracy %.3f → %.3f, balanced accuracy %.3f → %.3f)",
			b.Alpha, strings.Join(shares, ", "), b.PlainAcc, b.Acc, b.PlainBA, b.BA)
	}
	rep.Decision = d
	if rep.Plan != "" {
		rep.Plan += "; decision: " + d
	} else {
		rep.Plan = "decision: " + d
	}
}
