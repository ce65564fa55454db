package label

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// cell-histogram: the public rows are cut into cells (k-means centres
// fitted on the public head only, invariant 2), each sensitive row is
// counted once in the class histogram of its nearest centre, and the whole
// cell × class table is released once with the exact discrete Gaussian on
// every entry. Each public row of the sample is scored by the summed noisy
// histograms of its CellNearest nearest centres, and every public row is
// then labelled by the argmax of the summed scores of its CellSmoothK
// nearest among them (post-processing of public rows and the released
// table: the answers charge nothing).
//
// Adding or removing one sensitive row moves one entry of the table by 1
// (its cell is a function of the row and the public centres): ℓ2
// sensitivity 1, ρ = 1/(2σ²) for the whole table, however many cells. The
// run's zCDP filter has the budget RhoForEps(ε, δ); the model spends all of
// it, in two charges made before the first label:
//
//   - the noisy row count, as dp-logreg's (DPLogRegCountShare of the
//     budget; or the chooser's, released and charged with the choice);
//   - the table, σ planned for what the count left.
//
// The number of cells is a public rule of the noisy count n̂ and σ
// (CellsFor): about CellRowsPerSigma·σ rows a cell, so that the noise of
// an entry is small next to the counts of its cell's main class.

// MechanismCellHistogram is the noisy cell histogram.
const MechanismCellHistogram = "cell-histogram"

// SourceCellHistogram is the output's pate_source of the rows it labelled.
const SourceCellHistogram = "cell-histogram"

// The public rule of the cells.
const (
	// CellRowsPerSigma is the planned number of sensitive rows a cell, in
	// units of the table's σ.
	CellRowsPerSigma = 3
	// CellNearest is the number of nearest cells whose histograms label a
	// row.
	CellNearest = 3
	// CellMaxCells bounds the cells (and the labelling's cost per row).
	CellMaxCells = 2048
	// CellSmoothK is the number of nearest scored public rows whose summed
	// scores label a row (the 10-NN of the utility's ceilings).
	CellSmoothK = 10
	// cellSmoothRows bounds the labelled public rows the smoothing
	// searches (every s-th row of the sample).
	cellSmoothRows = 10_000
	// cellLloydIters bounds the k-means iterations of the centres.
	cellLloydIters = 10
	// cellSampleRows bounds the public rows the centres are fitted on:
	// every s-th row of the head.
	cellSampleRows = 50_000
)

// Noise streams of a seeded cell-histogram run: the count and the table
// draw from dp-logreg's (streamDPLogRegNoise), as the chooser's count does,
// so that a chosen run, which takes that count as its own and draws on,
// labels as the named one; the k-means seeding (public) from its own.
const streamCellCentres = 23

// CellsFor is the public rule's number of cells for a noisy row count n̂
// and the table's σ: n̂/(CellRowsPerSigma·σ), at least one a class and at
// most CellMaxCells.
func CellsFor(noisyRows int64, sigma float64, classes int) int {
	m := math.Round(float64(noisyRows) / (CellRowsPerSigma * sigma))
	lo := float64(max(classes, 2))
	return int(math.Min(math.Max(m, lo), CellMaxCells))
}

type cellHistogramMechanism struct{}

func (cellHistogramMechanism) Name() string { return MechanismCellHistogram }

func (cellHistogramMechanism) Noise() string {
	return "exact discrete Gaussian (Canonne, Kamath, Steinke 2020) on the noisy row count and on every entry of the cell × class table"
}

func (cellHistogramMechanism) validate(cfg *Config) error {
	return validateModelRun(cfg, "counts each row once", "the table spends", "its table labels every row")
}

// build: the answers are the model's predictions, free.
func (cellHistogramMechanism) build(*aggregator, MechanismParams) error { return nil }

func (cellHistogramMechanism) learnerName() string {
	return "noisy class histograms of public k-means cells"
}

func (cellHistogramMechanism) answerSource() string { return SourceCellHistogram }

// learner keeps the labelled rows (as dp-logreg) and a thinned sample of
// the encoded public head for the centres; the table is released once the
// budget filter is set (start).
func (cellHistogramMechanism) learner(_ *Labeler, X *learners.Matrix, y []int32, classes int, enc *learners.Encoder, head []arrow.Record) (voter, error) {
	rows := 0
	for _, r := range head {
		rows += int(r.NumRows())
	}
	pub, err := publicSample(enc, head, rows, cellSampleRows)
	if err != nil {
		return nil, invalid("encoding the public rows for the cells: %w", err)
	}
	if pub.Rows == 0 {
		return nil, invalid("%s needs public rows to place its cells", MechanismCellHistogram)
	}
	x, ys := labelledRows(X, y)
	return &cellVoter{x: x, y: ys, classes: classes, features: X.Cols, pub: pub}, nil
}

// cellVoter is the labelled table: one vote for its prediction.
type cellVoter struct {
	x        *learners.Matrix // sensitive: dropped once the table is released
	y        []int32
	classes  int
	features int              // encoded width (public)
	pub      *learners.Matrix // public sample the centres are fitted on
	model    learners.Model
	rel      *cellRelease
}

