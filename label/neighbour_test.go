package label

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/apache/arrow/go/v15/arrow/decimal256"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/learners"
)

// The neighbouring-row test: privacy is a statement about two datasets
// that differ in one row, so it is tested as one. D is a sensitive dataset
// of ordinary rows of every feature type; D' is D plus one hostile row
// (±1e39, ±1e300, ±MaxFloat64, NaN, ±Inf, −0, subnormals, 2⁵³+1, extreme
// timestamps, full-precision decimals, 1 MB strings, an embedding with one
// huge element, ...). For every mechanism that learns from sensitive rows,
// the statistic it releases with noise — computed here before the noise —
// may move between D and D' by at most the sensitivity its accountant
// charges, whatever the row holds. A huge value that overflows to ±Inf, a
// NaN that skips a clip, an int64 that wraps: each shows as a move larger
// than the charge.
//
// Adding a mechanism or a learner: a teacher learner (a name in
// learners.LearnerNames) needs one line
// {"teachers/<name>", teachersNeighbour("<name>")} in
// neighbourMechanisms: its teachers' vote histograms are checked as the
// others' are. A mechanism that learns from the rows themselves (a
// rowMechanism in the registry) needs one line {"<mechanism name>", check}
// whose check computes, on D (once, through onD) and on D', the statistic
// the mechanism adds noise to, with the randomness the two share coupled
// (privateKNNNeighbour: the same subsample draws; dpLogRegNeighbour: D'
// trained on D's released sums), and returns an error when they differ by
// more than the charged sensitivity. TestNeighbourTableIsComplete fails
// until the line is there.

// nbRow is one sensitive row (every feature type and the label).
type nbRow struct {
	f64   float64
	f32   float32
	i64   int64
	ts    int64 // nanoseconds since the epoch
	dec   decimal128.Num
	dec2  decimal256.Num
	s     string
	b     bool
	emb   [4]float32
	emb64 [2]float64
	y     string
	u     string   // the privacy unit (nbUnitSchema only)
	nulls []string // columns left null
}

const (
	nbDecPrec, nbDecScale   = 38, 4
	nbDec2Prec, nbDec2Scale = 76, 10
	nbTeachers              = 5
)

var nbClasses = []string{"a", "b", "c"}

