package learners

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/pate-tool/pate/learners/kernel"
)

// DefaultNeighbors is k of KNN when LearnerOptions.Neighbors is zero.
const DefaultNeighbors = 10

// KNN is the exact k-nearest-neighbours classifier on the encoded rows
// (Euclidean distance on the public encoding: standardised numbers,
// one-hot categories): a row gets the class most of its K nearest
// training rows hold (ties → lowest class). Fit keeps a copy of the
// training rows; the search is NeighborIndex's (exact: indexed where an
// inverted file prunes, a scan otherwise).
type KNN struct {
	K int
}

// NewKNN returns a KNN with k = opts.Neighbors (default 10).
func NewKNN(opts LearnerOptions) (*KNN, error) {
	k := opts.Neighbors
	if k == 0 {
		k = DefaultNeighbors
	}
	if k < 1 {
		return nil, fmt.Errorf("learners: k nearest neighbours needs k ≥ 1, got %d", k)
	}
	return &KNN{K: k}, nil
}

// Fit stores a copy of the training rows.
func (l *KNN) Fit(x *Matrix, y []int32, classes int) (Model, error) {
	if _, err := checkFit(x, y, classes); err != nil {
		return nil, err
	}
	k := l.K
	if k <= 0 {
		k = DefaultNeighbors
	}
	base := &Matrix{Rows: x.Rows, Cols: x.Cols, Data: append([]float32(nil), x.Data[:x.Rows*x.Cols]...)}
	return &knnModel{classes: classes, k: k, ix: NewNeighborIndex(base), y: append([]int32(nil), y...)}, nil
}

// knnModel is a fitted KNN.
type knnModel struct {
	classes, k int
	ix         *NeighborIndex
	y          []int32
	bufs       sync.Pool // *knnBuf
}

type knnBuf struct {
	idx  []int32
	dist []float32
	cnt  []int32
}

func (m *knnModel) buf(rows int) *knnBuf {
	b, _ := m.bufs.Get().(*knnBuf)
	if b == nil {
		b = &knnBuf{}
	}
	kk := min(m.k, m.ix.base.Rows)
	if cap(b.idx) < rows*kk {
		b.idx = make([]int32, rows*kk)
		b.dist = make([]float32, rows*kk)
	}
	b.idx, b.dist = b.idx[:rows*kk], b.dist[:rows*kk]
	if cap(b.cnt) < m.classes {
		b.cnt = make([]int32, m.classes)
	}
	b.cnt = b.cnt[:m.classes]
	return b
}

// Predict writes each row's majority class among its k nearest training
// rows (ties → lowest class).
func (m *knnModel) Predict(x *Matrix, out []int32) {
	b := m.buf(x.Rows)
	defer m.bufs.Put(b)
	kk := min(m.k, m.ix.base.Rows)
	if m.ix.Search(x, kk, b.idx, b.dist) != nil {
		clear(out[:x.Rows]) // rows of another width: not the model's input
		return
	}
	for i := 0; i < x.Rows; i++ {
		clear(b.cnt)
		for _, j := range b.idx[i*kk : (i+1)*kk] {
			b.cnt[m.y[j]]++
		}
		best := 0
		for c, n := range b.cnt {
			if n > b.cnt[best] {
				best = c
			}
		}
		out[i] = int32(best)
	}
}

// PredictProba writes the share of each class among the k nearest rows.
func (m *knnModel) PredictProba(x *Matrix, out []float32) {
	b := m.buf(x.Rows)
	defer m.bufs.Put(b)
	kk := min(m.k, m.ix.base.Rows)
	c := m.classes
	if m.ix.Search(x, kk, b.idx, b.dist) != nil {
		clear(out[:x.Rows*c])
		return
	}
	for i := 0; i < x.Rows; i++ {
		p := out[i*c : (i+1)*c]
		clear(p)
		for _, j := range b.idx[i*kk : (i+1)*kk] {
			p[m.y[j]] += 1 / float32(kk)
		}
	}
}

// NeighborIndex is an exact nearest-neighbour search over the rows of a
// matrix by squared Euclidean distance ‖q‖² + ‖b‖² − 2 q·b. Few rows are
// scanned, a block of queries against a block of rows at a time so that
// both stay in cache; many rows (at least ivfMinRows) are indexed by an
// inverted file of k-means lists (ivf) that computes only the distances
// that can matter, when a pilot search shows that it prunes (it does not
// on rows of high intrinsic dimension, which stay scanned). Both give the
// same neighbours in the same order. It is read only after
// NewNeighborIndex and safe for concurrent use.
type NeighborIndex struct {
	base  *Matrix
	norms []float32
	inv   *ivf // nil: scan every row
	// With sqDistsAVX, a scanned index's rows in blocks of 8,
	// feature-major, and their norms padded (featureMajor).
	blocks, blockNorms []float32
}

