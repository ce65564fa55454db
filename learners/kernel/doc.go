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
// On AMD CPUs with AVX512_BF16, two-class ensembles over rows of 64 to
// 1,024 features (column-major tiles from 128) take a third path: scores
// from bfloat16 copies of the weights and rows (vdpbf16ps, twice the
// multiply-adds per cycle of vfmadd on Zen 4), each checked against a
// rigorous bound on its distance from the exact score, built from the norms
// of the weights, the row and their bf16 rounding errors (Cauchy–Schwarz)
// plus the float32 summation bounds. A teacher whose bf16 score clears the
// bound votes its sign, which is also the sign of every float32 sum of its
// score; the others (about 5% of the votes at 384 features on random data,
// 9% at 1,024) are rescored in float32. The votes therefore obey the
// numerics above: they can differ from the other paths' only on near-ties,
// and are exact when the float32 arithmetic is (a certified vote is the
// exact score's sign, and a zero score is always rescored). Wider rows stay
// on the float32 kernel: the uncertain share grows with √dim and each
// rescoring costs dim, and at 2,048 features bf16 gained only about 10%.
//
// Measured on this project's 2-core AMD EPYC (Zen 4) with one goroutine, in
// rows per CPU-second of the voting thread (BenchmarkVotes, rows/cpu-s,
// median of 5 runs alternating with the previous kernel; load average 1–3
// from other builds, under which wall-time rows/s varied up to twofold while
// these stayed within a few percent), 250 teachers × 2 classes:
//
//	features  layout        AVX-512  AVX2   bf16 (ratio to AVX-512)
//	64        row-major     3.3M     3.2M   4.3M  (1.33×)
//	128       row-major     1.6M     1.5M   2.4M  (1.48×)
//	128       column-major  1.5M     1.6M   1.9M  (1.32×)
//	384       row-major     0.55M    0.54M  0.82M (1.50×)
//	384       column-major  0.48M    0.46M  0.63M (1.31×)
//	512       row-major     0.43M    0.41M  0.59M (1.39×)
//	1024      row-major     0.20M    0.21M  0.27M (1.39×)
//	1024      column-major  0.18M    0.15M  0.22M (1.21×)
//
// The float32 kernels run at about 90% of the core's multiply-add peak (a
// register-only loop reaches about 58 G multiply-adds/s, 16 per cycle: Zen 4
// executes a 512-bit FMA as two 256-bit halves, so AVX-512 and AVX2 share
// that peak), 87% at 1,024 features, so blocking their loops for L1 cannot
// buy much; only fewer or cheaper multiply-adds can. The pure-Go path votes
// about 0.3 million rows/s at 64 features.
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
