package learners

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Stored models. EncodeModel turns a fitted Model into a kind and a compact
// little-endian byte form; DecodeModel restores it, bit for bit, so that the
// restored model predicts exactly what the fitted one did. The byte form has
// no version or checksum of its own: the container it is stored in (a saved
// labeler) carries both.
//
// The kinds and their layouts (u32, i32, f32, f64 little-endian):
//
//	linear          u32 classes, u32 dim, f32 w[classes·dim], f32 b[classes]
//	linear-rownorm  f64 norm, then a linear model (DP logistic regression)
//	gaussian-nb     u32 classes, u32 dim, f64 theta[classes·dim],
//	                f64 invVar[classes·dim], f64 konst[classes]
//	tree            u32 classes, u32 nodes, per node (i32 feature, i32 class,
//	                i32 left, i32 right, f64 threshold), f32 proba[nodes·classes]
//	gbt             u32 classes, u32 dim, u32 depth, u32 scores, u32 seen,
//	                u32 trees, i32 seen classes[seen], f32 base[scores], per
//	                tree (i32 feature[2^depth−1], f32 threshold[2^depth−1],
//	                f32 leaf[2^depth])
//	knn             u32 classes, u32 dim, u32 k, u32 rows, f32 x[rows·dim],
//	                i32 y[rows]
//	cells           u32 classes, u32 dim, u32 nearest, u32 centres,
//	                f32 centre[centres·dim], i64 table[centres·classes]
//	cells-smoothed  u32 classes, u32 dim, u32 k, u32 rows, f32 x[rows·dim],
//	                i64 scores[rows·classes]

// Model kinds of EncodeModel.
const (
	ModelLinear        = "linear"
	ModelLinearRowNorm = "linear-rownorm"
	ModelGaussianNB    = "gaussian-nb"
	ModelTree          = "tree"
	ModelGBT           = "gbt"
	ModelKNN           = "knn"
	ModelCells         = "cells"
	ModelCellsSmoothed = "cells-smoothed"
)

// ErrModelFormat reports stored model bytes that do not describe a valid
// model of the expected shape.
var ErrModelFormat = errors.New("learners: malformed stored model")

// maxStoredValues bounds the values of one stored array, so that a
// corrupted size cannot ask for an absurd allocation.
const maxStoredValues = 1 << 28

// EncodeModel returns the kind and the byte form of a model fitted by one of
// this package's learners.
func EncodeModel(m Model) (string, []byte, error) {
	var w wbuf
	switch m := m.(type) {
	case *linearModel:
		w.linear(m)
		return ModelLinear, w.b, nil
	case *rowNormModel:
		w.f64(m.norm)
		w.linear(m.m)
		return ModelLinearRowNorm, w.b, nil
	case *nbModel:
		w.u32(uint32(m.classes))
		w.u32(uint32(m.dim))
		w.f64s(m.theta)
		w.f64s(m.invVar)
		w.f64s(m.konst)
		return ModelGaussianNB, w.b, nil
	case *treeModel:
		w.u32(uint32(m.classes))
		w.u32(uint32(len(m.nodes)))
		for _, nd := range m.nodes {
			w.u32(uint32(nd.feature))
			w.u32(uint32(nd.class))
			w.u32(uint32(nd.left))
			w.u32(uint32(nd.right))
			w.f64(nd.thr)
		}
		w.f32s(m.proba)
		return ModelTree, w.b, nil
	case *gbtModel:
		m.encode(&w)
		return ModelGBT, w.b, nil
	case *knnModel:
		m.encode(&w)
		return ModelKNN, w.b, nil
	case *cellModel:
		m.encode(&w)
		return ModelCells, w.b, nil
	case *smoothModel:
		m.encode(&w)
		return ModelCellsSmoothed, w.b, nil
	}
	return "", nil, fmt.Errorf("learners: a %T cannot be stored", m)
}

