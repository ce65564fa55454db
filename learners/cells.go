package learners

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"sync"
	"unsafe"
)

// Cells: k-means centres fitted on public rows, and the model that labels
// a row by the class histograms of its nearest centres (the noisy cell
// histogram of package label). Everything here sees the centres and the
// histograms only; which rows are public is the caller's concern.

// Work bounds of FitCellCentres.
const (
	// cellRowsPerCentre and cellMinRows bound the rows the centres are
	// fitted on: every s-th row, at most max(cellRowsPerCentre·m,
	// cellMinRows) of them.
	cellRowsPerCentre = 8
	cellMinRows       = 10_000
	// cellSeedRowsPerCentre bounds the rows the k-means++ seeding draws
	// from (its cost is rows·m·dim).
	cellSeedRowsPerCentre = 4
	// cellLloydWork bounds the distance computations (rows·centres·dim)
	// of the Lloyd iterations together.
	cellLloydWork = 4e9
)

// FitCellCentres returns at most m centres for the rows of pub: k-means++
// seeding (Arthur & Vassilvitskii 2007) on at most cellSeedRowsPerCentre·m
// of the rows, from seed, then Lloyd iterations on at most
// max(cellRowsPerCentre·m, cellMinRows) rows (every s-th: a sorted input
// does not bias them), at most iters of them and fewer when their work
// would pass cellLloydWork; it stops early when no row changes centre.
// When pub has fewer than m distinct rows it returns one centre per
// distinct row. The result depends on the input and the seed only.
func FitCellCentres(pub *Matrix, m, iters int, seed uint64) (*Matrix, error) {
	switch {
	case m < 1:
		return nil, fmt.Errorf("learners: %d cell centres", m)
	case pub == nil || pub.Rows == 0 || pub.Cols == 0:
		return nil, errors.New("learners: cell centres need public rows")
	}
	for _, v := range pub.Data[:pub.Rows*pub.Cols] {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, errors.New("learners: cell centres: a public row has a value that is not finite")
		}
	}
	x := thinRows(pub, max(cellRowsPerCentre*m, cellMinRows))
	rng := rand.New(rand.NewPCG(seed, 0x63656c6c73)) // "cells"
	c := seedCentres(thinRows(x, cellSeedRowsPerCentre*m), m, rng)
	work := float64(x.Rows) * float64(c.Rows) * float64(x.Cols)
	iters = min(iters, int(cellLloydWork/max(work, 1)))
	assign := make([]int32, x.Rows)
	for i := range assign {
		assign[i] = -1
	}
	idx, dist := make([]int32, x.Rows), make([]float32, x.Rows)
	for it := 0; it < iters; it++ {
		if err := neighborIndexFor(c, x.Rows).Search(x, 1, idx, dist); err != nil {
			return nil, err
		}
		changed := false
		for i, j := range idx {
			if assign[i] != j {
				assign[i], changed = j, true
			}
		}
		if !changed {
			break
		}
		lloydStep(c, x, assign) // an empty cell keeps its centre
	}
	return c, nil
}

// thinRows returns every s-th row of x, s chosen so that at most about n
// are kept; x itself when it has no more than n.
func thinRows(x *Matrix, n int) *Matrix {
	if x.Rows <= n {
		return x
	}
	step := (x.Rows + n - 1) / n
	out := NewMatrix(0, x.Cols)
	out.Data = make([]float32, 0, (x.Rows/step+1)*x.Cols)
	for i := 0; i < x.Rows; i += step {
		out.Data = append(out.Data, x.Row(i)...)
		out.Rows++
	}
	return out
}

// seedCentres draws at most m centres from the rows of x by k-means++: the
// first uniformly, each next one with probability proportional to its
// squared distance to the nearest centre drawn. It stops early when every
// row is a centre's duplicate (no distinct row is left).
func seedCentres(x *Matrix, m int, rng *rand.Rand) *Matrix {
	c := NewMatrix(0, x.Cols)
	c.Data = make([]float32, 0, min(m, x.Rows)*x.Cols)
	d2 := make([]float64, x.Rows)
	for i := range d2 {
		d2[i] = math.Inf(1)
	}
	next := rng.IntN(x.Rows)
	for c.Rows < m {
		row := x.Row(next)
		c.Data = append(c.Data, row...)
		c.Rows++
		var total float64
		for i := range d2 {
			var d float64
			for k, v := range x.Row(i) {
				e := float64(v) - float64(row[k])
				d += e * e
			}
			d2[i] = math.Min(d2[i], d)
			total += d2[i]
		}
		if !(total > 0) {
			break
		}
		u := rng.Float64() * total
		next = -1
		for i, d := range d2 {
			if d > 0 {
				next = i // the last row that can be drawn, should rounding leave u
				if u -= d; u < 0 {
					break
				}
			}
		}
	}
	return c
}

