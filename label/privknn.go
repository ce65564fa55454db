package label

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"strconv"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
	"github.com/pate-tool/pate/learners/kernel"
)

// private-knn (Zhu, Yu, Wang, "Private-kNN: Practical differential privacy
// for computer vision", CVPR 2020): for each query (a public row),
//
//  1. a Poisson subsample S of the sensitive rows: each row independently
//     with probability γ (public, --sample-rate), drawn afresh per query
//     from the run's secure (or seeded) source;
//  2. the labels of the k rows of S nearest to the query (squared
//     Euclidean distance in the public encoding: the encoder fitted on the
//     public head, or the embedding column it passes through, scaled by
//     public statistics) form the vote histogram;
//  3. the argmax of the histogram plus exact discrete Gaussian noise N_Z(0,
//     σ²) on every class is released (the engine's aggregator, as GNMax).
//
// Sensitivity. Neighbouring datasets differ in one row (add or remove, the
// relation Poisson subsampling amplifies under). For a fixed subsample,
// adding a row that lands in S either leaves the k nearest unchanged, or
// enters them and pushes the k-th one out (one vote moves between two
// classes: ℓ2 change √2), or, when S has fewer than k rows, adds a vote (ℓ2
// change 1). So the histogram's ℓ2 sensitivity is √2, as for GNMax's
// teachers, and one unsampled answer is ρ = 1/σ²-zCDP
// (rdp.DiscreteGaussianRho(2, σ, ·)).
//
// Accounting. The release is the sampled Gaussian mechanism with rate γ and
// noise multiplier z = σ/√2: its RDP at integer orders is the closed form
// of Mironov, Talwar, Zhang 2019 (rdp.SGMLogA). The run's budget is the
// same zCDP filter as every mechanism's, of budget ρ_B = RhoForEps(ε, δ),
// which converts to ε at the order λ* = rdp.ZCDPOrder(ρ_B, δ). Each answer
// is charged ρ_q = rdp.SGMRho(γ, z, A) with A = ⌈λ*⌉ (MechanismParams.
// MaxOrder): the smallest ρ with RDP(α) ≤ ρα at every order α ∈ [2, A].
// Then Σρ_q ≤ ρ_B gives RDP(λ*) ≤ ρ_B·λ* for the whole run, hence (ε, δ)
// by the same conversion at λ* (a Rényi filter at one order fixed before
// the run, Feldman & Zrnic 2021, in the units of the zCDP filter). Above A
// the charge does not hold: subsampling amplifies little there, and a
// claim at larger orders would waste the amplification. So the run needs
// --epsilon (A is fixed from it before the run), the realized spend is
// converted on orders ≤ A only, and pate audit checks that A covers the
// order of the claimed ρ. The ledger composes the run's ρ_B with other runs
// by the zCDP conversion; a total whose conversion order fell below 2 would
// not be covered (it takes a total ε of about 25 at δ = 1e-5).
//
// Sampling. The rate drawn is ⌊γ·2³²⌋/2³² ≤ γ (32 random bits per row,
// compared with an integer threshold: exact); the accountant charges γ,
// and the SGM bound grows with the rate, so the charge is an upper bound.
//
// Privacy units. With --privacy-unit a unit may hold several rows, which
// could all land in a row subsample and move up to min(m, k) votes. So the
// subsample is of units instead: each unit independently with the same
// rate (32 random bits per unit against the same threshold), and from each
// sampled unit one of its usable rows (a declared class; a null unit drops
// the row), chosen uniformly with fresh bits of the same stream (Lemire's
// exact method). A unit's draws depend only on its own rows and the public
// randomness. Adding or removing one unit adds or removes at most one row
// of S, whose effect on the k nearest is the one-row case above: the
// sensitivity stays √2, and a query is the same sampled Gaussian (the
// unit's chosen row is a mixture over its rows, and the Rényi divergence
// bound of the sampled mechanism holds for each, hence for the mixture by
// joint convexity), charged the same ρ. Without --privacy-unit every row
// is its own unit and the row path below draws exactly as before.

// MechanismPrivateKNN is Private-kNN (Zhu, Yu, Wang 2020).
const MechanismPrivateKNN = "private-knn"