// NewNeighborIndex indexes the rows of base (kept by reference: the caller
// must not modify them afterwards).
func NewNeighborIndex(base *Matrix) *NeighborIndex {
	ix := scanIndex(base)
	ix.inv = newIVF(base, ix.norms, ivfMinRows)
	ix.keepBlocks()
	return ix
}

// keepBlocks lays a scanned index's rows out for the AVX kernel.
func (ix *NeighborIndex) keepBlocks() {
	if ix.inv == nil && sqDistsAVX && ix.base.Cols > 0 {
		ix.blocks, ix.blockNorms = featureMajor(ix.base.Data[:ix.base.Rows*ix.base.Cols], ix.norms, ix.base.Cols)
	}
}

// neighborIndexFor is NewNeighborIndex for a search of queries rows: many
// queries for few rows (ivfManyQueries a row) are worth an index of fewer
// rows.
func neighborIndexFor(base *Matrix, queries int) *NeighborIndex {
	if queries < ivfManyQueries*base.Rows {
		return NewNeighborIndex(base)
	}
	ix := scanIndex(base)
	ix.inv = newIVF(base, ix.norms, ivfMinRowsMany)
	ix.keepBlocks()
	return ix
}

// Indexed reports whether the search uses the inverted file rather than a
// scan of every row.
func (ix *NeighborIndex) Indexed() bool { return ix.inv != nil }

// Rows returns the number of indexed rows.
func (ix *NeighborIndex) Rows() int { return ix.base.Rows }

// Blocks of the search: queries × indexed rows per tile.
const (
	knnQueryBlock = 32
	knnBaseBlock  = 256
)

// Search writes, for each row i of q, the indices of its k nearest indexed
// rows into idx[i·k : (i+1)·k] and their squared distances into dist,
// nearest first (equal distances: lower index first). k must be at most
// Rows(); q must have the indexed rows' width. Large query sets are split
// across GOMAXPROCS goroutines.
func (ix *NeighborIndex) Search(q *Matrix, k int, idx []int32, dist []float32) error {
	if k < 1 || k > ix.base.Rows || q.Cols != ix.base.Cols {
		return fmt.Errorf("learners: nearest %d of %d rows of width %d for queries of width %d", k, ix.base.Rows, ix.base.Cols, q.Cols)
	}
	if len(idx) < q.Rows*k || len(dist) < q.Rows*k {
		return fmt.Errorf("learners: room for %d and %d neighbours, want %d", len(idx), len(dist), q.Rows*k)
	}
	if ix.inv != nil && q.Rows >= dedupMinRows {
		if u, of := distinctRows(q); u != nil {
			// Tabular batches repeat rows (categories, small integers): a
			// row's neighbours are a function of its bits, so each distinct
			// row is searched once.
			ui, ud := make([]int32, u.Rows*k), make([]float32, u.Rows*k)
			ix.searchAll(u, k, ui, ud)
			for i, j := range of {
				copy(idx[i*k:(i+1)*k], ui[int(j)*k:(int(j)+1)*k])
				copy(dist[i*k:(i+1)*k], ud[int(j)*k:(int(j)+1)*k])
			}
			return nil
		}
	}
	ix.searchAll(q, k, idx, dist)
	return nil
}

// dedupMinRows is the fewest queries whose duplicates Search looks for.
const dedupMinRows = 256

// distinctRows returns the distinct rows of q (by their bits), in order of
// first appearance, and for each row of q the index of its copy among
// them; nil when the rows are all distinct or nearly so (the copy would
// cost more than it saves).
func distinctRows(q *Matrix) (*Matrix, []int32) {
	seen := make(map[string]int32, q.Rows)
	of := make([]int32, q.Rows)
	u := NewMatrix(0, q.Cols)
	for i := 0; i < q.Rows; i++ {
		r := q.Row(i)
		key := rowBytes(r)
		j, ok := seen[string(key)]
		if !ok {
			j = int32(u.Rows)
			seen[string(key)] = j
			u.Data = append(u.Data, r...)
			u.Rows++
		}
		of[i] = j
	}
	if u.Rows > q.Rows-q.Rows/8 {
		return nil, nil
	}
	return u, of
}

// searchAll is Search without its checks.
func (ix *NeighborIndex) searchAll(q *Matrix, k int, idx []int32, dist []float32) {
	n := q.Rows
	workers := runtime.GOMAXPROCS(0)
	work := n * ix.base.Rows
	search := ix.search
	if ix.inv != nil {
		search = ix.searchIndexed
		work /= 8 // about what the index computes, at least
	}
	if workers < 2 || n < 2*knnQueryBlock || work < 1<<20 {
		search(q, 0, n, k, idx, dist)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			search(q, lo, hi, k, idx, dist)
		}()
	}
	wg.Wait()
}