// AssignCells writes into out[i] the index of the centre nearest to row i
// of x (squared Euclidean distance; equal distances: the lower index).
func AssignCells(centres, x *Matrix, out []int32) error {
	if centres == nil || centres.Rows == 0 {
		return errors.New("learners: no cell centres")
	}
	if len(out) < x.Rows {
		return fmt.Errorf("learners: room for %d cells, want %d", len(out), x.Rows)
	}
	if x.Rows == 0 {
		return nil
	}
	return neighborIndexFor(centres, x.Rows).Search(x, 1, out[:x.Rows], make([]float32, x.Rows))
}

// cellModel labels a row by the argmax over classes of the summed
// histograms of its nearest centres.
type cellModel struct {
	ix      *NeighborIndex
	table   []int64 // centres × classes
	classes int
	nearest int
}

// NewCellModel returns the Model that labels a row by the argmax over
// classes of the sum, over its nearest nearest centres, of
// table[cell·classes + class] (equal sums: the lower class). nearest is
// clamped to [1, centres.Rows]. The model keeps copies of centres and
// table.
func NewCellModel(centres *Matrix, table []int64, classes, nearest int) (Model, error) {
	switch {
	case centres == nil || centres.Rows == 0 || centres.Cols == 0:
		return nil, errors.New("learners: a cell model needs centres")
	case classes < 1:
		return nil, fmt.Errorf("learners: a cell model of %d classes", classes)
	case len(table) != centres.Rows*classes:
		return nil, fmt.Errorf("learners: a cell table of %d entries for %d centres and %d classes", len(table), centres.Rows, classes)
	}
	c := &Matrix{Rows: centres.Rows, Cols: centres.Cols, Data: append([]float32(nil), centres.Data[:centres.Rows*centres.Cols]...)}
	return &cellModel{ix: NewNeighborIndex(c), table: append([]int64(nil), table...), classes: classes,
		nearest: min(max(nearest, 1), c.Rows)}, nil
}

// Predict implements Model; safe for concurrent use (its buffers are the
// call's).
func (m *cellModel) Predict(x *Matrix, out []int32) {
	if x.Rows == 0 {
		return
	}
	if x.Cols != m.ix.base.Cols {
		clear(out[:x.Rows]) // rows of another width: not the model's input
		return
	}
	argmaxInt64(m.scores(x), m.classes, out[:x.Rows])
}

// SmoothCells returns the model that labels a row by the argmax of the
// summed class scores, over its k nearest rows of pub (at most maxRows of
// them, every s-th), of the scores m gives those rows (the summed noisy
// histograms of their nearest cells): m's decision smoothed over the
// public rows. m must be a NewCellModel. It reads nothing but m and pub:
// when pub is public and m private, so is the result.
func SmoothCells(m Model, pub *Matrix, k, maxRows int) (Model, error) {
	cm, ok := m.(*cellModel)
	switch {
	case !ok:
		return nil, fmt.Errorf("learners: smoothing a %T, not a cell model", m)
	case pub == nil || pub.Rows == 0:
		return nil, errors.New("learners: smoothing the cells needs public rows")
	case pub.Cols != cm.ix.base.Cols:
		return nil, fmt.Errorf("learners: smoothing cells of width %d over rows of width %d", cm.ix.base.Cols, pub.Cols)
	}
	base := thinRows(pub, maxRows)
	base = &Matrix{Rows: base.Rows, Cols: base.Cols, Data: append([]float32(nil), base.Data[:base.Rows*base.Cols]...)}
	return &smoothModel{ix: NewNeighborIndex(base), scores: cm.scores(base), classes: cm.classes, k: min(max(k, 1), base.Rows)}, nil
}

