package learners

import (
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"

	"github.com/pate-tool/pate/learners/kernel"
)

// Voting on an embedding as Arrow holds it: the encoder's standardisation
// folded into stacked linear teachers.
//
// A linear teacher scores class c as Σ_j w_cj·(x_j − m_j)/s_j + b_c on the
// standardised features. That is Σ_j (w_cj/s_j)·x_j + (b_c − Σ_j w_cj·m_j/s_j)
// on the raw ones, so when the encoder's features are the elements of one
// list column (an embedding) the folded teachers can vote on the list's
// float32 child buffer, which holds the rows row-major, without encoding it.
//
// What it does to votes: the folded scores are the standardised ones up to
// float32 rounding (the folded weights are computed in float64 and rounded
// once; the kernel sums float32 products in either case), so a teacher whose
// margin between its two best classes is within rounding of 0 may vote the
// other way. The rounding grows with |m_j/s_j|: a mean far from 0 in units of
// the standard deviation leaves the raw values' scores as large sums that
// cancel, so Fold refuses a feature whose |m_j| exceeds maxFoldedMean·s_j
// (the products are then at most about 1000 times the standardised ones:
// some 10 of float32's 24 bits lost to the cancellation at worst). The vote
// is still a function of the teacher and the public row alone (which path a
// row takes depends on that row only), so the noise and the accounting are
// unchanged; but on such near-ties a seeded run's labels may differ from
// those of the encoded path (on the 1M-row embedding bench with a fixed
// seed, no label did).

// maxFoldedMean bounds |mean|/std of a feature that Fold folds.
const maxFoldedMean = 1 << 10

// FoldedEnsemble is a stacked Ensemble with an Encoder's standardisation
// folded into its weights (see Ensemble.Fold). It is immutable and safe for
// concurrent use.
type FoldedEnsemble struct {
	e   *Ensemble
	enc *Encoder
	lin *kernel.Linear
	dim int // the list elements voted on in place
	// lo, hi: each element's public range [Min, Max] in float32, rounded
	// inwards. A row voted on in place must lie within it, because the
	// encoded path clamps to it (see Encoder): any other row is encoded.
	lo, hi []float32
}

// Fold returns the ensemble with enc's standardisation folded into its
// weights, for voting on raw rows (see Prepared.Raw), or nil when that is
// not possible: the teachers are not stacked, or enc's encoded columns are
// not exactly the elements of one list column (and the list's missing
// indicator), each without a missing-indicator column of its own, with a
// finite mean within maxFoldedMean
// standard deviations of 0 and a standard deviation that folds into finite
// float32 weights and biases.
//
// Each teacher's first class it may predict, r, gets folded weights and
// bias 0, and every other class c it may predict the differences of c's and
// r's, divided by the standard deviations in float64 and rounded to float32
// once: the kernel's own differences to r are then exact, and the argmax is
// the same as with the teachers' own class r. The classes a teacher never
// predicts stay out of its argmax (the same seen classes as the ensemble's).
func (e *Ensemble) Fold(enc *Encoder) *FoldedEnsemble {
	if e.linear == nil || enc == nil {
		return nil
	}
	// The teachers' dim columns are the run of list elements, or the run
	// and its missing indicator: a row voted on in place has none missing
	// (its indicator is 0), and the folded teachers leave it out.
	full := enc.Width
	dim := listRun(enc.Columns)
	if full != e.linear.Dim() || len(enc.Columns) != full || enc.Columns[0].Offset != 0 || dim == 0 {
		return nil
	}
	if dim != full {
		ind := &enc.Columns[dim]
		if dim != full-1 || ind.Kind != KindListMissing || ind.Column != enc.Columns[0].Column || ind.Offset != dim || ind.ListWidth != dim {
			return nil
		}
	}
	for i := range enc.Columns[:dim] {
		f := &enc.Columns[i]
		if f.Kind != KindNumeric || f.Width != 1 || !finite(f.Mean) || !finite(f.Std) || f.Std <= 0 ||
			math.Abs(f.Mean) > maxFoldedMean*f.Std {
			return nil
		}
	}
	k, classes := len(e.models), e.classes
	w := make([]float32, k*classes*dim)
	b := make([]float32, k*classes)
	for t, m := range e.models {
		wt, bt := m.(LinearModel).Linear() // NewEnsemble stacked them: all linear
		seen := e.seen[t*classes : (t+1)*classes]
		r := 0
		for r < classes-1 && !seen[r] {
			r++
		}
		w0 := wt[r*full : r*full+dim]
		for c := r + 1; c < classes; c++ {
			if !seen[c] {
				continue
			}
			wc := wt[c*full : c*full+dim]
			out := w[(t*classes+c)*dim : (t*classes+c+1)*dim]
			bias := float64(bt[c]) - float64(bt[r])
			for j := range out {
				f := &enc.Columns[j]
				d := (float64(wc[j]) - float64(w0[j])) / f.Std
				out[j] = float32(d)
				if !finite(float64(out[j])) {
					return nil
				}
				bias -= d * f.Mean
			}
			b[t*classes+c] = float32(bias)
			if !finite(float64(b[t*classes+c])) {
				return nil
			}
		}
	}
	lin, err := kernel.NewLinearSeen(k, classes, dim, w, b, e.seen)
	if err != nil {
		return nil
	}
	lo, hi := make([]float32, dim), make([]float32, dim)
	for j := range lo {
		f := &enc.Columns[j]
		lo[j], hi[j] = float32(f.Min), float32(f.Max)
		if float64(lo[j]) < f.Min {
			lo[j] = math.Nextafter32(lo[j], float32(math.Inf(1)))
		}
		if float64(hi[j]) > f.Max {
			hi[j] = math.Nextafter32(hi[j], float32(math.Inf(-1)))
		}
	}
	return &FoldedEnsemble{e: e, enc: enc, lin: lin, dim: dim, lo: lo, hi: hi}
}