// Defaults of private-knn's public parameters. k = 100 neighbours give
// votes wide enough to rise above the noise a budget of ε = 1 leaves for
// a thousand queries (σ ≈ 19 on Adult at γ = 0.1: labels 0.84 with a
// logistic student; with k = 10, 0.76).
const (
	DefaultKNNK       = 100
	DefaultSampleRate = "0.1"
)

// KNNVoteMargin is the default plan's rule: it puts as many queries as
// keep the noise σ at most k/KNNVoteMargin, so that a vote won by half of
// the k neighbours clears it by 2.5 σ.
const KNNVoteMargin = 5

// streamPrivateKNN is the noise stream of a seeded run's subsamples, plus
// the batch's first row << 8 (like streamAggregate).
const streamPrivateKNN = 21

// knnSens2 is the squared ℓ2 sensitivity of a k-neighbour vote histogram.
const knnSens2 = 2

type privateKNNMechanism struct{}

func (privateKNNMechanism) Name() string { return MechanismPrivateKNN }

func (privateKNNMechanism) Noise() string {
	return gaussianNoise + " on every class of the k nearest neighbours' votes among a Poisson subsample of the sensitive rows, " +
		"drawn per query (rate ⌊γ·2³²⌋/2³² ≤ γ, 32 random bits per row); each answer is charged the sampled Gaussian's RDP " +
		"(Mironov, Talwar, Zhang 2019; ℓ2 sensitivity √2, add or remove one row) on the Rényi orders 2..max_order as a ρ, " +
		"max_order being the order at which the budget's ρ converts to its ε"
}

// unitNoise is Noise with --privacy-unit: units are sampled, one row each.
func (privateKNNMechanism) unitNoise() string {
	return gaussianNoise + " on every class of the k nearest neighbours' votes among a Poisson subsample of the privacy units, " +
		"drawn per query (rate ⌊γ·2³²⌋/2³² ≤ γ, 32 random bits per unit), each sampled unit taking part with one of its rows, " +
		"chosen uniformly at random; each answer is charged the sampled Gaussian's RDP " +
		"(Mironov, Talwar, Zhang 2019; ℓ2 sensitivity √2, add or remove one unit, which adds or removes at most one sampled row) " +
		"on the Rényi orders 2..max_order as a ρ, max_order being the order at which the budget's ρ converts to its ε"
}

func (m privateKNNMechanism) validate(cfg *Config) error {
	switch {
	case len(cfg.Labels) > 1:
		return paramError("mechanism", " %s labels one %v column for now, got %d", cfg.Mechanism, ParamName("label"), len(cfg.Labels))
	case cfg.Replicable != nil:
		return paramError("replicable", " works with confident-gnmax, gnmax and lnmax, not %v %s", ParamName("mechanism"), cfg.Mechanism)
	case !(cfg.Epsilon > 0):
		return paramError("mechanism", " %s needs %v: its charge holds on the Rényi orders up to the one its budget converts at, fixed before the run", cfg.Mechanism, ParamName("epsilon"))
	case cfg.Classes == nil:
		return paramError("mechanism", " %s needs %v: the vote histogram's classes must be public", cfg.Mechanism, ParamName("classes"))
	case cfg.Select == SelectUncertain:
		return paramError("select", " uncertain is not supported with %v %s", ParamName("mechanism"), cfg.Mechanism)
	}
	p := &cfg.Params
	if p.Threshold != 0 || p.Sigma1 != "" || p.Sigma2 != "" || p.LaplaceScale != "" || p.EMEpsilon != "" || p.Bins != 0 ||
		p.SubsetRate != "" || p.Gamma != "" || p.SVTEpsilon0 != "" || p.SVTCutoff != 0 || p.SVTThreshold != 0 {
		return paramError("mechanism", " %s takes %v, %v and %v: the other mechanisms' noise flags do not apply", cfg.Mechanism,
			ParamName("sigma"), ParamName("knn-k"), ParamName("sample-rate"))
	}
	return m.setOrder(p, cfg.Epsilon, cfg.Delta)
}