// scores returns, for each row of x, the summed histograms of its nearest
// cells (x.Rows × classes).
func (m *cellModel) scores(x *Matrix) []int64 {
	out := make([]int64, x.Rows*m.classes)
	k := m.nearest
	idx, dist := make([]int32, x.Rows*k), make([]float32, x.Rows*k)
	if m.ix.Search(x, k, idx, dist) != nil {
		return out // rows of another width: no scores
	}
	sumNeighbours(idx, k, m.table, m.classes, out)
	return out
}

// sumNeighbours adds into row i of out (classes wide) the rows of table
// named by the k neighbours idx[i·k : (i+1)·k] of row i.
func sumNeighbours(idx []int32, k int, table []int64, classes int, out []int64) {
	for i := 0; i < len(out)/classes; i++ {
		s := out[i*classes : (i+1)*classes]
		for _, j := range idx[i*k : (i+1)*k] {
			for c, v := range table[int(j)*classes : (int(j)+1)*classes] {
				s[c] += v
			}
		}
	}
}

// argmaxInt64 writes into out[i] the index of the largest of the classes
// scores of row i (equal scores: the lower index).
func argmaxInt64(scores []int64, classes int, out []int32) {
	for i := range out {
		s := scores[i*classes : (i+1)*classes]
		best := 0
		for c, v := range s {
			if v > s[best] {
				best = c
			}
		}
		out[i] = int32(best)
	}
}

// smoothModel labels a row by the summed scores of its k nearest labelled
// public rows.
type smoothModel struct {
	ix      *NeighborIndex
	scores  []int64 // rows × classes
	classes int
	k       int
	seen    predCache
}

// Predict implements Model; safe for concurrent use. A row's label is a
// function of its bits, so a row met before, in this batch or an earlier
// one, is not searched again (tabular public files repeat rows: small
// integers, categories).
func (m *smoothModel) Predict(x *Matrix, out []int32) {
	if x.Rows == 0 {
		return
	}
	if x.Cols != m.ix.base.Cols {
		clear(out[:x.Rows]) // rows of another width: not the model's input
		return
	}
	miss := m.seen.lookup(x, out[:x.Rows])
	if len(miss) == 0 {
		return
	}
	q, pred := x, out[:x.Rows]
	if len(miss) < x.Rows {
		q, pred = gatherRows(x, miss), make([]int32, len(miss))
	}
	m.predict(q, pred)
	if len(miss) < x.Rows {
		for j, i := range miss {
			out[i] = pred[j]
		}
	}
	m.seen.store(q, pred)
}

// predict is Predict without the cache.
func (m *smoothModel) predict(x *Matrix, out []int32) {
	idx, dist := make([]int32, x.Rows*m.k), make([]float32, x.Rows*m.k)
	if m.ix.Search(x, m.k, idx, dist) != nil {
		clear(out[:x.Rows])
		return
	}
	sum := make([]int64, x.Rows*m.classes)
	sumNeighbours(idx, m.k, m.scores, m.classes, sum)
	argmaxInt64(sum, m.classes, out[:x.Rows])
}

// gatherRows returns the rows of x named by rows, in that order.
func gatherRows(x *Matrix, rows []int32) *Matrix {
	g := NewMatrix(len(rows), x.Cols)
	for j, i := range rows {
		copy(g.Row(j), x.Row(int(i)))
	}
	return g
}

// predCacheBytes bounds the memory of a predCache: its rows and, roughly,
// the map's own bytes of each entry (predCacheEntry).
const (
	predCacheBytes = 32 << 20
	predCacheEntry = 24
)

// predCache remembers the class a deterministic model gave a row, keyed by
// the row's bits, across calls; it takes rows until it holds
// predCacheBytes, then only answers. The rows are kept in one slice and
// found through a map from a hash of their bits: nothing in it holds a
// pointer for the collector to scan. A row whose hash is another's is not
// remembered. The zero value is empty and ready; it is safe for concurrent
// use.
type predCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	slot  map[uint64]int32 // hash → the row's index in rows
	rows  []float32        // the rows remembered, dim each
	class []int32
	used  int
}

// rowBytes is the bytes of a row, as a key (not a copy).
func rowBytes(r []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(r))), 4*len(r))
}

// find returns the index of row r among the rows remembered, or -1.
func (c *predCache) find(r []float32, h uint64) int32 {
	j, ok := c.slot[h]
	if !ok {
		return -1
	}
	dim := len(r)
	if string(rowBytes(c.rows[int(j)*dim:(int(j)+1)*dim])) != string(rowBytes(r)) {
		return -1
	}
	return j
}

