package learners

import (
	"fmt"
	"math"
	"slices"
)

// GBT is histogram gradient boosting of shallow regression trees on the
// softmax loss (binary: the logistic loss, one tree a round), with
// shrinkage and L2-regularised leaves (Friedman 2001; the histogram
// split search of LightGBM and scikit-learn's HistGradientBoosting).
//
// Every split is at one of the edges of Bins, which the caller fits on
// PUBLIC data (PublicBins on the public encoding): nothing fitted on a
// teacher's sensitive rows is shared with another teacher (privacy
// invariant 2), and the teachers all split on one public grid. One-hot
// columns of the encoder (categorical values) get the edge 0.5, so a
// split on one is "this category or not". Without Bins, the edges come
// from the training rows themselves (a learner fitting its own partition
// may do that; label always passes public ones).
//
// Classes absent from the training rows get no trees and are never
// predicted (a teacher votes only for a class it saw). Fitting is
// deterministic: among equally good splits the lowest column, then the
// lowest edge wins. A GBT keeps scratch space between fits; it is not
// safe for concurrent use (one per goroutine, as every Learner).
type GBT struct {
	// Rounds is the number of boosting rounds (default: by the rows, see
	// gbtDefaults).
	Rounds int
	// Depth is the depth of each tree (default 3: at most 8 leaves).
	Depth int
	// Shrinkage multiplies each tree's leaves (default: by the rows).
	Shrinkage float64
	// Lambda is the L2 penalty on a leaf's value (default 1).
	Lambda float64
	// MinLeaf is the fewest training rows in a leaf (default: by the rows).
	MinLeaf int
	// MaxBins bounds the bins per column when Bins is nil (default 64).
	MaxBins int
	// Bins are the split edges, one list per encoded column (see
	// PublicBins); nil: from the training rows.
	Bins *Bins

	sc gbtScratch
}

// Defaults of GBT.
const (
	DefaultGBTDepth   = 3
	DefaultGBTLambda  = 1.0
	DefaultGBTMinLeaf = 3
	DefaultMaxBins    = 64
	// MaxGBTDepth bounds Depth: a tree is stored complete (2^Depth leaves).
	MaxGBTDepth = 10
	// maxBinsLimit keeps a bin index in a byte.
	maxBinsLimit = 256
)

// NewGBT returns a GBT with the defaults and the public bin edges of opts.
// The tree options of LearnerOptions (MaxDepth, MinLeaf) are CART's and
// are not used.
func NewGBT(opts LearnerOptions) *GBT {
	return &GBT{Bins: opts.Bins}
}

// Bins are split edges per encoded column, ascending: a value x falls in
// bin b when Edges[b−1] < x ≤ Edges[b] (bin 0 below the first edge, bin
// len(Edges) above the last; NaN in bin 0). They are fitted on public data
// by PublicBins and read only afterwards, so one Bins may be shared by any
// number of learners.
type Bins struct {
	Edges [][]float32
}

// Dim is the number of columns the bins are for.
func (b *Bins) Dim() int { return len(b.Edges) }