// cellRelease is what the table's release cost and was planned from.
type cellRelease struct {
	noisyRows       int64
	countSigma      float64
	countRho        float64
	countFromChoice bool
	balance         learners.Balance // how the decision leans towards balanced accuracy (balance.go)
	sigma           float64
	tableRho        float64
	planned, cells  int
}

// start releases the table on the run's filter: the only charges of the
// run.
func (v *cellVoter) start(l *Labeler, _ MechanismParams, _ *aggregator, b budget) error {
	f, ok := b.(*rdp.Filter)
	if !ok {
		return paramError("mechanism", " %s needs a budget filter (%v)", MechanismCellHistogram, ParamName("epsilon"))
	}
	l.cfg.phase(PhaseCells, 0, 0)
	m, rel, err := releaseCells(f, v.x, v.y, v.pub, v.classes, l.choiceCount, l.choiceNoise, l.source(streamDPLogRegNoise), l.source(streamCellCentres))
	v.x, v.y, v.pub = nil, nil, nil
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBudgetRefused, err)
	}
	v.model, v.rel = m, rel
	if !rel.countFromChoice { // the chooser warned of its own count
		l.warnFewRows(rel.noisyRows, rel.countSigma)
	}
	return nil
}

// releaseCells charges f for the count (unless count is the chooser's,
// then drawn on from countSrc) and the table, fits the centres on pub and
// returns the model of the noisy table.
func releaseCells(f *rdp.Filter, x *learners.Matrix, y []int32, pub *learners.Matrix, classes int,
	count *DPLogRegCount, countSrc, src, centreSrc noise.Source) (learners.Model, *cellRelease, error) {
	if len(y) != x.Rows {
		return nil, nil, errors.New("label: cell histogram: the labels and the feature rows differ in number")
	}
	rel := &cellRelease{}
	if count != nil {
		rel.noisyRows, rel.countSigma, rel.countFromChoice = count.Rows, count.Sigma, true
		src = countSrc
	} else {
		sc, gc, rho, err := dplrCount(f.Remaining())
		if err != nil {
			return nil, nil, err
		}
		if err := f.Charge(rho); err != nil {
			return nil, nil, fmt.Errorf("label: charging the row count: %w", err)
		}
		rel.countSigma, rel.countRho = sc, rho
		rel.noisyRows = max(1, int64(x.Rows)+gc.Sample(src))
	}
	sigma, g, rho, err := cellTableNoise(f.Remaining())
	if err != nil {
		return nil, nil, err
	}
	if err := f.Charge(rho); err != nil {
		return nil, nil, fmt.Errorf("label: charging the cell table: %w", err)
	}
	rel.sigma, rel.tableRho = sigma, rho
	rel.planned = CellsFor(rel.noisyRows, sigma, classes)
	centres, err := learners.FitCellCentres(pub, rel.planned, cellLloydIters, centreSrc.Uint64())
	if err != nil {
		return nil, nil, fmt.Errorf("label: cell centres: %w", err)
	}
	rel.cells = centres.Rows
	table, err := cellTable(centres, x, y, classes, g, src)
	if err != nil {
		return nil, nil, err
	}
	table, rel.balance = balanceCells(table, classes, rel.noisyRows)
	m, err := learners.NewCellModel(centres, table, classes, CellNearest)
	if err != nil {
		return nil, nil, fmt.Errorf("label: cell model: %w", err)
	}
	if m, err = learners.SmoothCells(m, pub, CellSmoothK, cellSmoothRows); err != nil {
		return nil, nil, fmt.Errorf("label: smoothing the cells: %w", err)
	}
	return m, rel, nil
}

// cellTableNoise plans the table's σ on the budget ρ left: the smallest
// 4-digit decimal σ with 1/(2σ²) ≤ budget, its exact sampler, and the ρ
// the table charges (the accountant's claim, which the trade-off audit
// checks against the noise).
func cellTableNoise(budget float64) (sigma float64, g *noise.DiscreteGaussian, rho float64, err error) {
	sigma, err = rdp.PlanGNMaxRho(2*budget, 1) // 1/σ² ≤ 2ρ
	if err != nil {
		return 0, nil, 0, fmt.Errorf("label: planning the cell table: %w", err)
	}
	g, err = dplrSampler(sigma)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("label: cell table noise: %w", err)
	}
	rho = rdp.DiscreteGaussianRho(1, sigma, 1)
	return sigma, g, rho, nil
}

// cellTable counts each row of x in its nearest centre's histogram (its
// class y) and adds g's noise, drawn from src, to every entry.
func cellTable(centres, x *learners.Matrix, y []int32, classes int, g *noise.DiscreteGaussian, src noise.Source) ([]int64, error) {
	table, err := cellCounts(centres, x, y, classes)
	if err != nil {
		return nil, err
	}
	addCellNoise(table, g, src)
	return table, nil
}