// lookup writes into out the class of each row of x it holds and returns
// the rows it does not hold, ascending.
func (c *predCache) lookup(x *Matrix, out []int32) []int32 {
	miss := make([]int32, 0, x.Rows)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.slot) == 0 {
		for i := 0; i < x.Rows; i++ {
			miss = append(miss, int32(i))
		}
		return miss
	}
	for i := 0; i < x.Rows; i++ {
		r := x.Row(i)
		if j := c.find(r, maphash.Bytes(c.seed, rowBytes(r))); j >= 0 {
			out[i] = c.class[j]
		} else {
			miss = append(miss, int32(i))
		}
	}
	return miss
}

// store remembers class pred[i] for row i of x, while there is room.
func (c *predCache) store(x *Matrix, pred []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slot == nil {
		c.seed = maphash.MakeSeed()
		c.slot = make(map[uint64]int32)
	}
	for i := 0; i < x.Rows && c.used < predCacheBytes; i++ {
		r := x.Row(i)
		h := maphash.Bytes(c.seed, rowBytes(r))
		if _, ok := c.slot[h]; ok {
			continue // this row, or another of the same hash
		}
		c.slot[h] = int32(len(c.class))
		c.rows = append(c.rows, r...)
		c.class = append(c.class, pred[i])
		c.used += 4*len(r) + predCacheEntry
	}
}

// encode stores a smoothed cell model: u32 classes, u32 dim, u32 k, u32
// rows, f32 x[rows·dim], i64 scores[rows·classes].
func (m *smoothModel) encode(w *wbuf) { w.pointsAndScores(m.classes, m.k, m.ix.base, m.scores) }

// pointsAndScores writes the common layout of the cell kinds (see
// rbuf.pointsAndScores).
func (w *wbuf) pointsAndScores(classes, k int, x *Matrix, scores []int64) {
	w.u32(uint32(classes))
	w.u32(uint32(x.Cols))
	w.u32(uint32(k))
	w.u32(uint32(x.Rows))
	w.f32s(x.Data[:x.Rows*x.Cols])
	for _, v := range scores {
		w.u64(uint64(v))
	}
}

// smooth restores a stored smoothed cell model.
func (r *rbuf) smooth(classes, dim int) *smoothModel {
	x, scores, k, rows := r.pointsAndScores(classes, dim)
	if r.err != nil {
		return nil
	}
	return &smoothModel{ix: NewNeighborIndex(&Matrix{Rows: rows, Cols: dim, Data: x}), scores: scores, classes: classes, k: k}
}

// pointsAndScores reads the common layout of the cell kinds: u32 k, u32
// rows, f32 x[rows·dim] (finite), i64 scores[rows·classes]; k within
// [1, rows].
func (r *rbuf) pointsAndScores(classes, dim int) (x []float32, scores []int64, k, rows int) {
	r.shape(classes, dim)
	k, rows = int(r.u32()), int(r.u32())
	if r.err != nil {
		return nil, nil, 0, 0
	}
	// A row takes 4·dim + 8·classes bytes: a count beyond what is left is
	// a lie.
	if rows < 1 || rows > len(r.b)/(4*dim+8*classes) || k < 1 || k > rows {
		r.fail("%d rows, k %d", rows, k)
		return nil, nil, 0, 0
	}
	x = r.f32s(rows * dim)
	for _, v := range x {
		if r.err == nil && (math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)) {
			r.fail("a point coordinate is not finite")
		}
	}
	scores = make([]int64, rows*classes)
	for i := range scores {
		scores[i] = int64(r.u64())
	}
	return x, scores, k, rows
}

// encode stores a cell model: u32 classes, u32 dim, u32 nearest, u32
// centres, f32 centre[centres·dim], i64 table[centres·classes].
func (m *cellModel) encode(w *wbuf) { w.pointsAndScores(m.classes, m.nearest, m.ix.base, m.table) }

// cells restores a stored cell model.
func (r *rbuf) cells(classes, dim int) *cellModel {
	x, table, nearest, rows := r.pointsAndScores(classes, dim)
	if r.err != nil {
		return nil
	}
	return &cellModel{ix: NewNeighborIndex(&Matrix{Rows: rows, Cols: dim, Data: x}), table: table, classes: classes, nearest: nearest}
}
