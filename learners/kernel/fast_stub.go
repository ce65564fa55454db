package kernel

// packedLinear holds SIMD-friendly copies of the weights. The pure-Go build
// has none.
type packedLinear struct{}

func pack(*Linear) *packedLinear { return nil }

func (l *Linear) votesFast(x []float32, n int, counts []int32) { l.votesGeneric(x, n, counts) }