// bin returns the bin of x among edges.
func bin(edges []float32, x float32) int {
	lo, hi := 0, len(edges)
	for lo < hi { // the first edge ≥ x; NaN: 0, every comparison false
		m := int(uint(lo+hi) >> 1)
		if edges[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// binSampleRows bounds the rows PublicBins sorts per column: quantiles of
// 20,000 evenly spaced rows are within a fraction of a percent of the
// sample's.
const binSampleRows = 20_000

// PublicBins fits at most maxBins bins per column of x, which must be
// public data (the encoded public sample): a column with at most maxBins
// distinct values gets an edge midway between each pair of consecutive
// values (a one-hot column: 0.5); any other column edges at its
// maxBins−1 inner quantiles (deduplicated, the largest value left out),
// over at most 20,000 evenly spaced rows. maxBins ≤ 0 means 64; it is
// capped at 256.
func PublicBins(x *Matrix, maxBins int) *Bins {
	if maxBins <= 0 {
		maxBins = DefaultMaxBins
	}
	maxBins = min(maxBins, maxBinsLimit)
	step := max(1, (x.Rows+binSampleRows-1)/binSampleRows)
	vals := make([]float32, 0, (x.Rows+step-1)/step)
	b := &Bins{Edges: make([][]float32, x.Cols)}
	for f := 0; f < x.Cols; f++ {
		vals = vals[:0]
		for i := 0; i < x.Rows; i += step {
			if v := x.Data[i*x.Cols+f]; v == v {
				vals = append(vals, v)
			}
		}
		b.Edges[f] = edgesOf(vals, maxBins)
	}
	return b
}

// edgesOf returns the edges of one column's values (sorted in place).
func edgesOf(vals []float32, maxBins int) []float32 {
	if len(vals) == 0 {
		return nil
	}
	slices.Sort(vals)
	distinct := 1
	for i := 1; i < len(vals) && distinct <= maxBins; i++ {
		if vals[i] != vals[i-1] {
			distinct++
		}
	}
	var e []float32
	if distinct <= maxBins {
		for i := 1; i < len(vals); i++ {
			if a, c := vals[i-1], vals[i]; a != c {
				m := a/2 + c/2
				if !(m >= a && m < c) {
					m = a
				}
				e = append(e, m)
			}
		}
		return e
	}
	top := vals[len(vals)-1]
	for q := 1; q < maxBins; q++ {
		v := vals[q*len(vals)/maxBins]
		if v == top || (len(e) > 0 && v == e[len(e)-1]) {
			continue
		}
		e = append(e, v)
	}
	return e
}

// WeightedLearner is a Learner that also fits with a positive weight per
// row (a row of weight 2 counts as two).
type WeightedLearner interface {
	Learner
	FitWeighted(x *Matrix, y []int32, w []float32, classes int) (Model, error)
}

var _ WeightedLearner = (*GBT)(nil)

// Fit fits the boosted trees on x and y (labels in [0, classes)).
func (g *GBT) Fit(x *Matrix, y []int32, classes int) (Model, error) {
	return g.FitWeighted(x, y, nil, classes)
}

// gbtScratch is the working memory of one fit, kept for the next.
type gbtScratch struct {
	binned   []uint8   // rows × kept columns, local bin indices
	colMajor []uint8   // the same, column by column, while binning
	gh       []float64 // rows × outs × (gradient, hessian) of a round
	cols     []int32   // kept column → encoded column
	off      []int32   // kept column → first histogram slot; len = kept+1
	thr      []float32 // histogram slot → edge of a split after it
	local    []int32   // per column: global bin → local bin (−1 unused)
	score    []float64 // rows × outs
	grad     []float64 // rows
	hess     []float64 // rows
	idx      []int32   // rows, grouped by node
	tmp      []int32
	hists    [][]histBin // one per depth, for the recursion
}

type histBin struct {
	g, h float64
	n    int32
}

// FitWeighted is Fit with a weight per row (nil: all 1); weights must be
// positive and finite.
func (g *GBT) FitWeighted(x *Matrix, y []int32, w []float32, classes int) (Model, error) {
	counts, err := checkFit(x, y, classes)
	if err != nil {
		return nil, err
	}
	if w != nil {
		if len(w) != x.Rows {
			return nil, fmt.Errorf("learners: %d weights for %d rows", len(w), x.Rows)
		}
		for i, v := range w {
			if !(v > 0) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("learners: weight of row %d is not positive and finite", i)
			}
		}
	}
	p := g.params(x.Rows)
	if p.depth > MaxGBTDepth {
		return nil, fmt.Errorf("learners: GBT depth %d is above %d", p.depth, MaxGBTDepth)
	}
	var seen []int32
	for c, n := range counts {
		if n > 0 {
			seen = append(seen, int32(c))
		}
	}
	m := &gbtModel{classes: classes, dim: x.Cols, depth: p.depth, seen: seen}
	if len(seen) == 1 {
		m.outs = 1
		m.base = []float32{0}
		return m, nil
	}
	bins := g.Bins
	if bins == nil {
		bins = PublicBins(x, p.maxBins) // the training rows' own: see the type's comment
	} else if bins.Dim() != x.Cols {
		return nil, fmt.Errorf("learners: bins for %d columns, rows of %d", bins.Dim(), x.Cols)
	}
	for _, e := range bins.Edges {
		if len(e) >= maxBinsLimit {
			return nil, fmt.Errorf("learners: %d bin edges in a column, at most %d", len(e), maxBinsLimit-1)
		}
	}
	outs := len(seen)
	if outs == 2 {
		outs = 1 // the logistic loss: one score, for seen[1] against seen[0]
	}
	m.outs = outs
	b := &gbtBuilder{g: g, p: p, x: x, y: y, w: w, seen: seen, outs: outs, m: m}
	b.bin(bins)
	b.boost(counts)
	return m, nil
}

// gbtDefaults are the rounds, shrinkage and smallest leaf of a fit on a
// number of rows: a teacher's partition (the default 250 teachers of
// Adult's 32,561 rows have 130 each), a student's answers (hundreds to a
// few thousand noisy labels) and a large set. Set once on Adult (the
// teachers' plurality vote; 600 and 1,500 public rows with 10% of labels
// flipped for the student), never on a run's data: fewer, stronger rounds
// vote as well as more on a teacher's rows at half the cost of a vote;
// on a student's, slower learning with larger leaves resists the noise
// of the answers.
var gbtDefaults = []struct {
	below, rounds, minLeaf int
	shrinkage              float64
}{
	{300, 50, 3, 0.2},
	{5000, 100, 5, 0.05},
	{math.MaxInt, 150, 3, 0.1},
}

type gbtParams struct {
	rounds, depth, minLeaf, maxBins int
	shrink, lambda                  float64
}

func (g *GBT) params(rows int) gbtParams {
	p := gbtParams{rounds: g.Rounds, depth: g.Depth, minLeaf: g.MinLeaf, maxBins: g.MaxBins, shrink: g.Shrinkage, lambda: g.Lambda}
	def := gbtDefaults[0]
	for _, d := range gbtDefaults {
		if def = d; rows < d.below {
			break
		}
	}
	if p.rounds <= 0 {
		p.rounds = def.rounds
	}
	if p.depth <= 0 {
		p.depth = DefaultGBTDepth
	}
	if p.minLeaf <= 0 {
		p.minLeaf = def.minLeaf
	}
	if p.maxBins <= 0 {
		p.maxBins = DefaultMaxBins
	}
	if !(p.shrink > 0) || math.IsInf(p.shrink, 0) {
		p.shrink = def.shrinkage
	}
	if !(p.lambda >= 0) || math.IsInf(p.lambda, 0) {
		p.lambda = DefaultGBTLambda
	}
	return p
}

type gbtBuilder struct {
	g    *GBT
	p    gbtParams
	x    *Matrix
	y    []int32
	w    []float32
	seen []int32
	outs int
	m    *gbtModel
	sc   *gbtScratch
	kept int
	slot int // histogram slots
	tree int // the tree being grown: its first internal node and leaf
}

// bin maps every row to its local bins: per column, only the bins the
// training rows fall in are kept (a column they all fall in one bin of
// cannot split and is dropped), so a histogram is as small as the rows'
// own variety.
func (b *gbtBuilder) bin(bins *Bins) {
	sc := &b.g.sc
	b.sc = sc
	x, n := b.x, b.x.Rows
	sc.cols = sc.cols[:0]
	sc.off = append(sc.off[:0], 0)
	sc.thr = sc.thr[:0]
	glob := growInt32(sc.tmp, n)
	sc.tmp = glob
	colMajor := sc.colMajor[:0]
	for f := 0; f < x.Cols; f++ {
		edges := bins.Edges[f]
		if len(edges) == 0 {
			continue
		}
		sc.local = growInt32(sc.local, len(edges)+1)
		for i := range sc.local {
			sc.local[i] = -1
		}
		many := false
		for i := 0; i < n; i++ {
			gb := int32(bin(edges, x.Data[i*x.Cols+f]))
			glob[i] = gb
			sc.local[gb] = 0
			many = many || gb != glob[0]
		}
		if !many {
			continue
		}
		k := int32(0)
		for gb, used := range sc.local {
			if used < 0 {
				continue
			}
			sc.local[gb] = k
			k++
			// A split after this bin sends x ≤ edges[gb] left.
			t := float32(math.Inf(1))
			if gb < len(edges) {
				t = edges[gb]
			}
			sc.thr = append(sc.thr, t)
		}
		sc.cols = append(sc.cols, int32(f))
		sc.off = append(sc.off, sc.off[len(sc.off)-1]+k)
		for i := 0; i < n; i++ {
			colMajor = append(colMajor, uint8(sc.local[glob[i]]))
		}
	}
	sc.colMajor = colMajor
	b.kept = len(sc.cols)
	b.slot = int(sc.off[b.kept])
	// Row-major for the histograms: a row's bins are read together.
	if cap(sc.binned) < len(colMajor) {
		sc.binned = make([]uint8, len(colMajor))
	}
	sc.binned = sc.binned[:len(colMajor)]
	for j := 0; j < b.kept; j++ {
		cb := colMajor[j*n : (j+1)*n]
		for i, v := range cb {
			sc.binned[i*b.kept+j] = v
		}
	}
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growF64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// boost runs the rounds: per round and output, the gradients and
// hessians of the loss at the current scores, then one tree fitted to
// them by Newton steps.
func (b *gbtBuilder) boost(counts []int) {
	sc, m, n, outs := b.sc, b.m, b.x.Rows, b.outs
	// Starting scores: the log of the (weighted) class priors.
	prior := make([]float64, len(b.seen))
	for i, c := range b.y {
		prior[slices.Index(b.seen, c)] += b.weight(i)
	}
	m.base = make([]float32, outs)
	if outs == 1 {
		m.base[0] = float32(math.Log(prior[1] / prior[0]))
	} else {
		for j := range prior {
			m.base[j] = float32(math.Log(prior[j]))
		}
	}
	target := make([]int32, n) // index of the row's class in seen
	for i, c := range b.y {
		target[i] = int32(slices.Index(b.seen, c))
	}
	sc.score = growF64(sc.score, n*outs)
	for i := 0; i < n; i++ {
		for o := 0; o < outs; o++ {
			sc.score[i*outs+o] = float64(m.base[o])
		}
	}
	sc.grad = growF64(sc.grad, n)
	sc.hess = growF64(sc.hess, n)
	sc.idx = growInt32(sc.idx, n)
	if len(sc.hists) < b.p.depth+1 {
		sc.hists = make([][]histBin, b.p.depth+1)
	}
	for d := range sc.hists {
		if cap(sc.hists[d]) < b.slot {
			sc.hists[d] = make([]histBin, b.slot)
		}
		sc.hists[d] = sc.hists[d][:b.slot]
	}
	internal, leaves := 1<<b.p.depth-1, 1<<b.p.depth
	trees := b.p.rounds * outs
	m.feat = make([]int32, trees*internal)
	m.thr = make([]float32, trees*internal)
	m.leaf = make([]float32, trees*leaves)
	prob := make([]float64, outs)
	if outs > 1 {
		sc.gh = growF64(sc.gh, 2*n*outs)
	}
	if b.kept == 0 { // no column splits the rows: the priors are the model
		m.feat, m.thr, m.leaf = nil, nil, nil
		return
	}
	for r := 0; r < b.p.rounds; r++ {
		// One set of probabilities per round: each class's tree is fitted
		// at the same scores (as in Friedman's multiclass algorithm).
		gradAll := sc.gh
		if outs > 1 {
			for i := 0; i < n; i++ {
				s := sc.score[i*outs : (i+1)*outs]
				mx := slices.Max(s)
				sum := 0.0
				for o := range s {
					prob[o] = math.Exp(s[o] - mx)
					sum += prob[o]
				}
				w := b.weight(i)
				for o := range s {
					pr := prob[o] / sum
					t := 0.0
					if int(target[i]) == o {
						t = 1
					}
					gradAll[(i*outs+o)*2] = w * (pr - t)
					gradAll[(i*outs+o)*2+1] = w * math.Max(pr*(1-pr), 1e-6)
				}
			}
		}
		for o := 0; o < outs; o++ {
			for i := 0; i < n; i++ {
				if outs == 1 {
					pr := 1 / (1 + math.Exp(-sc.score[i]))
					t := float64(target[i]) // 0 or 1
					w := b.weight(i)
					sc.grad[i] = w * (pr - t)
					sc.hess[i] = w * math.Max(pr*(1-pr), 1e-6)
				} else {
					sc.grad[i] = gradAll[(i*outs+o)*2]
					sc.hess[i] = gradAll[(i*outs+o)*2+1]
				}
				sc.idx[i] = int32(i)
			}
			b.tree = r*outs + o
			b.grow(0, 0, n, 0, nil)
			// Update the scores with the new tree.
			fe := m.feat[b.tree*internal : (b.tree+1)*internal]
			th := m.thr[b.tree*internal : (b.tree+1)*internal]
			lv := m.leaf[b.tree*leaves : (b.tree+1)*leaves]
			for i := 0; i < n; i++ {
				sc.score[i*outs+o] += float64(lv[walk(fe, th, b.x.Row(i), b.p.depth)])
			}
		}
	}
}

func (b *gbtBuilder) weight(i int) float64 {
	if b.w == nil {
		return 1
	}
	return float64(b.w[i])
}

// grow grows the subtree at internal node (or leaf, at the last depth)
// node of the current tree over the rows idx[lo:hi]; hist is their
// histogram when the caller has it (nil: build it).
func (b *gbtBuilder) grow(node, lo, hi, depth int, hist []histBin) {
	sc, p := b.sc, b.p
	n := hi - lo
	rows := sc.idx[lo:hi]
	G, H := 0.0, 0.0
	for _, r := range rows {
		G += sc.grad[r]
		H += sc.hess[r]
	}
	internal := 1<<p.depth - 1
	if depth == p.depth || n < 2*p.minLeaf {
		b.setLeaf(node, depth, -G/(H+p.lambda))
		return
	}
	if hist == nil {
		hist = sc.hists[depth]
		b.histogram(rows, hist)
	}
	// The best split: maximise GL²/(HL+λ) + GR²/(HR+λ).
	parent := G * G / (H + p.lambda)
	bestGain, bestCol, bestSlot := 1e-12, -1, -1
	for j := 0; j < b.kept; j++ {
		gl, hl, nl := 0.0, 0.0, int32(0)
		a, z := int(sc.off[j]), int(sc.off[j+1])
		for s := a; s < z-1; s++ {
			hb := &hist[s]
			if hb.n == 0 {
				continue
			}
			gl += hb.g
			hl += hb.h
			nl += hb.n
			if int(nl) < p.minLeaf {
				continue
			}
			if n-int(nl) < p.minLeaf {
				break
			}
			gr, hr := G-gl, H-hl
			gain := gl*gl/(hl+p.lambda) + gr*gr/(hr+p.lambda) - parent
			if gain > bestGain {
				bestGain, bestCol, bestSlot = gain, j, s
			}
		}
	}
	if bestCol < 0 {
		b.setLeaf(node, depth, -G/(H+p.lambda))
		return
	}
	m := b.m
	m.feat[b.tree*internal+node] = sc.cols[bestCol]
	m.thr[b.tree*internal+node] = sc.thr[bestSlot]
	// Partition rows: left when the local bin ≤ the split's.
	lim := uint8(bestSlot - int(sc.off[bestCol]))
	sc.tmp = growInt32(sc.tmp, n)
	tmp := sc.tmp
	li, ri := 0, n-1
	for _, r := range rows {
		if sc.binned[int(r)*b.kept+bestCol] <= lim {
			tmp[li] = r
			li++
		} else {
			tmp[ri] = r
			ri--
		}
	}
	copy(rows[:li], tmp[:li])
	// The right rows were written back to front: restore their order.
	for k := 0; k < n-li; k++ {
		rows[li+k] = tmp[n-1-k]
	}
	nl := li
	left, right := 2*node+1, 2*node+2
	if depth+1 == p.depth {
		b.grow(left, lo, lo+nl, depth+1, nil)
		b.grow(right, lo+nl, hi, depth+1, nil)
		return
	}
	// Histogram subtraction: build the smaller child's histogram into the
	// next depth's buffer, and turn the parent's into the larger child's
	// in place. A subtree at depth d+1 writes only its own buffer and those
	// of the depths below, so neither child's histogram is overwritten by
	// its sibling's subtree.
	small := sc.hists[depth+1]
	if nl <= n-nl {
		b.histogram(rows[:nl], small)
		subtract(hist, small)
		b.grow(left, lo, lo+nl, depth+1, small)
		b.grow(right, lo+nl, hi, depth+1, hist)
	} else {
		b.histogram(rows[nl:], small)
		subtract(hist, small)
		b.grow(left, lo, lo+nl, depth+1, hist)
		b.grow(right, lo+nl, hi, depth+1, small)
	}
}

func subtract(parent, child []histBin) {
	for s := range parent {
		parent[s].g -= child[s].g
		parent[s].h -= child[s].h
		parent[s].n -= child[s].n
	}
}

// histogram sums the gradients, hessians and rows of rows per slot.
func (b *gbtBuilder) histogram(rows []int32, hist []histBin) {
	clear(hist)
	sc, k := b.sc, b.kept
	off := sc.off[:k]
	for _, r := range rows {
		g, h := sc.grad[r], sc.hess[r]
		br := sc.binned[int(r)*k : int(r)*k+k]
		for j, v := range br {
			hb := &hist[int(off[j])+int(v)]
			hb.g += g
			hb.h += h
			hb.n++
		}
	}
}

// setLeaf makes node a leaf of value v·shrinkage. Below the last depth,
// the node's split is "always left" (+Inf), and the value goes to the
// leftmost leaf of its subtree, the one every row reaching it ends in.
func (b *gbtBuilder) setLeaf(node, depth int, v float64) {
	p, m := b.p, b.m
	internal, leaves := 1<<p.depth-1, 1<<p.depth
	for d := depth; d < p.depth; d++ {
		m.feat[b.tree*internal+node] = 0
		m.thr[b.tree*internal+node] = float32(math.Inf(1))
		node = 2*node + 1
	}
	m.leaf[b.tree*leaves+node-internal] = float32(v * p.shrink)
}

// walk returns the leaf of one tree (complete, depth internal levels)
// that row ends in: right when row[feat] > thr.
func walk(feat []int32, thr []float32, row []float32, depth int) int {
	i := 0
	for d := 0; d < depth; d++ {
		i = 2*i + 1 + b2i(row[feat[i]] > thr[i])
	}
	return i - len(feat)
}

// gbtModel is a fitted GBT: outs scores per row (one for two seen
// classes, else one per seen class), each the base plus the leaves of its
// trees (tree t adds to score t mod outs). The trees are complete of
// depth `depth`: internal node i has children 2i+1 and 2i+2.
type gbtModel struct {
	classes, dim int
	depth        int
	outs         int
	seen         []int32 // the classes of the training rows, ascending
	base         []float32
	feat         []int32   // trees × (2^depth − 1)
	thr          []float32 // trees × (2^depth − 1)
	leaf         []float32 // trees × 2^depth
}

// scores adds the row's scores to s (outs values, zeroed by the caller).
func (m *gbtModel) scores(row []float32, s []float32) {
	copy(s, m.base)
	internal, leaves := 1<<m.depth-1, 1<<m.depth
	trees := len(m.leaf) / leaves
	if m.outs == 1 && m.depth == 3 { // the default shape, unrolled and branch-free
		var acc float32
		for t := 0; t < trees; t++ {
			fe := m.feat[t*7 : t*7+7 : t*7+7]
			th := m.thr[t*7 : t*7+7 : t*7+7]
			i := 1 + b2i(row[fe[0]] > th[0])
			i = 2*i + 1 + b2i(row[fe[i&7]] > th[i&7])
			i = 2*i + 1 + b2i(row[fe[i&7]] > th[i&7])
			acc += m.leaf[t*8+(i-7)&7]
		}
		s[0] += acc
		return
	}
	for t := 0; t < trees; t++ {
		l := walk(m.feat[t*internal:(t+1)*internal], m.thr[t*internal:(t+1)*internal], row, m.depth)
		s[t%m.outs] += m.leaf[t*leaves+l]
	}
}

// Predict writes the class of highest score (ties → lowest class); a
// class absent from the training rows is never predicted.
func (m *gbtModel) Predict(x *Matrix, out []int32) {
	s := make([]float32, m.outs)
	for i := 0; i < x.Rows; i++ {
		if len(m.seen) == 1 {
			out[i] = m.seen[0]
			continue
		}
		m.scores(x.Row(i), s)
		if m.outs == 1 {
			out[i] = m.seen[0]
			if s[0] > 0 {
				out[i] = m.seen[1]
			}
			continue
		}
		best := 0
		for o := 1; o < m.outs; o++ {
			if s[o] > s[best] {
				best = o
			}
		}
		out[i] = m.seen[best]
	}
}

// PredictProba writes the softmax of the scores (0 for absent classes).
func (m *gbtModel) PredictProba(x *Matrix, out []float32) {
	k := m.classes
	s := make([]float32, m.outs)
	for i := 0; i < x.Rows; i++ {
		p := out[i*k : (i+1)*k]
		clear(p)
		if len(m.seen) == 1 {
			p[m.seen[0]] = 1
			continue
		}
		m.scores(x.Row(i), s)
		if m.outs == 1 {
			p1 := 1 / (1 + math.Exp(-float64(s[0])))
			p[m.seen[1]] = float32(p1)
			p[m.seen[0]] = float32(1 - p1)
			continue
		}
		mx := float64(slices.Max(s))
		sum := 0.0
		for o, v := range s {
			e := math.Exp(float64(v) - mx)
			p[m.seen[o]] = float32(e)
			sum += e
		}
		for _, c := range m.seen {
			p[c] = float32(float64(p[c]) / sum)
		}
	}
}

// encode stores a fitted GBT: u32 classes, u32 dim, u32 depth, u32 outs,
// u32 seen classes, u32 trees, i32 seen[], f32 base[outs], then per tree
// i32 feat[2^depth−1], f32 thr[2^depth−1], f32 leaf[2^depth].
func (m *gbtModel) encode(w *wbuf) {
	internal, leaves := 1<<m.depth-1, 1<<m.depth
	trees := len(m.leaf) / leaves
	w.u32(uint32(m.classes))
	w.u32(uint32(m.dim))
	w.u32(uint32(m.depth))
	w.u32(uint32(m.outs))
	w.u32(uint32(len(m.seen)))
	w.u32(uint32(trees))
	for _, c := range m.seen {
		w.u32(uint32(c))
	}
	w.f32s(m.base)
	for t := 0; t < trees; t++ {
		for _, f := range m.feat[t*internal : (t+1)*internal] {
			w.u32(uint32(f))
		}
		w.f32s(m.thr[t*internal : (t+1)*internal])
		w.f32s(m.leaf[t*leaves : (t+1)*leaves])
	}
}

// gbt restores a stored GBT and checks that every walk stays inside a row.
func (r *rbuf) gbt(classes, dim int) *gbtModel {
	r.shape(classes, dim)
	depth, outs, nseen, trees := int(r.u32()), int(r.u32()), int(r.u32()), int(r.u32())
	if r.err != nil {
		return nil
	}
	switch {
	case depth < 1 || depth > MaxGBTDepth:
		r.fail("tree depth %d", depth)
	case nseen < 1 || nseen > classes:
		r.fail("%d classes seen of %d", nseen, classes)
	case nseen <= 2 && outs != 1, nseen > 2 && outs != nseen:
		r.fail("%d scores for %d classes seen", outs, nseen)
	case trees < 0 || trees%outs != 0 || trees > len(r.b)/(4*(2<<depth)):
		r.fail("%d trees", trees)
	}
	if r.err != nil {
		return nil
	}
	m := &gbtModel{classes: classes, dim: dim, depth: depth, outs: outs, seen: make([]int32, nseen)}
	for i := range m.seen {
		m.seen[i] = int32(r.u32())
		if r.err == nil && (m.seen[i] < 0 || int(m.seen[i]) >= classes || (i > 0 && m.seen[i] <= m.seen[i-1])) {
			r.fail("seen classes out of order")
		}
	}
	m.base = r.f32s(outs)
	internal, leaves := 1<<depth-1, 1<<depth
	m.feat = make([]int32, 0, trees*internal)
	m.thr = make([]float32, 0, trees*internal)
	m.leaf = make([]float32, 0, trees*leaves)
	for t := 0; t < trees && r.err == nil; t++ {
		for i := 0; i < internal; i++ {
			f := int32(r.u32())
			if r.err == nil && (f < 0 || int(f) >= dim) {
				r.fail("tree %d splits on column %d of %d", t, f, dim)
			}
			m.feat = append(m.feat, f)
		}
		m.thr = append(m.thr, r.f32s(internal)...)
		m.leaf = append(m.leaf, r.f32s(leaves)...)
	}
	if r.err != nil {
		return nil
	}
	return m
}

// b2i is 1 for true: a set-on-condition, not a branch, so that a walk
// down a tree does not stall on unpredictable comparisons.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}