func nbSchema(withLabel bool) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: nbDecPrec, Scale: nbDecScale}, Nullable: true},
		{Name: "dec2", Type: &arrow.Decimal256Type{Precision: nbDec2Prec, Scale: nbDec2Scale}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "emb", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "emb64", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), Nullable: true},
	}
	if withLabel {
		fields = append(fields, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// nbUnitSchema is the sensitive schema with a privacy-unit column u.
func nbUnitSchema() *arrow.Schema {
	return arrow.NewSchema(append(nbSchema(true).Fields(), arrow.Field{Name: "u", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
}

// nbRecord builds one batch of rows.
func nbRecord(mem memory.Allocator, schema *arrow.Schema, rows []nbRow) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range rows {
		for i, f := range schema.Fields() {
			fb := b.Field(i)
			if slices.Contains(r.nulls, f.Name) {
				fb.AppendNull()
				continue
			}
			switch f.Name {
			case "f64":
				fb.(*array.Float64Builder).Append(r.f64)
			case "f32":
				fb.(*array.Float32Builder).Append(r.f32)
			case "i64":
				fb.(*array.Int64Builder).Append(r.i64)
			case "ts":
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts))
			case "dec":
				fb.(*array.Decimal128Builder).Append(r.dec)
			case "dec2":
				fb.(*array.Decimal256Builder).Append(r.dec2)
			case "s":
				fb.(*array.StringBuilder).Append(r.s)
			case "b":
				fb.(*array.BooleanBuilder).Append(r.b)
			case "emb":
				lb := fb.(*array.FixedSizeListBuilder)
				lb.Append(true)
				lb.ValueBuilder().(*array.Float32Builder).AppendValues(r.emb[:], nil)
			case "emb64":
				lb := fb.(*array.FixedSizeListBuilder)
				lb.Append(true)
				lb.ValueBuilder().(*array.Float64Builder).AppendValues(r.emb64[:], nil)
			case "y":
				fb.(*array.StringBuilder).Append(r.y)
			case "u":
				fb.(*array.StringBuilder).Append(r.u)
			}
		}
	}
	return b.NewRecord()
}

// nbOrdinary returns n ordinary rows: Gaussian features, a string of four
// values, a class that depends on the features (so that models learn).
func nbOrdinary(n int, seed uint64) []nbRow {
	rng := rand.New(rand.NewPCG(seed, 11))
	rows := make([]nbRow, n)
	for i := range rows {
		z := rng.NormFloat64()
		w := rng.NormFloat64()
		r := nbRow{
			f64: z, f32: float32(w), i64: int64(rng.IntN(1000)),
			ts:  1_700_000_000_000_000_000 + rng.Int64N(1_000_000_000_000_000),
			dec: decimal128.FromI64(rng.Int64N(1_000_000)), dec2: decimal256.FromI64(rng.Int64N(1_000_000)),
			s: fmt.Sprintf("v%d", rng.IntN(4)), b: rng.IntN(2) == 1,
			emb:   [4]float32{float32(z + 0.3*rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(w)},
			emb64: [2]float64{rng.NormFloat64(), z - w},
		}
		switch {
		case z+w > 0.7:
			r.y = "a"
		case z+w > -0.7:
			r.y = "b"
		default:
			r.y = "c"
		}
		rows[i] = r
	}
	return rows
}

// nbHostile is the table of hostile rows: an ordinary row with one value
// (or several) replaced.
func nbHostile() []struct {
	name string
	set  func(*nbRow)
} {
	big128, _ := decimal128.FromString(strings.Repeat("9", 34)+".9999", nbDecPrec, nbDecScale)
	tiny128, _ := decimal128.FromString("0.0001", nbDecPrec, nbDecScale)
	big256, _ := decimal256.FromString(strings.Repeat("9", 66)+"."+strings.Repeat("9", 10), nbDec2Prec, nbDec2Scale)
	neg256 := big256.Negate()
	huge := strings.Repeat("x", 1<<20)
	type c = struct {
		name string
		set  func(*nbRow)
	}
	out := []c{}
	for _, v := range []float64{1e39, -1e39, 1e300, -1e300, math.MaxFloat64, -math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1),
		math.Copysign(0, -1), 5e-324, -5e-324, 0x1p53 + 2, 3.4028235e38} {
		out = append(out, c{fmt.Sprintf("f64=%g", v), func(r *nbRow) { r.f64 = v }})
		out = append(out, c{fmt.Sprintf("emb64[1]=%g", v), func(r *nbRow) { r.emb64[1] = v }})
	}
	for _, v := range []float32{math.MaxFloat32, -math.MaxFloat32, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32} {
		out = append(out, c{fmt.Sprintf("f32=%g", v), func(r *nbRow) { r.f32 = v }})
		out = append(out, c{fmt.Sprintf("emb[0]=%g", v), func(r *nbRow) { r.emb[0] = v }})
	}
	for _, v := range []int64{1<<53 + 1, math.MaxInt64, math.MinInt64} {
		out = append(out, c{fmt.Sprintf("i64=%d", v), func(r *nbRow) { r.i64 = v }})
		out = append(out, c{fmt.Sprintf("ts=%d", v), func(r *nbRow) { r.ts = v }})
	}
	out = append(out,
		c{"ts=1ns", func(r *nbRow) { r.ts = 1 }},
		c{"dec=max", func(r *nbRow) { r.dec = big128 }},
		c{"dec=-max", func(r *nbRow) { r.dec = big128.Negate() }},
		c{"dec=tiny", func(r *nbRow) { r.dec = tiny128 }},
		c{"dec2=max", func(r *nbRow) { r.dec2 = big256 }},
		c{"dec2=-max", func(r *nbRow) { r.dec2 = neg256 }},
		c{"s=1MB", func(r *nbRow) { r.s = huge }},
		c{"y=1MB", func(r *nbRow) { r.y = huge }},
		c{"all null", func(r *nbRow) { r.nulls = []string{"f64", "f32", "i64", "ts", "dec", "dec2", "s", "b", "emb", "emb64"} }},
		c{"every value extreme", func(r *nbRow) {
			r.f64, r.f32, r.i64, r.ts, r.dec, r.dec2, r.s = 1e39, -math.MaxFloat32, math.MinInt64, math.MaxInt64, big128, neg256, huge
			r.emb = [4]float32{math.MaxFloat32, -math.MaxFloat32, math.MaxFloat32, float32(math.NaN())}
			r.emb64 = [2]float64{-1e300, math.MaxFloat64}
		}},
	)
	return out
}

// nbEnv is what every check shares: the public head, the encoder fitted
// on it, the public rows encoded (the queries), D, and each mechanism's
// statistic on D (computed once).
type nbEnv struct {
	mem  memory.Allocator
	head []arrow.Record
	enc  *learners.Encoder
	xPub *learners.Matrix
	d    []arrow.Record
	memo map[string]any
}

// onD returns what f computes on D, computed on the first call for key.
func onD[T any](e *nbEnv, key string, f func() (T, error)) (T, error) {
	if v, ok := e.memo[key]; ok {
		return v.(T), nil
	}
	v, err := f()
	if err == nil {
		e.memo[key] = v
	}
	return v, err
}

// withRow returns D' : D's batches, then a batch of the one row r.
func (e *nbEnv) withRow(r nbRow) []arrow.Record {
	return append(slices.Clip(e.d), nbRecord(e.mem, nbSchema(true), []nbRow{r}))
}

// newNBEnv builds the public side and D, of n rows.
func newNBEnv(t testing.TB, n int) *nbEnv {
	t.Helper()
	mem := memory.NewGoAllocator()
	pub := nbOrdinary(120, 2)
	rec := nbRecord(mem, nbSchema(false), pub)
	features := []string{"f64", "f32", "i64", "ts", "dec", "dec2", "s", "b", "emb", "emb64"}
	enc, err := learners.FitEncoder(rec.Schema(), features, []arrow.Record{rec}, learners.EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := encodeHead(enc, []arrow.Record{rec})
	if err != nil {
		t.Fatal(err)
	}
	d := []arrow.Record{nbRecord(mem, nbSchema(true), nbOrdinary(n, 1))}
	return &nbEnv{mem: mem, head: []arrow.Record{rec}, enc: enc, xPub: x, d: d, memo: map[string]any{}}
}

// labeler returns a seeded Labeler over the neighbour schemas.
func (e *nbEnv) labeler(mech, learner string) (*Labeler, error) {
	seed := uint64(5)
	cfg := Config{Label: "y", Classes: nbClasses, Teachers: nbTeachers, Learner: learner, Mechanism: mech,
		Epsilon: 1, Delta: 1e-5, Seed: &seed, Allocator: e.mem, BatchSize: 1024}
	if mech == MechanismStableEM || mech == MechanismPrivateLearner {
		cfg.MaxQueries = 100
	}
	return New(cfg, nbSchema(true), nbSchema(false))
}

// rows encodes the sensitive batches as the row mechanisms receive them.
func (e *nbEnv) rows(mech string, recs []arrow.Record) (*learners.Matrix, []int32, error) {
	l, err := e.labeler(mech, "")
	if err != nil {
		return nil, nil, err
	}
	x, y, _, _, err := l.sensitiveRows(context.Background(), recs, e.enc)
	return x, y, err
}

// neighbourCheck computes a mechanism's pre-noise statistic on D (e.d,
// through onD) and on D' (d1: D's batches then the added row's) and
// returns an error when they differ by more than the charged sensitivity.
type neighbourCheck func(e *nbEnv, d1 []arrow.Record) error

// neighbourMechanisms: one line per mechanism that learns from sensitive
// rows (see the top of this file to add one).
var neighbourMechanisms = []struct {
	name  string
	check neighbourCheck
}{
	{"teachers/logreg", teachersNeighbour("logreg")},
	{"teachers/nb", teachersNeighbour("nb")},
	{"teachers/tree", teachersNeighbour("tree")},
	{"teachers/gbt", teachersNeighbour("gbt")},
	{"teachers/knn", teachersNeighbour("knn")},
	{MechanismDPLogReg, dpLogRegNeighbour},
	{MechanismStableEM, stableEMNeighbour},
	{MechanismPrivateLearner, privateLearnerNeighbour},
	{MechanismPrivateKNN, privateKNNNeighbour},
	{MechanismCellHistogram, cellHistogramNeighbour},
}

// teachersNeighbour: the teachers' vote histogram of every public query is
// what lnmax, gnmax, confident-gnmax and svt add noise to, charged as one
// unit moving one teacher's vote: per query, at most one class loses a
// vote and one gains it (ℓ1 ≤ 2, ℓ2² ≤ 2, ℓ∞ ≤ 1), and every histogram
// sums to the number of teachers.
func teachersNeighbour(learner string) neighbourCheck {
	votes := func(e *nbEnv, recs []arrow.Record) ([]int32, error) {
		l, err := e.labeler("", learner)
		if err != nil {
			return nil, err
		}
		l.bins = learners.PublicBins(e.xPub, learners.DefaultMaxBins) // as Run fits them on the public head
		ens, _, err := l.trainTeachers(context.Background(), recs, e.enc)
		if err != nil {
			return nil, fmt.Errorf("training the teachers (a refusal that depends on the row): %w", err)
		}
		v := make([]int32, e.xPub.Rows*len(nbClasses))
		ens.Votes(e.xPub, v)
		return v, nil
	}
	return func(e *nbEnv, d1 []arrow.Record) error {
		var votes0, votes1 []int32
		var err error
		if votes0, err = onD(e, "teachers/"+learner, func() ([]int32, error) { return votes(e, e.d) }); err != nil {
			return err
		}
		if votes1, err = votes(e, d1); err != nil {
			return err
		}
		k := len(nbClasses)
		for q := 0; q < e.xPub.Rows; q++ {
			a, b := votes0[q*k:(q+1)*k], votes1[q*k:(q+1)*k]
			var l1, l2 int64
			var sa, sb int32
			for c := range a {
				dv := int64(b[c] - a[c])
				l1 += max(dv, -dv)
				l2 += dv * dv
				sa += a[c]
				sb += b[c]
			}
			if sa != nbTeachers || sb != nbTeachers || l1 > 2 || l2 > 2 {
				return fmt.Errorf("query %d: votes %v on D, %v on D' (one unit may move one vote of %d teachers)", q, a, b, nbTeachers)
			}
		}
		return nil
	}
}

// stepSource is the rounding source of a coupled dp-logreg run: reseeded
// at every step, so that at step s the rows D and D' share are rounded
// with the same draws in both runs (the added row, last, draws after them).
type stepSource struct{ src noise.Source }

func (s *stepSource) Uint64() uint64 { return s.src.Uint64() }
func (s *stepSource) reseed(step int) {
	s.src = noise.NewSeededSource(77, uint64(step))
}

// dpLogRegNeighbour: dp-logreg releases, at every step, the integer sum of
// the rows' clipped, rounded gradients plus the discrete Gaussian, charged
// at squared ℓ2 sensitivity SensSq. The two runs are coupled as the proof
// couples them: D' is trained on D's released (noisy) sums, so that both
// compute their gradients at the same parameters, and its own pre-noise sum
// must be within √SensSq of D's at every step. The noisy row count moves
// by at most 1 (its charged sensitivity).
func dpLogRegNeighbour(e *nbEnv, d1 []arrow.Record) error {
	rows := func(recs []arrow.Record) (*learners.Matrix, []int32, error) {
		x, y, err := e.rows(MechanismDPLogReg, recs)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding the rows (a refusal that depends on the row): %w", err)
		}
		v, err := dpLogRegMechanism{}.learner(&Labeler{}, x, y, len(nbClasses), e.enc, e.head)
		if err != nil {
			return nil, nil, err
		}
		return v.(*dpLogRegVoter).x, v.(*dpLogRegVoter).y, nil
	}
	type run struct {
		p              learners.DPLogRegParams
		rows           int
		sums, released [][]int64
	}
	rnd := &stepSource{}
	d, err := onD(e, MechanismDPLogReg, func() (*run, error) {
		x, y, err := rows(e.d)
		if err != nil {
			return nil, err
		}
		p, err := learners.PlanDPLogReg(x.Cols, len(nbClasses), float64(x.Rows), 0.05)
		if err != nil {
			return nil, err
		}
		p.Steps = min(p.Steps, 25)
		// The noise only has to be the same in both runs (the coupling
		// replays it); a seeded rounded Gaussian of the planned scale
		// stands for the exact sampler, which is tested on its own.
		sigma := 40 * math.Sqrt(float64(p.SensSq))
		rng := rand.New(rand.NewPCG(3, streamDPLogRegNoise))
		r := &run{p: p, rows: x.Rows}
		rnd.reseed(0)
		lr := &learners.DPLogReg{Params: p, Rand: rnd, Noise: learners.IntNoiseFunc(func(v []int64) error {
			r.sums = append(r.sums, slices.Clone(v))
			for j := range v {
				v[j] += int64(math.Round(sigma * rng.NormFloat64()))
			}
			r.released = append(r.released, slices.Clone(v))
			rnd.reseed(len(r.sums))
			return nil
		})}
		if _, err := lr.Fit(x, y, len(nbClasses)); err != nil {
			return nil, fmt.Errorf("training on D: %w", err)
		}
		return r, nil
	})
	if err != nil {
		return err
	}
	x1, y1, err := rows(d1)
	if err != nil {
		return err
	}
	if dr := x1.Rows - d.rows; dr < 0 || dr > 1 {
		return fmt.Errorf("the row count moves by %d (charged sensitivity 1)", dr)
	}
	step := 0
	var stepErr error
	sens := new(big.Int).SetInt64(d.p.SensSq)
	n2, a, b := new(big.Int), new(big.Int), new(big.Int)
	rnd.reseed(0)
	lr := &learners.DPLogReg{Params: d.p, Rand: rnd, Noise: learners.IntNoiseFunc(func(v []int64) error {
		if step >= len(d.sums) {
			return fmt.Errorf("more steps on D' than on D")
		}
		if stepErr == nil {
			n2.SetInt64(0)
			for j := range v {
				a.SetInt64(v[j])
				a.Sub(a, b.SetInt64(d.sums[step][j]))
				n2.Add(n2, a.Mul(a, a))
			}
			if n2.Cmp(sens) > 0 {
				stepErr = fmt.Errorf("step %d: the gradient sum moves by a squared norm of %s, the charge is %d", step+1, n2, d.p.SensSq)
			}
		}
		copy(v, d.released[step])
		step++
		rnd.reseed(step)
		return nil
	})}
	if _, err := lr.Fit(x1, y1, len(nbClasses)); err != nil {
		return fmt.Errorf("training on D' (a refusal that depends on the row): %w", err)
	}
	return stepErr
}

// stableEMNeighbour: per query, stable-em draws a Poisson subset S1 and
// runs the exponential mechanism over the labellings of S1, scored by
// errors on every sensitive row (sensitivity 1). The charge assumes that,
// when the added row is not in S1, the candidates are the same and every
// score moves by at most 1.
func stableEMNeighbour(e *nbEnv, d1 []arrow.Record) error {
	p := MechanismParams{SubsetRate: "0.2", Gamma: "0.1", EMEpsilon: "0.5"}
	index := func(recs []arrow.Record) (*stableEM, error) {
		x, y, err := e.rows(MechanismStableEM, recs)
		if err != nil {
			return nil, fmt.Errorf("encoding the rows (a refusal that depends on the row): %w", err)
		}
		return newStableEM(x, y, len(nbClasses), p)
	}
	var ss [2]*stableEM
	var err error
	if ss[0], err = onD(e, MechanismStableEM, func() (*stableEM, error) { return index(e.d) }); err != nil {
		return err
	}
	if ss[1], err = index(d1); err != nil {
		return err
	}
	for trial := uint64(0); trial < 3; trial++ {
		pick := noise.NewSeededSource(trial, 1)
		var s1 []int32
		for _, r := range ss[0].Rows {
			if pick.Uint64()%5 == 0 {
				s1 = append(s1, r)
			}
		}
		c0 := ss[0].Labellings(s1, noise.NewSeededSource(trial, 2))
		c1 := ss[1].Labellings(s1, noise.NewSeededSource(trial, 2))
		if !slices.Equal(c0, c1) {
			return fmt.Errorf("subset %d: the candidates differ though the added row is not in the subset (%d and %d)", trial, len(c0), len(c1))
		}
		for _, h := range c0 {
			if de := ss[1].Errors(h) - ss[0].Errors(h); de < 0 || de > 1 {
				return fmt.Errorf("subset %d: the errors of %+v move by %d (charged sensitivity 1)", trial, h, de)
			}
		}
	}
	return nil
}

// privateLearnerNeighbour: private-learner's exponential mechanism scores
// every stump of the public class by its errors on the sensitive rows,
// charged at sensitivity 1.
func privateLearnerNeighbour(e *nbEnv, d1 []arrow.Record) error {
	score := func(recs []arrow.Record) ([]int64, error) {
		x, y, err := e.rows(MechanismPrivateLearner, recs)
		if err != nil {
			return nil, fmt.Errorf("encoding the rows (a refusal that depends on the row): %w", err)
		}
		pl, err := newPrivateLearner(e.xPub, x, y, len(nbClasses), DefaultBins)
		if err != nil {
			return nil, err
		}
		return pl.errs, nil
	}
	var errs [2][]int64
	var err error
	if errs[0], err = onD(e, MechanismPrivateLearner, func() ([]int64, error) { return score(e.d) }); err != nil {
		return err
	}
	if errs[1], err = score(d1); err != nil {
		return err
	}
	if len(errs[0]) != len(errs[1]) {
		return fmt.Errorf("the class of stumps changed with the row (%d and %d)", len(errs[0]), len(errs[1]))
	}
	for h := range errs[0] {
		if de := errs[1][h] - errs[0][h]; de < 0 || de > 1 {
			return fmt.Errorf("stump %d: the errors move by %d (charged sensitivity 1)", h, de)
		}
	}
	return nil
}

// privateKNNNeighbour: private-knn adds noise to each query's histogram
// of the labels of the k nearest rows of a Poisson subsample, charged at
// ℓ2 sensitivity √2: with the same subsample draws for the rows D and D'
// share (the added row, last, draws after them, and lands in the subsample
// at the rate's probability: half the queries here), per query at most one vote moves between two
// classes or one is added (ℓ1 ≤ 2, ℓ2² ≤ 2).
func privateKNNNeighbour(e *nbEnv, d1 []arrow.Record) error {
	votes := func(recs []arrow.Record) ([]int32, error) {
		x, y, err := e.rows(MechanismPrivateKNN, recs)
		if err != nil {
			return nil, fmt.Errorf("encoding the rows (a refusal that depends on the row): %w", err)
		}
		// A high rate, so that the added row is in many subsamples.
		l := &Labeler{cfg: Config{Params: MechanismParams{SampleRate: "0.5", KNNK: 5}}}
		v, err := privateKNNMechanism{}.learner(l, x, y, len(nbClasses), e.enc, e.head)
		if err != nil {
			return nil, err
		}
		// Each query's subsample from a stream of its own, the same on D
		// and D' (Votes shares a stream among a chunk of queries, so the
		// added row's draw would shift the next query's subsample: the
		// same distribution, not the same draws).
		kv := v.(*knnVoter)
		k := len(nbClasses)
		counts := make([]int32, e.xPub.Rows*k)
		s := newKNNScratch(kv.k)
		for q := 0; q < e.xPub.Rows; q++ {
			kv.vote(e.xPub.Row(q), noise.NewSeededSource(13, uint64(q)), s, counts[q*k:(q+1)*k])
		}
		return counts, nil
	}
	v0, err := onD(e, MechanismPrivateKNN, func() ([]int32, error) { return votes(e.d) })
	if err != nil {
		return err
	}
	v1, err := votes(d1)
	if err != nil {
		return err
	}
	k := len(nbClasses)
	for q := 0; q < e.xPub.Rows; q++ {
		a, b := v0[q*k:(q+1)*k], v1[q*k:(q+1)*k]
		var l1, l2 int64
		for c := range a {
			dv := int64(b[c] - a[c])
			l1 += max(dv, -dv)
			l2 += dv * dv
		}
		if l1 > 2 || l2 > 2 {
			return fmt.Errorf("query %d: neighbour votes %v on D, %v on D' (charged ℓ2 sensitivity √2)", q, a, b)
		}
	}
	return nil
}

// knnMove is the largest ℓ1 and squared ℓ2 move between the histograms
// a and b of each query (classes wide), and the query where the ℓ1 one is.
func knnMove(a, b []int32, classes int) (l1, l2 int64, at int) {
	for q := 0; q < len(a)/classes; q++ {
		var m1, m2 int64
		for c := q * classes; c < (q+1)*classes; c++ {
			dv := int64(b[c] - a[c])
			m1 += max(dv, -dv)
			m2 += dv * dv
		}
		if m1 > l1 {
			l1, at = m1, q
		}
		l2 = max(l2, m2)
	}
	return l1, l2, at
}

// TestPrivateKNNUnitNeighbour holds private-knn with --privacy-unit to its
// charge when D and D' differ in one unit of several rows: D is the
// ordinary rows grouped into units of 1 to 5 rows (one row with a null
// unit, dropped), D' adds one unit of 5 rows placed on public row 0 (the
// first query) with a class that row does not have, so that they are near
// neighbours of that query and of the queries around it. The units' draws are
// coupled as in privateKNNNeighbour: each query's subsample from a stream
// of its own, the added unit (numbered last) drawing after D's. Sampling
// units, one row each, moves every histogram by at most ℓ1 2, ℓ2 √2;
// sampling the same rows independently (the row path, which the unit run
// must not take) moves the first query's by more, which the check catches.
func TestPrivateKNNUnitNeighbour(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	e := newNBEnv(t, 0)
	e.mem = mem
	defer releaseAll(e.head)
	releaseAll(e.d)
	rows := nbOrdinary(100, 1)
	for i, u := 0, 0; i < len(rows); u++ {
		for j := 0; j < 1+u%5 && i < len(rows); j, i = j+1, i+1 {
			rows[i].u = fmt.Sprintf("p%d", u)
		}
	}
	rows[17].nulls = []string{"u"}
	d := []arrow.Record{nbRecord(mem, nbUnitSchema(), rows)}
	defer releaseAll(d)
	q0 := nbOrdinary(120, 2)[0] // public row 0, as newNBEnv draws it
	other := map[string]string{"a": "b", "b": "c", "c": "a"}[q0.y]
	hostile := nbHostile()
	every := hostile[len(hostile)-1] // every value extreme
	tests := []struct {
		name string
		unit func() []nbRow
		// rowsMoveMore: sampling the unit's rows independently moves a
		// histogram by more than the charge (the test has the power to
		// catch the row path).
		rowsMoveMore bool
	}{
		{"5 rows on the first query", func() []nbRow {
			u := make([]nbRow, 5)
			for i := range u {
				u[i] = q0
				u[i].y, u[i].u = other, "added"
			}
			return u
		}, true},
		{"5 rows on the first query, one with every value extreme", func() []nbRow {
			u := make([]nbRow, 5)
			for i := range u {
				u[i] = q0
				u[i].y, u[i].u = other, "added"
			}
			every.set(&u[2])
			return u
		}, true},
		{"one row", func() []nbRow {
			r := q0
			r.y, r.u = other, "added"
			return []nbRow{r}
		}, false},
		{"3 rows, one without a class", func() []nbRow {
			u := []nbRow{q0, q0, q0}
			for i := range u {
				u[i].y, u[i].u = other, "added"
			}
			u[1].nulls = []string{"y"}
			return u
		}, true},
	}
	const k = 5
	classes := len(nbClasses)
	votes := func(recs []arrow.Record, units bool) ([]int32, error) {
		return knnNeighbourVotes(e, mem, recs, units, k)
	}
	var onD [2][]int32
	for i, units := range []bool{false, true} {
		var err error
		if onD[i], err = votes(d, units); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			added := nbRecord(mem, nbUnitSchema(), tc.unit())
			defer added.Release()
			d1 := []arrow.Record{d[0], added}
			v1, err := votes(d1, true)
			if err != nil {
				t.Fatal(err)
			}
			u1, u2, uq := knnMove(onD[1], v1, classes)
			if u1 > 2 || u2 > knnSens2 {
				t.Errorf("sampling units: query %d moves by ℓ1 %d (ℓ2² up to %d): votes %v on D, %v on D' (charged ℓ2 √2)",
					uq, u1, u2, onD[1][uq*classes:(uq+1)*classes], v1[uq*classes:(uq+1)*classes])
			}
			r1, err := votes(d1, false)
			if err != nil {
				t.Fatal(err)
			}
			l1, l2, q := knnMove(onD[0], r1, classes)
			if moved := l1 > 2 || l2 > knnSens2; moved != tc.rowsMoveMore {
				t.Errorf("sampling rows: the largest move is ℓ1 %d, ℓ2² %d (query %d); want a move beyond the charge: %v", l1, l2, q, tc.rowsMoveMore)
			}
			t.Logf("largest move sampling units: ℓ1 %d, ℓ2² %d; sampling rows: ℓ1 %d, ℓ2² %d (query %d)", u1, u2, l1, l2, q)
		})
	}
}