// inRange reports whether every row of v (dim values each, back to back)
// lies within the public range [lo, hi] of its elements; NaN and ±Inf do
// not.
func inRange(v, lo, hi []float32) bool {
	dim := len(lo)
	hi = hi[:dim]
	for len(v) >= dim {
		row := v[:dim]
		for j, x := range row {
			if !(x >= lo[j] && x <= hi[j]) {
				return false
			}
		}
		v = v[dim:]
	}
	return true
}

// Ensemble returns the ensemble that was folded.
func (f *FoldedEnsemble) Ensemble() *Ensemble { return f.e }

func finite(v float64) bool { return v-v == 0 }

// RawBatch is a prepared batch whose embedding column folded ensembles vote
// on in place (see Prepared.Raw). It is safe for concurrent use by Votes on
// disjoint rows.
type RawBatch struct {
	p    *Prepared
	fs   []*FoldedEnsemble
	list listArray
	vals []float32 // the list's float32 values
	dim  int
	// fixed: the list is a fixed_size_list of dim values (rows are laid
	// out back to back); listNulls, valNulls: the list or its values
	// hold nulls (rows are then checked one by one).
	fixed               bool
	listNulls, valNulls bool
}

// Raw returns p ready for the folded ensembles fs to vote on its rows in
// place, or nil when p's feature column is not a list of float32 (then the
// caller encodes the rows, as without folding). Every ensemble in fs must
// have been folded with p's encoder.
func (p *Prepared) Raw(fs []*FoldedEnsemble) *RawBatch {
	if len(fs) == 0 {
		return nil
	}
	for _, f := range fs {
		if f == nil || f.enc != p.e {
			return nil
		}
	}
	list, ok := p.cols[0].(listArray)
	if !ok {
		return nil
	}
	values, ok := list.ListValues().(*array.Float32)
	if !ok {
		return nil
	}
	dim := fs[0].dim
	fixed := false
	if fl, ok := list.(*array.FixedSizeList); ok {
		fixed = fl.DataType().(*arrow.FixedSizeListType).Len() == int32(dim)
	}
	return &RawBatch{p: p, fs: fs, list: list, vals: values.Float32Values(), dim: dim, fixed: fixed,
		listNulls: list.NullN() > 0, valNulls: values.NullN() > 0}
}

