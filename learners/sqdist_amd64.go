package learners

import "golang.org/x/sys/cpu"

// sqDistsAVX says whether the inverted file keeps its rows in blocks of 8
// for sqDists8AVX: AVX, with the OS saving its registers.
var sqDistsAVX = cpu.X86.HasAVX

// sqDists8AVX is sqDists for the 8 rows of a block stored feature-major
// (feature f of row l at blk[8f + l]), their ‖x‖² at norms[0:8], into
// d[0:8]: the same formula, bit for bit, eight rows at once. Bit l of the
// result says d[l] ≤ worst.
//
//go:noescape
func sqDists8AVX(q *float32, dim int, qn float32, blk, norms, d *float32, worst float32) uint64
