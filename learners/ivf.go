package learners

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"

	"github.com/pate-tool/pate/learners/kernel"
)

// ivf is the index behind a NeighborIndex of many rows: an inverted file of
// k-means lists (the rows grouped by their nearest of about 2√rows centres),
// each list's rows sorted by their distance to its centre. A query visits
// its nearest list first, then the others; of each it computes only the
// rows whose distance to the list's centre lies within the current k-th
// distance of the query's own (the triangle inequality: ‖q − x‖ ≥
// |‖q − c‖ − ‖x − c‖|), and skips a list whose ball is that far. The
// distances it does compute are those of the brute-force search, bit for
// bit (the same float32 formula on the same values), and the bounds leave a
// rounding margin, so the search is exact: the same neighbours, in the same
// order, as the scan of every row.
type ivf struct {
	dim     int
	lists   int
	centres []float64 // lists × dim
	radius  []float64 // the largest distance of a list's row to its centre
	maxNorm []float64 // the largest ‖x‖² of a list's rows
	maxRoot []float64 // its square root
	start   []int32   // list l holds rows start[l] ≤ j < start[l+1]
	rows    []float32 // the rows in list order, dim wide
	norms   []float32 // their ‖x‖², as the brute force computes them
	dc      []float64 // their distance to their list's centre, ascending in a list
	id      []int32   // their index in the indexed matrix
	// With sqDistsAVX, the rows again in blocks of 8 (in list order,
	// blocks across lists' ends, the last padded with zeros), each block
	// feature-major, for sqDists8AVX, and their norms padded to match.
	blocks     []float32
	blockNorms []float32
	// And the centres so, as float32 (the values they were fitted as),
	// with the root of their largest ‖c‖²: a query's distance to every
	// centre is computed as a row's, with its rounding bound.
	centreBlocks []float32
	centreNorms  []float32
	centreRoot   float64
	// near[l·ivfNear : (l+1)·ivfNear] are the lists whose centres are
	// nearest to list l's (l itself first): a query visits these first,
	// from its nearest list, so that its k-th distance shrinks early.
	near  []int32
	nearK int
	// normMax is the largest of maxNorm: the rounding slack of every list
	// is within that of a row of this norm, so one bound per query decides
	// which lists cannot hold a neighbour before any list's own is worked
	// out.
	normMax float64
}

// Bounds of the inverted file.
const (
	// ivfMinRows is the fewest rows indexed by an inverted file; fewer are
	// scanned. A search of many queries (ivfManyQueries a row, at least:
	// the cells' k-means, which searches its centres in every iteration)
	// indexes from ivfMinRowsMany rows: its build, a small k-means and a
	// pilot, is then paid for.
	ivfMinRows     = 2048
	ivfMinRowsMany = 512
	ivfManyQueries = 8
	// ivfMaxNorm bounds the squared norms of the rows and queries the
	// inverted file answers (others are scanned): distances stay far from
	// float32's overflow, where the scan clamps them and ties them.
	ivfMaxNorm = 1e15
	// ivfListsPerRoot sets the lists: ivfListsPerRoot·√rows (on letter's
	// rows, 1·√ computed 1,383 distances a 10-NN query of 10,000 rows,
	// 2·√ 912, 3·√ 684 but at a cost of 300 centres a query).
	ivfListsPerRoot = 2
	// ivfSampleRows is the rows a centre the k-means of the lists is
	// fitted on; ivfLloyd its iterations.
	ivfSampleRows = 16
	ivfLloyd      = 6
	// ivfPilotQueries is the rows searched, as queries, when an index is
	// built, to see whether it prunes: when they compute more than
	// ivfPilotShare of the distances a scan would, the index is dropped.
	ivfPilotQueries = 48
	ivfPilotK       = 10
	ivfPilotShare   = 0.6
	// ivfNear is how many lists near each list are visited first.
	ivfNear = 24
)

// newIVF indexes the rows of base, or returns nil when they are too few
// (below minRows),
// not all finite and bounded, or when the index would not prune (a pilot
// search of some of the rows computes most distances: high intrinsic
// dimension). norms are the rows' ‖x‖² as NewNeighborIndex computed them.
// The result depends on base only.
func newIVF(base *Matrix, norms []float32, minRows int) *ivf {
	ix := buildIVF(base, norms, minRows)
	if ix == nil || !ix.prunes(base) {
		return nil
	}
	return ix
}