// Votes overwrites counts[j] ((hi−lo) × classes of fs[j]) with the votes of
// the teachers of fs[j] on rows [lo, hi) of the batch. A row whose list is
// not null and holds exactly Dim() values, none null, all within the
// public range of their element (which the encoded path clamps to), is voted
// on in place by the folded teachers; any other row is encoded into scratch
// (at least Dim()·(hi−lo) values) and voted on by the teachers themselves,
// exactly as Prepared.EncodeColumns and Ensemble.VotesColumns would.
func (b *RawBatch) Votes(lo, hi int, counts [][]int32, scratch []float32) {
	n, dim := hi-lo, b.dim
	if n <= 0 {
		return
	}
	f0 := b.fs[0]
	if s, ok := b.span(lo, hi); ok && inRange(b.vals[s:s+n*dim], f0.lo, f0.hi) {
		for j, f := range b.fs {
			f.lin.Votes(b.vals[s:s+n*dim], n, counts[j])
		}
		return
	}
	// Row by row: each run of clean rows in place, the others encoded.
	var bad []int
	for r := lo; r < hi; {
		s, ok := b.clean(r)
		if !ok {
			bad = append(bad, r)
			r++
			continue
		}
		e := r + 1
		for e < hi {
			if s2, ok := b.clean(e); !ok || s2 != s+(e-r)*dim {
				break
			}
			e++
		}
		for j, f := range b.fs {
			k := f.e.classes
			f.lin.Votes(b.vals[s:s+(e-r)*dim], e-r, counts[j][(r-lo)*k:(e-lo)*k])
		}
		r = e
	}
	if len(bad) == 0 {
		return
	}
	u := len(bad)
	for i := 0; i < u; { // each run of consecutive rows in one call
		e := i + 1
		for e < u && bad[e] == bad[e-1]+1 {
			e++
		}
		b.p.EncodeColumns(bad[i], bad[e-1]+1, scratch[i:], u)
		i = e
	}
	for j, f := range b.fs {
		k := f.e.classes
		tmp := make([]int32, u*k)
		f.e.VotesColumns(scratch, u, u, tmp)
		for i, r := range bad {
			copy(counts[j][(r-lo)*k:(r-lo+1)*k], tmp[i*k:(i+1)*k])
		}
	}
}

// span returns where rows [lo, hi) start in b.vals when they hold no null
// and are dim values each, back to back.
func (b *RawBatch) span(lo, hi int) (int, bool) {
	if b.listNulls || b.valNulls {
		return 0, false
	}
	s, _ := b.list.ValueOffsets(lo)
	n, dim := int64(hi-lo), int64(b.dim)
	if s < 0 || s+n*dim > int64(len(b.vals)) {
		return 0, false
	}
	if !b.fixed {
		for r := lo; r < hi; r++ {
			rs, re := b.list.ValueOffsets(r)
			if rs != s+int64(r-lo)*dim || re != rs+dim {
				return 0, false
			}
		}
	}
	return int(s), true
}

// clean returns where row r starts in b.vals when it can be voted on in
// place: not null, dim values, none null, all within the public range
// (finite).
func (b *RawBatch) clean(r int) (int, bool) {
	if b.listNulls && b.list.IsNull(r) {
		return 0, false
	}
	s, e := b.list.ValueOffsets(r)
	if e-s != int64(b.dim) || s < 0 || e > int64(len(b.vals)) {
		return 0, false
	}
	if b.valNulls {
		values := b.list.ListValues()
		if bitutil.CountSetBits(values.NullBitmapBytes(), values.Data().Offset()+int(s), b.dim) != b.dim {
			return 0, false
		}
	}
	if !inRange(b.vals[s:e], b.fs[0].lo, b.fs[0].hi) {
		return 0, false
	}
	return int(s), true
}

// allFinite reports whether no value of v is NaN or ±Inf: no exponent
// field is all ones. Adding 1 to an exponent field of 8 bits carries into
// the sign bit exactly when the field is all ones, so the sign bits of
// (bits & exponent mask) + (1 << 23), or-ed over v, say whether any value is
// not finite. Two values are tested per 64-bit word (the carry stops at
// each value's sign bit), in a loop of plain integer operations.
func allFinite(v []float32) bool {
	const (
		exp32 = 0x7f800000
		one32 = 0x00800000
		exp64 = exp32<<32 | exp32
		one64 = one32<<32 | one32
	)
	var acc32 uint32
	for len(v) > 0 && uintptr(unsafe.Pointer(&v[0]))%8 != 0 {
		acc32 |= math.Float32bits(v[0])&exp32 + one32
		v = v[1:]
	}
	if len(v) >= 2 {
		w := unsafe.Slice((*uint64)(unsafe.Pointer(&v[0])), len(v)/2)
		var a0, a1, a2, a3 uint64
		for len(w) >= 4 {
			a0 |= w[0]&exp64 + one64
			a1 |= w[1]&exp64 + one64
			a2 |= w[2]&exp64 + one64
			a3 |= w[3]&exp64 + one64
			w = w[4:]
		}
		for _, x := range w {
			a0 |= x&exp64 + one64
		}
		a := a0 | a1 | a2 | a3
		acc32 |= uint32(a) | uint32(a>>32)
		v = v[len(v)&^1:]
	}
	for _, x := range v {
		acc32 |= math.Float32bits(x)&exp32 + one32
	}
	return acc32&(1<<31) == 0
}