// searchIndexed answers queries [lo, hi) of q through the inverted file;
// a query whose ‖q‖² is not finite or too large for its bounds is scanned.
func (ix *NeighborIndex) searchIndexed(q *Matrix, lo, hi, k int, idx []int32, dist []float32) {
	s := newIVFScratch(ix.inv, k)
	for i := lo; i < hi; i++ {
		r := q.Row(i)
		qn := kernel.Dot(r, r)
		if !(qn <= ivfMaxNorm) {
			ix.search(q, i, i+1, k, idx, dist)
			continue
		}
		ix.inv.search(r, qn, k, idx[i*k:(i+1)*k], dist[i*k:(i+1)*k], s)
	}
}

// search answers queries [lo, hi) of q.
func (ix *NeighborIndex) search(q *Matrix, lo, hi, k int, idx []int32, dist []float32) {
	inf := float32(math.Inf(1))
	for i := lo * k; i < hi*k; i++ {
		idx[i], dist[i] = -1, inf
	}
	qn := make([]float32, knnQueryBlock)
	bd, tail := make([]float32, knnBaseBlock), make([]float32, 8)
	nb, dim := ix.base.Rows, ix.base.Cols
	for q0 := lo; q0 < hi; q0 += knnQueryBlock {
		q1 := min(hi, q0+knnQueryBlock)
		for i := q0; i < q1; i++ {
			r := q.Row(i)
			qn[i-q0] = kernel.Dot(r, r)
		}
		for b0 := 0; b0 < nb; b0 += knnBaseBlock {
			b1 := min(nb, b0+knnBaseBlock)
			for i := q0; i < q1; i++ {
				qr := q.Row(i)
				ti, td := idx[i*k:(i+1)*k], dist[i*k:(i+1)*k]
				worst := td[k-1]
				// The block's distances (clamped at 0: rounding of a
				// near-duplicate), then the k nearest.
				bd := bd[:b1-b0]
				if ix.blocks != nil {
					// Whole blocks of 8 (b0 is a multiple of 8; the
					// padding's lanes past the last row are not read).
					for c := b0; c < b1; c += 8 {
						if b1-c >= 8 {
							sqDists8AVX(&qr[0], dim, qn[i-q0], &ix.blocks[c*dim], &ix.blockNorms[c], &bd[c-b0], 0)
						} else {
							sqDists8AVX(&qr[0], dim, qn[i-q0], &ix.blocks[c*dim], &ix.blockNorms[c], &tail[0], 0)
							copy(bd[c-b0:], tail[:b1-c])
						}
					}
				} else {
					sqDists(qr, qn[i-q0], ix.base.Data[b0*dim:b1*dim], ix.norms[b0:b1], bd)
				}
				for j := b0; j < b1; j++ {
					d := bd[j-b0]
					if !(d <= math.MaxFloat32) {
						d = math.MaxFloat32 // NaN or overflow: farthest, but a neighbour still
					}
					if d >= worst { // ties keep the lower index, met first
						continue
					}
					p := k - 1
					for p > 0 && td[p-1] > d {
						td[p], ti[p] = td[p-1], ti[p-1]
						p--
					}
					td[p], ti[p] = d, int32(j)
					worst = td[k-1]
				}
			}
		}
	}
}

// NearestK is NewNeighborIndex(base).Search(q, k, idx, dist).
func NearestK(base, q *Matrix, k int, idx []int32, dist []float32) error {
	return NewNeighborIndex(base).Search(q, k, idx, dist)
}

// encode stores a fitted KNN: u32 classes, u32 dim, u32 k, u32 rows,
// f32 x[rows·dim], i32 y[rows].
func (m *knnModel) encode(w *wbuf) {
	b := m.ix.base
	w.u32(uint32(m.classes))
	w.u32(uint32(b.Cols))
	w.u32(uint32(m.k))
	w.u32(uint32(b.Rows))
	w.f32s(b.Data[:b.Rows*b.Cols])
	for _, c := range m.y {
		w.u32(uint32(c))
	}
}

// knn restores a stored KNN.
func (r *rbuf) knn(classes, dim int) *knnModel {
	r.shape(classes, dim)
	k, rows := int(r.u32()), int(r.u32())
	if r.err != nil {
		return nil
	}
	// A row takes 4·(dim+1) bytes: a count beyond what is left is a lie.
	if rows < 1 || rows > len(r.b)/(4*(dim+1)) || k < 1 {
		r.fail("%d rows, k %d", rows, k)
		return nil
	}
	x := r.f32s(rows * dim)
	y := make([]int32, rows)
	for i := range y {
		y[i] = int32(r.u32())
		if r.err == nil && (y[i] < 0 || int(y[i]) >= classes) {
			r.fail("row %d has class %d of %d", i, y[i], classes)
		}
	}
	if r.err != nil {
		return nil
	}
	return &knnModel{classes: classes, k: k, ix: NewNeighborIndex(&Matrix{Rows: rows, Cols: dim, Data: x}), y: y}
}