// buildIVF is newIVF without the pilot: the index whether it prunes or not.
func buildIVF(base *Matrix, norms []float32, minRows int) *ivf {
	n, dim := base.Rows, base.Cols
	if n < minRows || dim == 0 {
		return nil
	}
	for _, v := range norms {
		if !(v <= ivfMaxNorm) {
			return nil // NaN, infinite or huge
		}
	}
	lists := int(math.Round(ivfListsPerRoot * math.Sqrt(float64(n))))
	sample := thinRows(base, ivfSampleRows*lists)
	rng := rand.New(rand.NewPCG(uint64(n), 0x697666)) // "ivf": a fixed seed, the index is a function of base
	c := seedCentres(sample, lists, rng)
	assign := make([]int32, sample.Rows)
	dist := make([]float32, sample.Rows)
	for it := 0; it < ivfLloyd; it++ {
		scanIndex(c).Search(sample, 1, assign, dist)
		lloydStep(c, sample, assign)
	}
	lists = c.Rows
	cells := make([]int32, n)
	if err := scanIndex(c).Search(base, 1, cells, make([]float32, n)); err != nil {
		return nil
	}
	ix := &ivf{dim: dim, lists: lists, centres: make([]float64, lists*dim),
		radius: make([]float64, lists), maxNorm: make([]float64, lists), maxRoot: make([]float64, lists), start: make([]int32, lists+1),
		rows: make([]float32, n*dim), norms: make([]float32, n), dc: make([]float64, n), id: make([]int32, n)}
	for i, v := range c.Data[:lists*dim] {
		ix.centres[i] = float64(v)
	}
	for _, l := range cells {
		ix.start[l+1]++
	}
	for l := 0; l < lists; l++ {
		ix.start[l+1] += ix.start[l]
	}
	next := append([]int32(nil), ix.start[:lists]...)
	for i, l := range cells {
		j := next[l]
		next[l]++
		ix.id[j] = int32(i)
		ix.dc[j] = dist64(base.Row(i), ix.centres[int(l)*dim:(int(l)+1)*dim])
	}
	for l := 0; l < lists; l++ {
		lo, hi := int(ix.start[l]), int(ix.start[l+1])
		sort.Sort(byCentreDist{ix.dc[lo:hi], ix.id[lo:hi]})
		for j := lo; j < hi; j++ {
			i := int(ix.id[j])
			copy(ix.rows[j*dim:(j+1)*dim], base.Row(i))
			ix.norms[j] = norms[i]
			ix.radius[l] = math.Max(ix.radius[l], ix.dc[j])
			ix.maxNorm[l] = math.Max(ix.maxNorm[l], float64(norms[i]))
		}
		ix.normMax = math.Max(ix.normMax, ix.maxNorm[l])
		ix.maxRoot[l] = math.Sqrt(ix.maxNorm[l])
	}
	if sqDistsAVX {
		ix.blocks, ix.blockNorms = featureMajor(ix.rows, ix.norms, dim)
		cn := scanIndex(c).norms
		ix.centreBlocks, ix.centreNorms = featureMajor(c.Data[:lists*dim], cn, dim)
		for _, v := range cn {
			ix.centreRoot = math.Max(ix.centreRoot, math.Sqrt(float64(v)))
		}
	}
	ix.nearK = min(ivfNear, lists)
	ix.near = make([]int32, lists*ix.nearK)
	if err := scanIndex(c).Search(c, ix.nearK, ix.near, make([]float32, len(ix.near))); err != nil {
		return nil
	}
	return ix
}

// featureMajor returns the rows (dim wide) in blocks of 8, each block
// feature-major (feature f of the block's row l at 8f + l), and the norms
// padded to a whole block (padding: zeros).
func featureMajor(rows, norms []float32, dim int) ([]float32, []float32) {
	n := len(norms)
	nb := (n + 7) / 8
	blocks, padded := make([]float32, nb*8*dim), make([]float32, nb*8)
	copy(padded, norms)
	for i := 0; i < n; i++ {
		b, l := i/8, i%8
		for f, v := range rows[i*dim : (i+1)*dim] {
			blocks[(b*dim+f)*8+l] = v
		}
	}
	return blocks, padded
}