// knnNeighbourVotes is every public query's k-neighbour histogram on the
// sensitive records recs of the unit schema, sampling units (one row each)
// or, with units false, rows (dropping what the unit path drops), each
// query's subsample drawn from a seeded stream of its own.
func knnNeighbourVotes(e *nbEnv, mem memory.Allocator, recs []arrow.Record, units bool, k int) ([]int32, error) {
	seed := uint64(5)
	classes := len(nbClasses)
	cfg := Config{Label: "y", Classes: nbClasses, Mechanism: MechanismPrivateKNN, PrivacyUnit: "u", Teachers: nbTeachers, Epsilon: 1, Delta: 1e-5,
		Seed: &seed, Allocator: mem, BatchSize: 1024, Params: MechanismParams{SampleRate: "0.5", KNNK: k}}
	l, err := New(cfg, nbUnitSchema(), nbSchema(false))
	if err != nil {
		return nil, err
	}
	x, y, un, _, err := l.sensitiveRows(context.Background(), recs, e.enc)
	if err != nil {
		return nil, err
	}
	var v voter
	if units {
		v, err = privateKNNMechanism{}.unitLearner(l, x, y, un, classes)
	} else {
		for i, u := range un { // the row path drops what the unit path drops
			if u < 0 {
				y[i] = -1
			}
		}
		v, err = privateKNNMechanism{}.learner(l, x, y, classes, e.enc, e.head)
	}
	if err != nil {
		return nil, err
	}
	kv := v.(*knnVoter)
	counts := make([]int32, e.xPub.Rows*classes)
	s := newKNNScratch(kv.k)
	for q := 0; q < e.xPub.Rows; q++ {
		kv.vote(e.xPub.Row(q), noise.NewSeededSource(13, uint64(q)), s, counts[q*classes:(q+1)*classes])
	}
	return counts, nil
}

