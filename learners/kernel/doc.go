// Package kernel provides the fused vote kernel of pate: k stacked linear
// teachers score a batch of public rows and each teacher casts one vote, its
// argmax class, without materialising the rows × teachers score table.
//
// # Numerics
//
// Scores are computed in float32 relative to class 0: NewLinear stores, per
// teacher, w[c] − w[0] and b[c] − b[0] for c ≥ 1, so class 0 scores 0 and a
// two-class teacher votes 1 iff (w1−w0)·x + (b1−b0) > 0. Ties go to the lowest
// class index. A teacher whose two best scores are equal or within float32
// rounding of each other may vote differently from a float64 computation, and
// the SIMD and pure-Go paths sum in different orders, so they may differ on
// such near-ties too; when every product and partial sum is exact in float32
// all paths agree exactly, ties included.
//
// # Paths
//
// With cgo on amd64, Votes runs a C kernel (kernel_amd64.c) chosen at start-up
// from the CPU: AVX-512F (16 teachers per register, 12 rows × 32 teachers of
// accumulators) or AVX2+FMA (6 rows × 16 teachers). Every C function carries
// its own target attribute, so the binary still runs on CPUs without them and
// then uses the pure-Go path, which is also the only path when built with
// CGO_ENABLED=0 or on other architectures. One cgo call covers a whole Votes
// call.
//
// On this project's 2-core AMD EPYC (AVX-512), one goroutine votes about
// 7.5 million rows/s for 64 features × 250 teachers × 2 classes (close to the
// core's peak of two FMAs per cycle), about half that on the AVX2 path, and
// about 0.4 million rows/s on the pure-Go path; see BenchmarkVotes.
package kernel