// scanIndex is a NeighborIndex that scans every row, whatever their number.
func scanIndex(base *Matrix) *NeighborIndex {
	ix := &NeighborIndex{base: base, norms: make([]float32, base.Rows)}
	for i := range ix.norms {
		r := base.Row(i)
		ix.norms[i] = kernel.Dot(r, r)
	}
	return ix
}

// lloydStep moves each centre of c to the mean of the rows of x assigned
// to it (a centre with no row stays).
func lloydStep(c, x *Matrix, assign []int32) {
	sums := make([]float64, c.Rows*c.Cols)
	counts := make([]int, c.Rows)
	for i, j := range assign {
		counts[j]++
		s := sums[int(j)*c.Cols : (int(j)+1)*c.Cols]
		for k, v := range x.Row(i) {
			s[k] += float64(v)
		}
	}
	for j, n := range counts {
		if n == 0 {
			continue
		}
		row, s := c.Row(j), sums[j*c.Cols:(j+1)*c.Cols]
		for k := range row {
			row[k] = float32(s[k] / float64(n))
		}
	}
}

// prunes searches every s-th of ivfPilotQueries rows of base and reports
// whether they computed at most ivfPilotShare of the distances.
func (ix *ivf) prunes(base *Matrix) bool {
	k := min(ivfPilotK, base.Rows)
	s := newIVFScratch(ix, k)
	step := max(base.Rows/ivfPilotQueries, 1)
	computed, queries := 0, 0
	for i := 0; i < base.Rows; i += step {
		q := base.Row(i)
		computed += ix.search(q, kernel.Dot(q, q), k, s.idx, s.dist, s)
		queries++
	}
	return float64(computed) <= ivfPilotShare*float64(queries)*float64(base.Rows)
}

// byCentreDist sorts a list's rows by their distance to its centre (equal:
// by index).
type byCentreDist struct {
	d  []float64
	id []int32
}

func (s byCentreDist) Len() int { return len(s.d) }
func (s byCentreDist) Less(a, b int) bool {
	return s.d[a] < s.d[b] || s.d[a] == s.d[b] && s.id[a] < s.id[b]
}
func (s byCentreDist) Swap(a, b int) {
	s.d[a], s.d[b] = s.d[b], s.d[a]
	s.id[a], s.id[b] = s.id[b], s.id[a]
}

// dist64 is ‖x − c‖ in float64.
func dist64(x []float32, c []float64) float64 {
	c = c[:len(x)]
	var s0, s1 float64
	j := 0
	for ; j+2 <= len(x); j += 2 {
		e0, e1 := float64(x[j])-c[j], float64(x[j+1])-c[j+1]
		s0 += e0 * e0
		s1 += e1 * e1
	}
	for ; j < len(x); j++ {
		e := float64(x[j]) - c[j]
		s0 += e * e
	}
	return math.Sqrt(s0 + s1)
}

// ivfScratch is one goroutine's buffers.
type ivfScratch struct {
	dq   []float64 // the query's distance to each centre, at least
	dh   []float64 // and at most
	d2   []float32 // its squared distances computed by sqDists8AVX (padded)
	idx  []int32
	dist []float32
	d    []float32 // a block's distances
}

func newIVFScratch(ix *ivf, k int) *ivfScratch {
	return &ivfScratch{dq: make([]float64, ix.lists), dh: make([]float64, ix.lists), d2: make([]float32, len(ix.centreNorms)), idx: make([]int32, k), dist: make([]float32, k), d: make([]float32, max(ivfBlock, 8))}
}

// roundingSlack is a bound on |computed − exact| of the scan's float32
// distance qn + ‖x‖² − 2 q·x for a query of norm rq = √qn and a row of norm
// at most rx: each of the three terms is a sum of dim products, rounded
// (Higham's γ_n), and two more roundings. (The roots are the caller's: a
// list's is computed once, a query's once a query.)
func roundingSlack(dim int, rq, rx float64) float64 {
	r := rq + rx
	return 2 * float64(dim+4) * 0x1p-24 * r * r
}

