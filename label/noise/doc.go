// Package noise provides exact samplers of integer-valued noise for the
// private labelling engine: the discrete Gaussian and the discrete Laplace
// distributions, and the Bernoulli(exp(−γ)) sampler they are built on.
//
// The algorithms are those of Canonne, Kamath and Steinke, "The Discrete
// Gaussian for Differential Privacy" (NeurIPS 2020; arXiv:2004.00010),
// Algorithms 1, 2 and 3. Every parameter is a rational number (*big.Rat) and
// every step uses integer arithmetic on uniformly random bits, so the samples
// follow the stated distributions exactly.
//
// Why no float64: a sampler that computes with floating point (for example
// by inverting a CDF or scaling a uniform float) produces a distribution with
// holes and rounding artefacts; Mironov ("On Significance of the Least
// Significant Bits for Differential Privacy", CCS 2012) showed that such
// artefacts can reveal the un-noised value and void the privacy guarantee.
// Vote counts are integers, so integer noise sampled exactly keeps the
// guarantee proved for the ideal distribution (DESIGN.md, invariant 5).
//
// Randomness comes from a [Source]: [NewCryptoSource] reads crypto/rand, and
// [NewSeededSource] gives a deterministic AES-256-CTR keystream for tests and
// reproducible runs (a seeded run is reproducible by anyone who knows the
// seed, and must say so). Sources are not safe for concurrent use; samplers
// are immutable and may be shared, each goroutine bringing its own Source.
//
// Each sampler has a fast path in uint64 arithmetic, used whenever the
// intermediate numerators and denominators fit (for instance σ = 40 or
// σ = 6.23), and a math/big path that gives the same distribution otherwise.
// On the fast path the Bernoulli(exp(−x)) steps of Algorithms 2 and 3 are
// drawn by lazy comparison of a uniform X, a few random bits at a time,
// against the binary digits of exp(−x): the first 64 from tables built with
// the sampler from rigorous integer intervals, later ones computed exactly
// when needed (lazy.go). This draws the same distributions as Algorithm 1
// with a fraction of its random draws and arithmetic (σ = 40, crypto source:
// about 2.4× the samples per second, BenchmarkDiscreteGaussianSigma40).
// The samplers' output streams for a given seed are not those of versions
// before the lazy tables.
package noise
