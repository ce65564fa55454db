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
package noise