// checkNeighbour runs every line of neighbourMechanisms on D and D plus r.
func checkNeighbour(t *testing.T, e *nbEnv, name string, r nbRow) {
	t.Helper()
	d1 := e.withRow(r)
	defer d1[len(d1)-1].Release()
	for _, m := range neighbourMechanisms {
		if err := m.check(e, d1); err != nil {
			t.Errorf("%s, added row %s: %v", m.name, name, err)
		}
	}
}

// TestNeighbouringRow holds every row-training mechanism to its charged
// sensitivity against every hostile row of the table.
func TestNeighbouringRow(t *testing.T) {
	e := newNBEnv(t, 100)
	defer releaseAll(e.d)
	for _, hc := range nbHostile() {
		r := nbOrdinary(1, 99)[0]
		r.y = "a"
		hc.set(&r)
		checkNeighbour(t, e, hc.name, r)
	}
}

// FuzzNeighbouringRow is TestNeighbouringRow with the added row's values
// chosen by the fuzzer: go test -run '^$' -fuzz '^FuzzNeighbouringRow$' ./label.
func FuzzNeighbouringRow(f *testing.F) {
	f.Add(1e39, float32(0.5), int64(1), int64(0), "v1", float32(1), 2.0, "a")
	f.Add(math.Inf(-1), float32(math.NaN()), int64(math.MinInt64), int64(math.MaxInt64), "", float32(math.MaxFloat32), -1e300, "c")
	e := newNBEnv(f, 100)
	defer releaseAll(e.d)
	f.Fuzz(func(t *testing.T, f64 float64, f32 float32, i64, ts int64, s string, emb0 float32, emb64 float64, y string) {
		r := nbOrdinary(1, 99)[0]
		r.f64, r.f32, r.i64, r.ts, r.s, r.emb[0], r.emb64[1], r.y = f64, f32, i64, ts, s, emb0, emb64, y
		checkNeighbour(t, e, fmt.Sprintf("f64=%g f32=%g i64=%d ts=%d s of %d bytes emb[0]=%g emb64[1]=%g y of %d bytes", f64, f32, i64, ts, len(s), emb0, emb64, len(y)), r)
	})
}

// TestNeighbourTableIsComplete: every learner the teachers may use and
// every mechanism that learns from the rows has its line in
// neighbourMechanisms.
func TestNeighbourTableIsComplete(t *testing.T) {
	have := map[string]bool{}
	for _, m := range neighbourMechanisms {
		have[m.name] = true
	}
	for _, name := range learners.LearnerNames {
		if !have["teachers/"+name] {
			t.Errorf("learner %q has no line in neighbourMechanisms", name)
		}
	}
	for _, m := range registry {
		if _, ok := m.(rowMechanism); ok && !have[m.Name()] {
			t.Errorf("mechanism %q learns from the rows and has no line in neighbourMechanisms", m.Name())
		}
	}
}