// search writes the k nearest rows to q (with qn = kernel.Dot(q, q),
// finite and at most ivfMaxNorm) into idx and dist, as the scan would, and
// returns how many distances it computed.
func (ix *ivf) search(q []float32, qn float32, k int, idx []int32, dist []float32, s *ivfScratch) int {
	inf := float32(math.Inf(1))
	for i := range idx[:k] {
		idx[i], dist[i] = -1, inf
	}
	dim := ix.dim
	rq := math.Sqrt(float64(qn))
	// q's distance to each centre, as an interval [dq, dh]: the float64
	// distance (dq = dh), or, with the AVX kernel, around the float32
	// squared distance computed as a row's, within its rounding bound.
	first := 0
	if ix.centreBlocks != nil {
		cs := roundingSlack(dim, rq, ix.centreRoot)
		d2 := s.d2
		for b := 0; b < len(d2)/8; b++ {
			sqDists8AVX(&q[0], dim, qn, &ix.centreBlocks[b*8*dim], &ix.centreNorms[b*8], &d2[b*8], 0)
		}
		for l, v := range d2[:ix.lists] {
			s.dq[l] = math.Sqrt(math.Max(float64(v)-cs, 0))
			s.dh[l] = math.Sqrt(float64(v) + cs)
			if v < d2[first] {
				first = l
			}
		}
	} else {
		for l := 0; l < ix.lists; l++ {
			s.dq[l] = dist64(q, ix.centres[l*dim:(l+1)*dim])
			s.dh[l] = s.dq[l]
			if s.dq[l] < s.dq[first] {
				first = l
			}
		}
	}
	near := ix.near[first*ix.nearK : (first+1)*ix.nearK]
	computed := 0
	for _, l := range near {
		computed += ix.scanList(int(l), q, qn, rq, k, idx, dist, s.dq[l], s.dh[l], s.d)
		s.dq[l] = -1 // visited
	}
	// The other lists, most of which the bound of every list rules out
	// (a list that passes it is checked again with its own, smaller
	// slack in scanList). r is reach for the largest slack, kept for the
	// current k-th distance.
	slack := roundingSlack(dim, rq, math.Sqrt(ix.normMax))
	worst := dist[k-1]
	r := reach(worst, slack, 0, 0)
	for l, dq := range s.dq[:ix.lists] {
		if dq < 0 {
			continue
		}
		if rad, dh := ix.radius[l], s.dh[l]; dq-rad > r+1e-10*(dh+rad) {
			continue
		}
		computed += ix.scanList(l, q, qn, rq, k, idx, dist, dq, s.dh[l], s.d)
		if dist[k-1] != worst {
			worst = dist[k-1]
			r = reach(worst, slack, 0, 0)
		}
	}
	return computed
}

// reach is how far from the query, in distance, a row can lie and still
// enter its k nearest, whose k-th squared distance is worst: the square
// root of worst plus the rounding slack of a row of the list, with a margin
// for float64 rounding of the centre distances. +Inf while fewer than k
// rows are known.
func reach(worst float32, slack, dq, radius float64) float64 {
	if math.IsInf(float64(worst), 1) {
		return math.Inf(1)
	}
	return math.Sqrt(float64(worst)+slack)*(1+1e-9) + 1e-10*(dq+radius)
}

// ivfBlock is the rows of a list whose distances scanList computes at a
// time, between updates of its bound.
const ivfBlock = 8

