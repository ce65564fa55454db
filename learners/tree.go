package learners

import (
	"slices"
)

// Tree is a CART classification tree: Gini impurity, at most MaxDepth levels
// below the root, at least MinLeaf rows per leaf, thresholds at the midpoint
// between consecutive distinct values (a row goes left when x ≤ threshold).
// Among equally good splits the lowest feature, then the lowest threshold
// wins, so fitting is deterministic. A leaf predicts its majority class
// (ties → lowest class).
type Tree struct {
	MaxDepth int
	MinLeaf  int
}

type treeNode struct {
	feature     int32 // −1 for a leaf
	class       int32
	left, right int32
	thr         float64
}

type treeModel struct {
	classes int
	nodes   []treeNode
	proba   []float32 // per node, classes values (leaves only are meaningful)
}

type treeBuilder struct {
	x        *Matrix
	y        []int32
	classes  int
	maxDepth int
	minLeaf  int
	ord      [][]int32 // per feature, row indices sorted by value within each node range
	goLeft   []bool
	tmp      []int32
	cl, cr   []int
	m        *treeModel
}

// Fit fits the tree on x and y (labels in [0, classes)).
func (t *Tree) Fit(x *Matrix, y []int32, classes int) (Model, error) {
	if _, err := checkFit(x, y, classes); err != nil {
		return nil, err
	}
	b := &treeBuilder{
		x: x, y: y, classes: classes,
		maxDepth: t.MaxDepth, minLeaf: t.MinLeaf,
		goLeft: make([]bool, x.Rows), tmp: make([]int32, x.Rows),
		cl: make([]int, classes), cr: make([]int, classes),
		m: &treeModel{classes: classes},
	}
	if b.maxDepth <= 0 {
		b.maxDepth = DefaultMaxDepth
	}
	if b.minLeaf <= 0 {
		b.minLeaf = DefaultMinLeaf
	}
	n, d := x.Rows, x.Cols
	b.ord = make([][]int32, d)
	for f := 0; f < d; f++ {
		o := make([]int32, n)
		for i := range o {
			o[i] = int32(i)
		}
		slices.SortStableFunc(o, func(a, c int32) int {
			va, vc := x.Data[int(a)*d+f], x.Data[int(c)*d+f]
			switch {
			case va < vc:
				return -1
			case va > vc:
				return 1
			}
			return 0
		})
		b.ord[f] = o
	}
	b.build(0, n, 0)
	return b.m, nil
}

// build grows the subtree of the rows ord[f][lo:hi] and returns its index.
func (b *treeBuilder) build(lo, hi, depth int) int32 {
	m := b.m
	id := int32(len(m.nodes))
	m.nodes = append(m.nodes, treeNode{feature: -1})
	counts := make([]int, b.classes)
	rows := b.tmp[:0]
	if len(b.ord) > 0 {
		rows = b.ord[0][lo:hi]
	} else {
		for i := lo; i < hi; i++ {
			rows = append(rows, int32(i))
		}
	}
	for _, r := range rows {
		counts[b.y[r]]++
	}
	n := hi - lo
	best := 0
	for c, k := range counts {
		if k > counts[best] {
			best = c
		}
	}
	m.nodes[id].class = int32(best)
	for _, k := range counts {
		m.proba = append(m.proba, float32(k)/float32(n))
	}
	if depth >= b.maxDepth || n < 2*b.minLeaf || counts[best] == n || len(b.ord) == 0 {
		return id
	}

	// Find the split maximising Σ cL²/nL + Σ cR²/nR (minimum weighted Gini).
	d := b.x.Cols
	bestScore, bestF, bestPos := -1.0, -1, -1
	var bestThr float64
	for f := 0; f < d; f++ {
		o := b.ord[f][lo:hi]
		clear(b.cl)
		copy(b.cr, counts)
		sqL, sqR := 0.0, 0.0
		for _, k := range counts {
			sqR += float64(k * k)
		}
		for p := 0; p < n-1; p++ {
			c := b.y[o[p]]
			sqL += float64(2*b.cl[c] + 1)
			sqR -= float64(2*b.cr[c] - 1)
			b.cl[c]++
			b.cr[c]--
			nl := p + 1
			if nl < b.minLeaf || n-nl < b.minLeaf {
				continue
			}
			va := b.x.Data[int(o[p])*d+f]
			vb := b.x.Data[int(o[p+1])*d+f]
			if !(va < vb) {
				continue
			}
			score := sqL/float64(nl) + sqR/float64(n-nl)
			if score > bestScore+1e-12 {
				bestScore, bestF, bestPos = score, f, p
				a, c2 := float64(va), float64(vb)
				bestThr = a/2 + c2/2
				if bestThr >= c2 {
					bestThr = a
				}
			}
		}
	}
	if bestF < 0 {
		return id
	}
	// Partition every feature's ordering stably into left and right.
	so := b.ord[bestF][lo:hi]
	for p, r := range so {
		b.goLeft[r] = p <= bestPos
	}
	nl := bestPos + 1
	for f := 0; f < d; f++ {
		o := b.ord[f][lo:hi]
		li, ri := 0, nl
		tmp := b.tmp[:n]
		for _, r := range o {
			if b.goLeft[r] {
				tmp[li] = r
				li++
			} else {
				tmp[ri] = r
				ri++
			}
		}
		copy(o, tmp)
	}
	m.nodes[id].feature = int32(bestF)
	m.nodes[id].thr = bestThr
	l := b.build(lo, lo+nl, depth+1)
	r := b.build(lo+nl, hi, depth+1)
	m.nodes[id].left, m.nodes[id].right = l, r
	return id
}

func (m *treeModel) leaf(row []float32) int32 {
	i := int32(0)
	for {
		nd := &m.nodes[i]
		if nd.feature < 0 {
			return i
		}
		if float64(row[nd.feature]) <= nd.thr {
			i = nd.left
		} else {
			i = nd.right
		}
	}
}

func (m *treeModel) Predict(x *Matrix, out []int32) {
	for i := 0; i < x.Rows; i++ {
		out[i] = m.nodes[m.leaf(x.Row(i))].class
	}
}

func (m *treeModel) PredictProba(x *Matrix, out []float32) {
	k := m.classes
	for i := 0; i < x.Rows; i++ {
		l := int(m.leaf(x.Row(i)))
		copy(out[i*k:(i+1)*k], m.proba[l*k:(l+1)*k])
	}
}