// cellCounts is the table before its noise: the count of the rows of x
// in each cell and class.
func cellCounts(centres, x *learners.Matrix, y []int32, classes int) ([]int64, error) {
	cells := make([]int32, x.Rows)
	if err := learners.AssignCells(centres, x, cells); err != nil {
		return nil, fmt.Errorf("label: cell histogram: %w", err)
	}
	table := make([]int64, centres.Rows*classes)
	for i, c := range cells {
		table[int(c)*classes+int(y[i])]++
	}
	return table, nil
}

// addCellNoise adds g's noise, drawn from src, to every entry of table.
func addCellNoise(table []int64, g *noise.DiscreteGaussian, src noise.Source) {
	for i := range table {
		table[i] += g.Sample(src)
	}
}

// Votes implements voter: one vote for the model's class.
func (v *cellVoter) Votes(x *learners.Matrix, counts []int32) {
	voteModel(v.model, v.classes, x, counts)
}

// trainedModel is the model (nil before start).
func (v *cellVoter) trainedModel() learners.Model { return v.model }

// modelRho is what the release charged.
func (v *cellVoter) modelRho() float64 {
	if v.rel == nil {
		return 0
	}
	return v.rel.countRho + v.rel.tableRho
}

// cellRule is the report's statement of the public rule.
var cellRule = fmt.Sprintf("cells = clamp(round(n̂/(%d·σ)), max(classes, 2), %d), k-means on the public head (at most %d rows, %d Lloyd iterations); "+
	"a public row of the head sample (at most %d) is scored by the summed noisy histograms of its %d nearest cells, "+
	"every row labelled by the argmax of the summed scores of its %d nearest such rows; σc and σ the smallest 4-digit decimals that fit the budget's shares",
	CellRowsPerSigma, CellMaxCells, cellSampleRows, cellLloydIters, cellSmoothRows, CellNearest, CellSmoothK)

// describeModel fills in the report's cell_histogram section.
func (v *cellVoter) describeModel(rep *Report) {
	r := v.rel
	if r == nil {
		return
	}
	source := ""
	if r.countFromChoice {
		source = dplrCountFromChoice
	}
	rep.CellHistogram = &CellHistogramReport{
		Features: v.features, Cells: r.cells, PlannedCells: r.planned, Nearest: CellNearest, SmoothK: CellSmoothK, NoisyRows: r.noisyRows,
		CountSigma: strconv.FormatFloat(r.countSigma, 'g', -1, 64), CountRho: Float(r.countRho), CountSource: source,
		Sigma: strconv.FormatFloat(r.sigma, 'g', -1, 64), TableRho: Float(r.tableRho), Rho: Float(r.countRho + r.tableRho),
		CountShare: Float(DPLogRegCountShare), Rule: cellRule,
		Noise: "the cell × class counts of the sensitive rows (each row in its nearest centre's cell), plus N_Z(0, σ²) on every entry",
	}
	describeBalance(rep, r.balance)
}

// auditModel re-derives the table's figures from the report's
// cell_histogram section and the budget: σc and σ must be those planned
// from the budget, the cells those of the public rule for the released
// count, and the ρ is recomputed from σc and σ. It returns that ρ.
func (cellHistogramMechanism) auditModel(rep *Report, res *AuditResult) (float64, error) {
	d := rep.CellHistogram
	if d == nil {
		return 0, invalid("report: --mechanism %s without its cell_histogram section", MechanismCellHistogram)
	}
	if !rep.Budget.Filter || !(float64(rep.Guarantee.Rho) > 0) {
		return 0, invalid("report: --mechanism %s runs on a budget filter, the report has none", MechanismCellHistogram)
	}
	_, sc, err := parsePositive("cell_histogram count_sigma", d.CountSigma)
	if err != nil {
		return 0, invalid("report: %w", err)
	}
	_, sigma, err := parsePositive("cell_histogram sigma", d.Sigma)
	if err != nil {
		return 0, invalid("report: %w", err)
	}
	budget, countRho, err := auditModelCount(rep, res, "cell_histogram", d.CountSource, d.CountSigma, sc)
	if err != nil {
		return 0, err
	}
	wantSigma, err := rdp.PlanGNMaxRho(2*math.Max(budget-countRho, 0), 1)
	if err != nil {
		return 0, invalid("report: cell_histogram: planning the table: %w", err)
	}
	addCheck(res, "cell-histogram table σ planned from the budget", sigma, wantSigma, sigma == wantSigma,
		"σ is planned for what the count left of the budget")
	planned := CellsFor(d.NoisyRows, sigma, len(rep.Classes))
	addCheck(res, "cell-histogram cells from the public rule", float64(d.PlannedCells), float64(planned),
		d.PlannedCells == planned && d.Cells >= 1 && d.Cells <= planned && d.Nearest == CellNearest && d.SmoothK == CellSmoothK,
		"cells planned from the released count and σ; at most that many fitted; the rule's nearest cells and smoothing")
	tableRho := rdp.DiscreteGaussianRho(1, sigma, 1)
	rho := countRho + tableRho
	addCheck(res, "cell-histogram ρ", float64(d.Rho), rho, leq(rho, float64(d.Rho)),
		"1/(2σc²) + 1/(2σ²): one row moves one entry of the table by 1; the report must not understate it")
	return rho, nil
}
