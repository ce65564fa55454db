//go:build !amd64

package learners

// sqDistsAVX is false: the inverted file computes its rows with sqDists.
var sqDistsAVX = false

func sqDists8AVX(q *float32, dim int, qn float32, blk, norms, d *float32, worst float32) uint64 {
	panic("learners: no AVX kernel on this architecture")
}