// scanList computes the rows of list l that can enter the k nearest of q
// (dq: q's distance to the list's centre) and keeps the k nearest by
// (distance, index); d is room for ivfBlock distances. It returns how many
// distances it computed. It computes them a block of rows at a time and
// narrows the rows it visits between blocks: a row computed that a
// narrower bound would have skipped cannot enter the k nearest (it is
// farther than the k-th), so the neighbours are those of a row-by-row
// visit.
func (ix *ivf) scanList(l int, q []float32, qn float32, rq float64, k int, idx []int32, dist []float32, dq, dh float64, d []float32) int {
	lo, hi := int(ix.start[l]), int(ix.start[l+1])
	slack := roundingSlack(ix.dim, rq, ix.maxRoot[l])
	r := reach(dist[k-1], slack, dh, ix.radius[l])
	if dq-ix.radius[l] > r {
		return 0
	}
	// The rows with ‖x − c‖ < dq − r are too near the centre to be near q.
	j := lo + firstAtLeast(ix.dc[lo:hi], dq-r)
	computed := 0
	dim := ix.dim
	if ix.blocks != nil {
		// The rows' block of 8 at a time, up to the end of the bound
		// (found again when it narrows), and of each block only the rows
		// the kernel found within the k-th distance. A row of the block
		// that the narrowed bound would have skipped may be kept: it is
		// a row with its exact distance, so the k nearest are the same.
		d := d[:8]
		end := j + firstAbove(ix.dc[j:hi], dh+r)
		for j < end {
			b := j / 8
			e := min(end, 8*b+8)
			in := sqDists8AVX(&q[0], dim, qn, &ix.blocks[b*8*dim], &ix.blockNorms[b*8], &d[0], dist[k-1])
			in &= (1<<(e-8*b) - 1) &^ (1<<(j-8*b) - 1) // the rows j ≤ row < e
			computed += e - j
			for ; in != 0; in &= in - 1 {
				t := bits.TrailingZeros64(in)
				if keepNearest(idx[:k], dist[:k], d[t], ix.id[8*b+t]) {
					r = reach(dist[k-1], slack, dh, ix.radius[l])
					end = min(end, e+firstAbove(ix.dc[e:end], dh+r))
				}
			}
			j = e
		}
		return computed
	}
	for j < hi && ix.dc[j] <= dh+r {
		e := j + 1
		for e < min(hi, j+ivfBlock) && ix.dc[e] <= dh+r {
			e++
		}
		d := d[:e-j]
		sqDists(q, qn, ix.rows[j*dim:e*dim], ix.norms[j:e], d)
		computed += e - j
		changed := false
		for b, v := range d {
			if v <= dist[k-1] && keepNearest(idx[:k], dist[:k], v, ix.id[j+b]) {
				changed = true
			}
		}
		if changed {
			r = reach(dist[k-1], slack, dh, ix.radius[l])
		}
		j = e
	}
	return computed
}

// sqDists writes into d[i] the squared distance qn + ‖x‖² − 2 q·x of q to
// row i of rows (len(d) rows of len(q) values, their ‖x‖² in norms),
// clamped below at 0: the scan's formula, bit for bit (q·x summed as
// kernel.Dot sums it: four partial sums over the coordinates modulo 4, then
// (s0 + s1) + (s2 + s3)), two rows at a time to spare the loads of q and a
// call a row.
func sqDists(q []float32, qn float32, rows, norms, d []float32) {
	dim, n := len(q), len(d)
	norms = norms[:n]
	rows = rows[:n*dim]
	i := 0
	for ; i+2 <= n; i += 2 {
		a := rows[i*dim : (i+1)*dim : (i+1)*dim]
		b := rows[(i+1)*dim : (i+2)*dim : (i+2)*dim]
		var a0, a1, a2, a3, b0, b1, b2, b3 float32
		j := 0
		for ; j+4 <= dim; j += 4 {
			q0, q1, q2, q3 := q[j], q[j+1], q[j+2], q[j+3]
			a0 += q0 * a[j]
			a1 += q1 * a[j+1]
			a2 += q2 * a[j+2]
			a3 += q3 * a[j+3]
			b0 += q0 * b[j]
			b1 += q1 * b[j+1]
			b2 += q2 * b[j+2]
			b3 += q3 * b[j+3]
		}
		for ; j < dim; j++ {
			a0 += q[j] * a[j]
			b0 += q[j] * b[j]
		}
		d[i] = max(qn+norms[i]-2*((a0+a1)+(a2+a3)), 0)
		d[i+1] = max(qn+norms[i+1]-2*((b0+b1)+(b2+b3)), 0)
	}
	if i < n {
		d[i] = max(qn+norms[i]-2*kernel.Dot(q, rows[i*dim:(i+1)*dim]), 0)
	}
}

// firstAtLeast is sort.SearchFloat64s(a, v) without its closure: the
// first i with a[i] ≥ v in the ascending a, len(a) if none.
func firstAtLeast(a []float64, v float64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// firstAbove is the first i with a[i] > v in the ascending a, len(a) if
// none.
func firstAbove(a []float64, v float64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// keepNearest inserts (d, j) into the ascending lists dist and idx when it
// comes before their last by (distance, index), dropping the last; it
// reports whether it did.
func keepNearest(idx []int32, dist []float32, d float32, j int32) bool {
	k := len(dist)
	if d > dist[k-1] || d == dist[k-1] && j > idx[k-1] && idx[k-1] >= 0 {
		return false
	}
	p := k - 1
	for p > 0 && (dist[p-1] > d || dist[p-1] == d && idx[p-1] > j) {
		dist[p], idx[p] = dist[p-1], idx[p-1]
		p--
	}
	dist[p], idx[p] = d, j
	return true
}