// setOrder fills in the defaults of p, checks them, and sets the orders
// the charge holds on to reach the one at which the filter of (ε, δ)
// converts.
func (m privateKNNMechanism) setOrder(p *MechanismParams, eps, delta float64) error {
	m.complete(p, 0)
	if p.KNNK < 1 {
		return paramError("knn-k", " must be at least 1, got %d", p.KNNK)
	}
	if _, err := knnRate(p.SampleRate); err != nil {
		return invalid("%w", err)
	}
	if p.Sigma != "" {
		if _, _, err := parsePositive("sigma", p.Sigma); err != nil {
			return invalid("%w", err)
		}
	}
	order, err := knnOrder(eps, delta)
	if err != nil {
		return err
	}
	p.MaxOrder = max(p.MaxOrder, order)
	return nil
}

// knnRate parses γ ∈ (0, 1].
func knnRate(s string) (float64, error) {
	r, g, err := parsePositive("sample-rate", s)
	if err != nil {
		return 0, err
	}
	if r.Cmp(big.NewRat(1, 1)) > 0 {
		return 0, badParam("sample-rate", " must be at most 1, got %s", s)
	}
	return g, nil
}

// knnOrder is ⌈λ*⌉, λ* the order at which the filter of (ε, δ) converts.
func knnOrder(eps, delta float64) (int, error) {
	l := rdp.ZCDPOrder(rdp.RhoForEps(eps, delta), delta)
	if !(l >= 2) {
		return 0, paramError("epsilon", " %g at δ = %g converts at the Rényi order %.3g: %s charges orders ≥ 2 only; use a smaller ε", eps, delta, l, MechanismPrivateKNN)
	}
	o := int(math.Ceil(l))
	if o > rdp.SGMMaxOrder {
		return 0, paramError("epsilon", " %g at δ = %g converts at the Rényi order %.4g, above the %d %s charges", eps, delta, l, rdp.SGMMaxOrder, MechanismPrivateKNN)
	}
	return o, nil
}

// knnRho is the zCDP charge of one answer with the parameters p: the
// sampled Gaussian's RDP on the orders 2..p.MaxOrder, as a ρ.
func knnRho(p MechanismParams, sigma float64, classes int) (float64, error) {
	g, err := knnRate(p.SampleRate)
	if err != nil {
		return 0, err
	}
	if p.MaxOrder < 2 {
		return 0, badParam("max-order", " %d: private-knn's charge needs the orders it holds on (2 or more)", p.MaxOrder)
	}
	// z = σ/Δ from the unsampled ρ, so that it follows GNMax's.
	z := 1 / math.Sqrt(2*rdp.DiscreteGaussianRho(knnSens2, sigma, classes))
	r, err := rdp.SGMRho(g, z, p.MaxOrder)
	if err != nil {
		return 0, badParam("sigma", ": %v", err)
	}
	return r, nil
}

func (privateKNNMechanism) build(a *aggregator, p MechanismParams) error {
	r, s, err := parsePositive("sigma", p.Sigma)
	if err != nil {
		return err
	}
	dg, err := noise.NewDiscreteGaussian(r)
	if err != nil {
		return badParam("sigma", ": %v", err)
	}
	if p.KNNK < 1 {
		return badParam("knn-k", " must be at least 1, got %d", p.KNNK)
	}
	if a.rhoAnswer, err = knnRho(p, s, a.classes); err != nil {
		return err
	}
	a.answer = dg
	return nil
}

func (privateKNNMechanism) plan(rho float64, n int64, p *MechanismParams, _, _ float64) error {
	if p.Sigma != "" {
		return nil
	}
	g, err := knnRate(p.SampleRate)
	if err != nil {
		return err
	}
	s, err := rdp.PlanSGMRho(rho, int(n), g, knnSens2, p.MaxOrder)
	if err != nil {
		return err
	}
	p.Sigma = decimal(s)
	return nil
}