// DecodeModel restores a model stored by EncodeModel and checks that it
// predicts classes classes from rows of dim encoded columns. Every error
// wraps ErrModelFormat; it never panics, whatever the bytes.
func DecodeModel(kind string, data []byte, classes, dim int) (Model, error) {
	if classes < 1 || classes > maxStoredValues || dim < 1 || dim > maxStoredValues {
		return nil, fmt.Errorf("%w: %d classes of %d columns", ErrModelFormat, classes, dim)
	}
	r := &rbuf{b: data}
	var m Model
	switch kind {
	case ModelLinear:
		m = r.linear(classes, dim)
	case ModelLinearRowNorm:
		norm := r.f64()
		lm := r.linear(classes, dim)
		if r.err == nil && !(norm > 0) {
			r.fail("row norm %g is not positive", norm)
		}
		m = &rowNormModel{m: lm, norm: norm}
	case ModelGaussianNB:
		r.shape(classes, dim)
		nb := &nbModel{classes: classes, dim: dim}
		nb.theta = r.f64s(classes * dim)
		nb.invVar = r.f64s(classes * dim)
		nb.konst = r.f64s(classes)
		m = nb
	case ModelTree:
		m = r.tree(classes, dim)
	case ModelGBT:
		if g := r.gbt(classes, dim); g != nil {
			m = g
		}
	case ModelKNN:
		if k := r.knn(classes, dim); k != nil {
			m = k
		}
	case ModelCells:
		if c := r.cells(classes, dim); c != nil {
			m = c
		}
	case ModelCellsSmoothed:
		if c := r.smooth(classes, dim); c != nil {
			m = c
		}
	default:
		return nil, fmt.Errorf("%w: unknown kind %q", ErrModelFormat, kind)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the model", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

type wbuf struct{ b []byte }

func (w *wbuf) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *wbuf) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *wbuf) f64(v float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
}
func (w *wbuf) f64s(vs []float64) {
	for _, v := range vs {
		w.f64(v)
	}
}
func (w *wbuf) f32s(vs []float32) {
	for _, v := range vs {
		w.u32(math.Float32bits(v))
	}
}
func (w *wbuf) linear(m *linearModel) {
	w.u32(uint32(m.classes))
	w.u32(uint32(m.dim))
	w.f32s(m.w)
	w.f32s(m.b)
}

// rbuf reads a stored model; the first error sticks and later reads return
// zeros.
type rbuf struct {
	b   []byte
	err error
}

func (r *rbuf) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrModelFormat, fmt.Sprintf(format, args...))
	}
}

func (r *rbuf) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail("truncated")
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *rbuf) u32() uint32 {
	p := r.take(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

func (r *rbuf) u64() uint64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

func (r *rbuf) f64() float64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p))
}

func (r *rbuf) f64s(n int) []float64 {
	p := r.take(8 * n)
	if p == nil {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:]))
	}
	return out
}

func (r *rbuf) f32s(n int) []float32 {
	p := r.take(4 * n)
	if p == nil {
		return nil
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return out
}

// shape reads a stored classes and dim and checks them against the
// expected ones.
func (r *rbuf) shape(classes, dim int) {
	c, d := r.u32(), r.u32()
	if r.err == nil && (int(c) != classes || int(d) != dim) {
		r.fail("%d classes of %d columns, want %d of %d", c, d, classes, dim)
	}
}

func (r *rbuf) linear(classes, dim int) *linearModel {
	r.shape(classes, dim)
	if r.err == nil && classes*dim > maxStoredValues {
		r.fail("%d weights", classes*dim)
	}
	m := &linearModel{classes: classes, dim: dim}
	m.w = r.f32s(classes * dim)
	m.b = r.f32s(classes)
	return m
}

func (r *rbuf) tree(classes, dim int) *treeModel {
	c := r.u32()
	n := int(r.u32())
	if r.err != nil {
		return nil
	}
	if int(c) != classes {
		r.fail("%d classes, want %d", c, classes)
		return nil
	}
	// A node takes 24 bytes: a count beyond what is left is a lie.
	if n < 1 || n > len(r.b)/24 {
		r.fail("%d tree nodes", n)
		return nil
	}
	m := &treeModel{classes: classes, nodes: make([]treeNode, n)}
	for i := range m.nodes {
		nd := &m.nodes[i]
		nd.feature = int32(r.u32())
		nd.class = int32(r.u32())
		nd.left = int32(r.u32())
		nd.right = int32(r.u32())
		nd.thr = r.f64()
		if r.err != nil {
			return nil
		}
		// Children come after their parent (as the builder numbers them),
		// so that every walk ends at a leaf.
		switch {
		case nd.feature < 0:
			if nd.feature != -1 || nd.class < 0 || int(nd.class) >= classes {
				r.fail("leaf %d: feature %d class %d", i, nd.feature, nd.class)
			}
		case int(nd.feature) >= dim:
			r.fail("node %d splits on column %d of %d", i, nd.feature, dim)
		case nd.left <= int32(i) || nd.right <= int32(i) || int(nd.left) >= n || int(nd.right) >= n:
			r.fail("node %d has children %d and %d of %d nodes", i, nd.left, nd.right, n)
		}
	}
	if r.err == nil && n*classes > maxStoredValues {
		r.fail("%d tree probabilities", n*classes)
	}
	m.proba = r.f32s(n * classes)
	return m
}
