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
//
// # Teacher training: the logistic loss
//
// LogisticEval computes the binary logistic loss and its gradient over dense
// float64 rows, the inner loop of training a logistic-regression teacher
// (L-BFGS evaluates it tens of times per teacher). It follows the same
// dispatch: one cgo call per evaluation into logistic_amd64.c (8 rows per
// block on AVX-512 or AVX2+FMA, one row per vector lane, a vector e^x within
// 1 ulp of math.Exp in TestExpAccuracy), else the pure-Go loop. Both sum the
// softplus terms as the logarithm of their renormalised product. The paths
// sum in different orders and use different exponentials, so their losses and
// gradients differ in the last bits (TestLogisticEvalMatchesReference holds
// every path to 1e-12 of a compensated float64 reference), and so may the
// fitted teacher weights after L-BFGS: like the vote kernel's near-ties,
// a teacher trained by a SIMD build and one trained by a CGO_ENABLED=0 build
// can differ in the last bits of its weights. On this machine one
// evaluation at 400 rows × 64 features takes about 2.6 µs (AVX-512), 3.3 µs
// (AVX2) and 30 µs (pure Go); see BenchmarkLogisticEval.
package kernel