// defaultPlan: the queries, the first rows of the public data, are as
// many as keep the planned σ within k/KNNVoteMargin (at most queryCap),
// and the default student, trained on their answers, labels the others.
// With an explicit σ, or without a budget, every row is a query in order.
func (m privateKNNMechanism) defaultPlan(in PlanInputs, stream RunPlan) RunPlan {
	p := in.Params
	if p.Sigma != "" || !(in.Epsilon > 0) {
		return stream
	}
	if err := m.setOrder(&p, in.Epsilon, in.Delta); err != nil {
		return stream // validate names the mistake
	}
	g, err := knnRate(p.SampleRate)
	if err != nil {
		return stream
	}
	rho := defaultQueryRho(in)
	within := func(n int64) bool {
		s, err := rdp.PlanSGMRho(rho, int(n), g, knnSens2, p.MaxOrder)
		return err == nil && s <= float64(p.KNNK)/KNNVoteMargin
	}
	lo, hi := int64(0), queryCap(in) // within(lo) or lo = 0; hi is the cap
	if within(hi) {
		lo = hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if within(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	n := max(lo, 1)
	return RunPlan{
		Mechanism: stream.Mechanism, Student: DefaultStudent, Select: SelectFirst, MaxQueries: n,
		Why: fmt.Sprintf("default: the neighbours answer %d queries (as many as keep σ ≤ k/%d = %g at γ = %s, at most half "+
			"the public rows); a %s student trained on them labels every other row", n, KNNVoteMargin,
			float64(p.KNNK)/KNNVoteMargin, p.SampleRate, DefaultStudent),
	}
}

// noiseBeyondVotes weighs the noise an answer draws against the k
// neighbours' votes (its charge, subsampled, is that of a larger σ
// unsampled: not the noise the votes compete with).
func (privateKNNMechanism) noiseBeyondVotes(p MechanismParams) (float64, int, bool) {
	sigma, err := strconv.ParseFloat(p.Sigma, 64)
	if err != nil {
		return 0, p.KNNK, false
	}
	return sigma, p.KNNK, sigma > float64(p.KNNK)
}

func (privateKNNMechanism) missing(p MechanismParams) []string {
	if p.Sigma == "" {
		return []string{"sigma"}
	}
	return nil
}

func (privateKNNMechanism) complete(p *MechanismParams, _ int) {
	if p.KNNK == 0 {
		p.KNNK = DefaultKNNK
	}
	if p.SampleRate == "" {
		p.SampleRate = DefaultSampleRate
	}
}

func (privateKNNMechanism) grid(MechanismParams, gridVotes) (int64, int64, error) {
	return 0, 0, fmt.Errorf("%s has no replicable rounding", MechanismPrivateKNN)
}

func (privateKNNMechanism) checksThreshold() bool { return false }

func (privateKNNMechanism) pureAnswers() bool { return false }

// accounting: pate analyze's PATE 2018 analysis does not apply.
func (privateKNNMechanism) accounting() rdp.Accounting { return rdp.NoAccounting }

func (privateKNNMechanism) describeNoise(p MechanismParams) string {
	return fmt.Sprintf("σ = %s, k = %d, γ = %s", p.Sigma, p.KNNK, p.SampleRate)
}

// maxOrder is the largest Rényi order its charge holds at.
func (privateKNNMechanism) maxOrder(p MechanismParams) int { return p.MaxOrder }

// auditOrders checks that the orders the charge holds on reach the order at
// which the claimed ρ converts to the claimed ε.
func (privateKNNMechanism) auditOrders(rep *Report, res *AuditResult, deltaConv float64) {
	want := math.Ceil(rdp.ZCDPOrder(float64(rep.Guarantee.Rho), deltaConv))
	got := float64(rep.Params.MaxOrder)
	addCheck(res, "private-knn charge covers the claim's Rényi order", got, want, got >= want,
		"each answer is charged the sampled Gaussian's RDP on the orders 2..max_order as a ρ; the claim converts ρ at this order")
}

func (privateKNNMechanism) learnerName() string {
	return "k nearest neighbours among a Poisson subsample of the sensitive rows, per query (public encoding)"
}

func (privateKNNMechanism) unitLearnerName() string {
	return "k nearest neighbours among a Poisson subsample of the privacy units, one row of each, per query (public encoding)"
}

// learner keeps the encoded sensitive rows with a declared class (a row
// without one votes for nothing: dropping it is a map of that row alone).
func (privateKNNMechanism) learner(l *Labeler, X *learners.Matrix, y []int32, classes int, _ *learners.Encoder, _ []arrow.Record) (voter, error) {
	v, err := newKNNVoter(l.cfg.Params, X, classes)
	if err != nil {
		return nil, err
	}
	for i, c := range y {
		if c >= 0 {
			v.add(X.Row(i), c)
		}
	}
	return v, nil
}

// unitLearner keeps the usable rows (a declared class, a unit) grouped by
// unit, in the order of the units' first rows and of the rows within a
// unit; a unit without a usable row has nothing to vote with and is left
// out (a map of that unit alone).
func (privateKNNMechanism) unitLearner(l *Labeler, X *learners.Matrix, y, units []int32, classes int) (voter, error) {
	v, err := newKNNVoter(l.cfg.Params, X, classes)
	if err != nil {
		return nil, err
	}
	var count []int32 // usable rows of each unit
	for i, c := range y {
		if u := units[i]; c >= 0 && u >= 0 {
			if int(u) >= len(count) {
				count = append(count, make([]int32, int(u)+1-len(count))...)
			}
			count[u]++
		}
	}
	// next[u]: where unit u's next row goes, among the kept units' rows.
	next := make([]int32, len(count))
	v.start = make([]int32, 1, len(count)+1)
	var n int32
	for u, c := range count {
		next[u] = n
		if c > 0 {
			n += c
			v.start = append(v.start, n)
		}
	}
	v.x = v.x[:int(n)*v.dim]
	v.y, v.norm = make([]int32, n), make([]float32, n)
	for i, c := range y {
		u := units[i]
		if c < 0 || u < 0 {
			continue
		}
		j := next[u]
		next[u]++
		row := X.Row(i)
		copy(v.x[int(j)*v.dim:], row)
		v.y[j], v.norm[j] = c, kernel.Dot(row, row)
	}
	return v, nil
}

// newKNNVoter is an empty voter with the parameters p, room for the rows
// of X.
func newKNNVoter(p MechanismParams, X *learners.Matrix, classes int) (*knnVoter, error) {
	g, err := knnRate(p.SampleRate)
	if err != nil {
		return nil, err
	}
	v := &knnVoter{k: p.KNNK, classes: classes, dim: X.Cols, thr: uint64(math.Floor(g * (1 << 32)))}
	v.x = make([]float32, 0, len(X.Data))
	return v, nil
}

// add appends one usable row of class c.
func (v *knnVoter) add(row []float32, c int32) {
	v.x = append(v.x, row...)
	v.y = append(v.y, c)
	v.norm = append(v.norm, kernel.Dot(row, row))
}

// knnVoter answers with the vote histogram of the k nearest rows of a
// fresh Poisson subsample per query: of the rows, or with a privacy unit
// (start not nil) of the units, one row of each.
type knnVoter struct {
	x          []float32 // sensitive rows, row-major, dim wide
	y          []int32
	norm       []float32 // ‖x_i‖²
	k, classes int
	dim        int
	thr        uint64 // keep a row (a unit) when 32 random bits are < thr
	src        noise.Source
	// start: unit u's rows are start[u] ≤ i < start[u+1] (nil: every row
	// is its own unit).
	start []int32
}

// startBatch gives each batch's subsamples their own noise stream.
func (v *knnVoter) startBatch(l *Labeler, first int64) {
	v.src = l.source(streamPrivateKNN + uint64(first)<<8)
}

// knnChunk is how many queries share one keyed subsample stream.
const knnChunk = 16

// Votes fills counts with the k-neighbour histogram of every row of x. The
// rows are split into chunks of knnChunk, each drawing its subsamples from
// an AES-CTR stream keyed by 256 bits of the batch's stream (drawn in
// order, so a seeded run is reproducible), and the chunks run in parallel.
func (v *knnVoter) Votes(x *learners.Matrix, counts []int32) {
	clear(counts[:x.Rows*v.classes])
	if v.src == nil { // no batch started (a direct call): a stream of its own
		v.src = noise.NewCryptoSource()
	}
	chunks := (x.Rows + knnChunk - 1) / knnChunk
	keys := make([]*noise.Keyed, chunks)
	var key [32]byte
	for c := range keys {
		for j := 0; j < 4; j++ {
			binary.LittleEndian.PutUint64(key[8*j:], v.src.Uint64())
		}
		keys[c] = noise.NewKeyed(key[:])
	}
	clear(key[:])
	workers := min(runtime.GOMAXPROCS(0), chunks)
	next := make(chan int, chunks)
	for c := 0; c < chunks; c++ {
		next <- c
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newKNNScratch(v.k)
			for c := range next {
				src := keys[c].Stream(0)
				for i := c * knnChunk; i < min(x.Rows, (c+1)*knnChunk); i++ {
					v.vote(x.Row(i), src, s, counts[i*v.classes:(i+1)*v.classes])
				}
			}
		}()
	}
	wg.Wait()
}

// knnScratch is one worker's buffers: the subsample and a max-heap of the
// k nearest so far.
type knnScratch struct {
	sel  []int32
	dist []float32
	idx  []int32
}

func newKNNScratch(k int) *knnScratch {
	return &knnScratch{dist: make([]float32, 0, k), idx: make([]int32, 0, k)}
}

// vote draws one Poisson subsample and adds its k nearest rows' labels to
// row.
func (v *knnVoter) vote(q []float32, src noise.Source, s *knnScratch, row []int32) {
	if v.start != nil {
		s.sel = v.sampleUnits(src, s.sel[:0])
	} else {
		n := len(v.y)
		sel := s.sel[:0]
		for i := 0; i < n; i += 2 {
			w := src.Uint64()
			if w&0xffffffff < v.thr {
				sel = append(sel, int32(i))
			}
			if i+1 < n && w>>32 < v.thr {
				sel = append(sel, int32(i+1))
			}
		}
		s.sel = sel
	}
	v.nearest(q, s, row)
}

// sampleUnits appends to sel one row of each unit of a Poisson subsample of
// the units: unit u is kept when its 32 random bits (the low, then the high
// half of a 64-bit draw, as the row path's rows) are below thr, and then
// gives one of its rows, uniform, from the draws that follow. The draws of
// the units before u are the same whatever u and the units after it hold.
func (v *knnVoter) sampleUnits(src noise.Source, sel []int32) []int32 {
	units := len(v.start) - 1
	var w uint64
	for u := 0; u < units; u++ {
		var bits uint64
		if u&1 == 0 {
			w = src.Uint64()
			bits = w & 0xffffffff
		} else {
			bits = w >> 32
		}
		if bits >= v.thr {
			continue
		}
		lo, m := v.start[u], v.start[u+1]-v.start[u]
		if m > 1 {
			lo += int32(noise.UniformUint64(src, uint64(m)))
		}
		sel = append(sel, lo)
	}
	return sel
}

// nearest adds to row the labels of the k rows of the subsample s.sel
// nearest to q.
func (v *knnVoter) nearest(q []float32, s *knnScratch, row []int32) {
	sel := s.sel
	s.dist, s.idx = s.dist[:0], s.idx[:0]
	d := v.dim
	for _, j := range sel {
		// ‖q − x_j‖² − ‖q‖²: the same order for every j.
		dist := v.norm[j] - 2*kernel.Dot(q, v.x[int(j)*d:int(j+1)*d])
		if dist != dist { // NaN: the row is unusable for this query
			continue
		}
		s.push(dist, j, v.k)
	}
	for _, j := range s.idx {
		row[v.y[j]]++
	}
}

// push keeps the k smallest (dist, idx) pairs in a max-heap; ties go to the
// lower row index, so the result does not depend on the order of pushes.
func (s *knnScratch) push(dist float32, idx int32, k int) {
	less := func(a, b int) bool { // a above b in the max-heap
		if s.dist[a] != s.dist[b] {
			return s.dist[a] > s.dist[b]
		}
		return s.idx[a] > s.idx[b]
	}
	swap := func(a, b int) {
		s.dist[a], s.dist[b] = s.dist[b], s.dist[a]
		s.idx[a], s.idx[b] = s.idx[b], s.idx[a]
	}
	if len(s.idx) < k {
		s.dist, s.idx = append(s.dist, dist), append(s.idx, idx)
		for c := len(s.idx) - 1; c > 0; {
			p := (c - 1) / 2
			if !less(c, p) {
				break
			}
			swap(c, p)
			c = p
		}
		return
	}
	if dist > s.dist[0] || dist == s.dist[0] && idx > s.idx[0] {
		return
	}
	s.dist[0], s.idx[0] = dist, idx
	for p := 0; ; {
		l, r, m := 2*p+1, 2*p+2, p
		if l < k && less(l, m) {
			m = l
		}
		if r < k && less(r, m) {
			m = r
		}
		if m == p {
			break
		}
		swap(p, m)
		p = m
	}
}
