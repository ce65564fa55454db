// Package kernel provides the fused vote kernel of pate: k stacked linear
// teachers score a batch of public rows and each teacher casts one vote, its
// argmax class, without materialising the rows × teachers score table.
//
// # Numerics
//
// Scores are computed in float32 relative to a reference class: NewLinear
// stores, per teacher, w[c] − w[0] and b[c] − b[0] for c ≥ 1, so class 0
// scores 0 and a two-class teacher votes 1 iff (w1−w0)·x + (b1−b0) > 0. Ties
// go to the lowest class index. A teacher that never predicts some classes
// (NewLinearSeen: they were absent from its training rows) is scored
// relative to the first class it predicts, and the others are left out of
// its argmax: their lines score −Inf, so they never take its vote and their
// weights never enter a difference (a huge negative bias subtracted from
// the others would round every score to one value in float32, and the tie
// would hand every vote to one class). A teacher that predicts one class
// only votes it on every row without being scored. A teacher whose two best scores are equal or within float32
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
// Two-class ensembles over rows of 64 to 1,024 features (column-major tiles
// from 128) take a certified low-precision path. Each score is first computed
// from low-precision copies of the weights and rows, and checked against a
// rigorous bound on its distance from the exact score, built from the norms
// of the weights, the row and their rounding errors (Cauchy–Schwarz) plus
// the float32 summation bounds. A teacher whose low-precision score clears
// the bound votes its sign, which is also the sign of every float32 sum of
// its score; the others are rescored in float32. The votes therefore obey
// the numerics above: they can differ from the other paths' only on
// near-ties, and are exact when the float32 arithmetic is (a certified vote
// is the exact score's sign, and a zero score is always rescored). The
// copies are 16-bit integers (AVX-512 VNNI, or AVX2): each teacher's
// weights and each row are scaled by a power of two and rounded to integers
// of at most bq bits, bq chosen from dim so that the 32-bit integer sums
// cannot overflow (11 bits at 384 features, 10 at 1,024), and summed
// exactly: vpdpwssd on AVX-512 VNNI, vpmaddwd and vpaddd on AVX2. About 2%
// of the votes at 384 features on random data are rescored, 7% at 1,024.
//
// Wider rows stay on the float32 kernel: the uncertain share grows with
// √dim (and with fewer integer bits), each rescoring costs dim, and at
// 2,048 features the integer path was slower than float32.
//
// Measured on a 2-core AMD EPYC (Zen 5, AVX-512 at full width) with one
// goroutine, in millions of rows per
// CPU-second of the voting thread (BenchmarkVotes, rows/cpu-s, median of 3
// runs), 250 teachers × 2 classes, each level forced in turn as the tests
// do (a level's two-class path falls back to its float32 kernel outside the
// ranges above):
//
//	features  layout        avx512int16  avx512  avx2int16  avx2
//	64        row-major     8.33         8.15    4.57       4.09
//	128       row-major     4.73         3.97    2.46       1.97
//	128       column-major  4.25         3.85    2.25       1.92
//	384       row-major     1.70         1.23    0.86       0.65
//	384       column-major  1.36         1.12    0.80       0.59
//	512       row-major     1.07         0.94    0.57       0.48
//	1024      row-major     0.48         0.49    0.28       0.25
//	1024      column-major  0.41         0.38    0.25       0.19
//
// On this core vpmaddwd on 256 bits issues once a cycle (measured), as many
// multiply-adds as two 256-bit FMAs, so the AVX2 integer path gains from its
// halved loads and the rows' prefetch, not from its arithmetic; cores that
// issue it twice a cycle can gain more. The integer kernels prefetch the
// next block's rows while the current one computes: rounding a row had
// stalled on its first read.
//
// The float32 kernels run at about 90% of the core's multiply-add peak, so
// blocking their loops for L1 cannot buy much; only fewer or cheaper
// multiply-adds can. The pure-Go path votes about 0.3 million rows/s at 64
// features.
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
