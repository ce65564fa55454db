package label

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/internal/fdp"
	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// TestCellsFor: the public rule's number of cells, about 3σ rows a cell,
// at least one a class, at most CellMaxCells.
func TestCellsFor(t *testing.T) {
	tests := []struct {
		rows    int64
		sigma   float64
		classes int
		want    int
	}{
		{13_333, 6.9, 26, 644},
		{4_290, 6.9, 6, 207},
		{300, 10, 2, 10},
		{100, 10, 7, 7}, // fewer rows than a cell a class: one a class
		{1, 10, 1, 2},   // never fewer than two
		{1_000_000, 1, 2, CellMaxCells},
		{38_666, 6.9, 7, 1868},
	}
	for _, tc := range tests {
		if got := CellsFor(tc.rows, tc.sigma, tc.classes); got != tc.want {
			t.Errorf("CellsFor(%d, %g, %d) = %d, want %d", tc.rows, tc.sigma, tc.classes, got, tc.want)
		}
	}
}

// cellBlobs are n rows of classes Gaussian blobs in dim dimensions and
// the classes.
func cellBlobs(n, dim, classes int, seed uint64) (*learners.Matrix, []int32) {
	return dplrBlobs(n, dim, classes, seed)
}

// TestCellTableCounts: without noise (σ so small that the sampler draws
// 0), the table is the count of each row in its nearest centre's cell and
// class, its total the number of rows.
func TestCellTableCounts(t *testing.T) {
	x, y := cellBlobs(400, 3, 3, 1)
	centres, err := learners.FitCellCentres(x, 12, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	g, err := dplrSampler(0.01)
	if err != nil {
		t.Fatal(err)
	}
	table, err := cellTable(centres, x, y, 3, g, noise.NewSeededSource(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int64, centres.Rows*3)
	for i := 0; i < x.Rows; i++ {
		best, bd := 0, float32(0)
		for c := 0; c < centres.Rows; c++ {
			var d float32
			for j, v := range x.Row(i) {
				d += (v - centres.Row(c)[j]) * (v - centres.Row(c)[j])
			}
			if c == 0 || d < bd {
				best, bd = c, d
			}
		}
		want[best*3+int(y[i])]++
	}
	var total int64
	for i := range want {
		total += table[i]
		if table[i] != want[i] {
			t.Errorf("entry %d (cell %d, class %d) = %d, want %d", i, i/3, i%3, table[i], want[i])
		}
	}
	if total != int64(x.Rows) {
		t.Errorf("the table counts %d rows, want %d", total, x.Rows)
	}
}

// cellHistogramNeighbour: the table counts each row once, in one cell and
// class; the centres are fitted on public rows only, so they are the same
// on D and D'. With the same noise draws the two released tables differ in
// at most one entry, by +1 (charged: ℓ2 sensitivity 1).
func cellHistogramNeighbour(e *nbEnv, d1 []arrow.Record) error {
	table := func(recs []arrow.Record) ([]int64, error) {
		x, y, err := e.rows(MechanismCellHistogram, recs)
		if err != nil {
			return nil, fmt.Errorf("encoding the rows (a refusal that depends on the row): %w", err)
		}
		v, err := cellHistogramMechanism{}.learner(&Labeler{}, x, y, len(nbClasses), e.enc, e.head)
		if err != nil {
			return nil, err
		}
		cv := v.(*cellVoter)
		centres, err := learners.FitCellCentres(cv.pub, 8, cellLloydIters, 3)
		if err != nil {
			return nil, err
		}
		g, err := dplrSampler(5)
		if err != nil {
			return nil, err
		}
		return cellTable(centres, cv.x, cv.y, len(nbClasses), g, noise.NewSeededSource(3, streamDPLogRegNoise))
	}
	t0, err := onD(e, MechanismCellHistogram, func() ([]int64, error) { return table(e.d) })
	if err != nil {
		return err
	}
	t1, err := table(d1)
	if err != nil {
		return err
	}
	if len(t0) != len(t1) {
		return fmt.Errorf("the table has %d entries on D and %d on D'", len(t0), len(t1))
	}
	var moved int64
	for i := range t0 {
		d := t1[i] - t0[i]
		if d < 0 || d > 1 {
			return fmt.Errorf("entry %d moves by %d (charged: one entry by at most 1)", i, d)
		}
		moved += d
	}
	if moved > 1 {
		return fmt.Errorf("%d entries move (charged: one)", moved)
	}
	return nil
}

// cellReport is the report of a cell-histogram run of budget eps on
// synthetic rows, filled in as a run fills it.
func cellReport(t *testing.T, eps float64) *Report {
	t.Helper()
	const delta = 1e-5
	x, y := cellBlobs(600, 4, 3, 1)
	pub, _ := cellBlobs(300, 4, 3, 2)
	seed := uint64(7)
	l := &Labeler{cfg: Config{Seed: &seed, Mechanism: MechanismCellHistogram, Epsilon: eps, Delta: delta}}
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		t.Fatal(err)
	}
	v := &cellVoter{x: x, y: y, classes: 3, features: x.Cols, pub: pub}
	if err := v.start(l, MechanismParams{}, nil, f); err != nil {
		t.Fatal(err)
	}
	return modelReport(t, MechanismCellHistogram, eps, delta, f, v)
}

// TestAuditCellHistogram: the audit re-derives the table's σ, the count's
// σ, the cells and the ρ from the budget and the public rule, so that a
// report with any of them edited fails and an honest one holds.
func TestAuditCellHistogram(t *testing.T) {
	scale := func(s string, f float64) string {
		v, _ := strconv.ParseFloat(s, 64)
		return strconv.FormatFloat(v*f, 'g', -1, 64)
	}
	tests := []auditEdit{
		{name: "honest"},
		{name: "table sigma edited down", edit: func(r *Report) { r.CellHistogram.Sigma = scale(r.CellHistogram.Sigma, 0.5) }, wantErr: ErrClaimExceeded},
		{name: "table sigma edited up", edit: func(r *Report) { r.CellHistogram.Sigma = scale(r.CellHistogram.Sigma, 2) }, wantErr: ErrClaimExceeded},
		{name: "count sigma edited down", edit: func(r *Report) { r.CellHistogram.CountSigma = scale(r.CellHistogram.CountSigma, 0.5) }, wantErr: ErrClaimExceeded},
		{name: "planned cells edited", edit: func(r *Report) { r.CellHistogram.PlannedCells++ }, wantErr: ErrClaimExceeded},
		{name: "more cells than planned", edit: func(r *Report) { r.CellHistogram.Cells = r.CellHistogram.PlannedCells + 1 }, wantErr: ErrClaimExceeded},
		{name: "nearest edited", edit: func(r *Report) { r.CellHistogram.Nearest++ }, wantErr: ErrClaimExceeded},
		{name: "smoothing edited", edit: func(r *Report) { r.CellHistogram.SmoothK = 1 }, wantErr: ErrClaimExceeded},
		{name: "model rho understated", edit: func(r *Report) { r.CellHistogram.Rho /= 2 }, wantErr: ErrClaimExceeded},
		{name: "spend understated", edit: func(r *Report) { r.Spent.Rho /= 2 }, wantErr: ErrClaimExceeded},
		{name: "claim edited down", edit: func(r *Report) { r.Guarantee.Epsilon /= 2; r.Budget.Epsilon /= 2 }, wantErr: ErrClaimExceeded},
		{name: "count from a choice that is not there", edit: func(r *Report) { r.CellHistogram.CountSource = dplrCountFromChoice }, wantErr: ErrInvalidInput},
		{name: "unknown count source", edit: func(r *Report) { r.CellHistogram.CountSource = "x" }, wantErr: ErrInvalidInput},
		{name: "section missing", edit: func(r *Report) { r.CellHistogram = nil }, wantErr: ErrInvalidInput},
		{name: "sigma not a number", edit: func(r *Report) { r.CellHistogram.Sigma = "x" }, wantErr: ErrInvalidInput},
		{name: "no filter", edit: func(r *Report) { r.Budget = BudgetReport{} }, wantErr: ErrInvalidInput},
	}
	runAuditEdits(t, func(t *testing.T) *Report { return cellReport(t, 1) }, tests)
}

// TestCellHistogramValidate: the settings cell-histogram cannot honour
// are refused before any data is read.
func TestCellHistogramValidate(t *testing.T) {
	ok := func() Config {
		return Config{Mechanism: MechanismCellHistogram, Epsilon: 1, Delta: 1e-5, Classes: []string{"0", "1"}}
	}
	tests := []struct {
		name string
		edit func(*Config)
		ok   bool
	}{
		{"valid", func(*Config) {}, true},
		{"no classes: the private class discovery releases them", func(c *Config) { c.Classes = nil }, true},
		{"no epsilon", func(c *Config) { c.Epsilon = 0 }, false},
		{"privacy unit", func(c *Config) { c.PrivacyUnit = "user" }, false},
		{"two labels", func(c *Config) { c.Labels = []string{"a", "b"} }, false},
		{"replicable", func(c *Config) { c.Replicable = &Replicable{} }, false},
		{"student", func(c *Config) { c.Student = "logreg" }, false},
		{"select uncertain", func(c *Config) { c.Select = SelectUncertain }, false},
		{"explicit noise", func(c *Config) { c.Params.Sigma = "30" }, false},
	}
	for _, tc := range tests {
		cfg := ok()
		tc.edit(&cfg)
		err := cellHistogramMechanism{}.validate(&cfg)
		if (err == nil) != tc.ok {
			t.Errorf("%s: validate = %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v does not wrap ErrInvalidInput", tc.name, err)
		}
	}
}

// TestTradeoffCellHistogram audits the table's release (the style of
// tradeoff_test.go) with the real planner's σ, sampler and claim
// (cellTableNoise), the real counting (cellCounts) and noise
// (addCellNoise): D is 20 rows, D' adds one row of class 1 near centre 1
// (of 0 and 20), and the test says D' when that entry of the released
// table reaches its count on D plus k. Its point must lie on or above the
// trade-off curve of the claimed ρ. Halve the claim, or shrink the noise,
// and it fails (.ci/mutation.sh).
func TestTradeoffCellHistogram(t *testing.T) {
	sigma, g, rho, err := cellTableNoise(0.5) // σ = 1: moderate error rates
	if err != nil {
		t.Fatal(err)
	}
	centres := &learners.Matrix{Rows: 2, Cols: 1, Data: []float32{0, 20}}
	rng := rand.New(rand.NewPCG(1, 2))
	x0 := learners.NewMatrix(20, 1)
	y0 := make([]int32, 20)
	for i := range y0 {
		x0.Data[i] = float32(rng.IntN(21))
		y0[i] = int32(rng.IntN(2))
	}
	x1 := &learners.Matrix{Rows: 21, Cols: 1, Data: append(append([]float32(nil), x0.Data...), 19)}
	y1 := append(append([]int32(nil), y0...), 1)
	const entry = 1*2 + 1 // centre 1, class 1
	var count int64       // D's count in that entry: nearer to 20 than to 0
	for i, v := range x0.Data {
		if v > 10 && y0[i] == 1 {
			count++
		}
	}
	// The counts do not depend on the draw: each trial adds the real
	// noise (addCellNoise, as cellTable does) to a copy of them.
	c0, err := cellCounts(centres, x0, y0, 2)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := cellCounts(centres, x1, y1, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("σ = %g, claimed ρ = %.4g", sigma, rho)
	n := tradeoffRuns()
	ks := []int64{1, 2}
	for _, k := range ks {
		t.Run(fmt.Sprintf("entry ≥ count+%d", k), func(t *testing.T) {
			trial := func(counts []int64, says1 bool) func() func(uint64) bool {
				return func() func(uint64) bool {
					tab := make([]int64, len(counts)) // one a worker
					return func(seed uint64) bool {
						copy(tab, counts)
						addCellNoise(tab, g, noise.NewSeededSource(seed, 96))
						return (tab[entry] >= count+k) == says1
					}
				}
			}
			pt := fdp.Point{FP: countRuns(n, 1, trial(c0, true)), N0: n, FN: countRuns(n, 2, trial(c1, false)), N1: n}
			zcdpCheck(fmt.Sprintf("cell table σ=%g", sigma), rho, pt).verify(t, len(ks))
		})
	}
}
