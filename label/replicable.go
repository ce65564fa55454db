package label

import (
	"math"
	"runtime"
	"sync"

	"github.com/pate-tool/pate/label/noise"
)

// Replicable makes a run replicable in the sense of Impagliazzo, Lei,
// Pitassi and Sorrell ("Reproducibility in learning", STOC 2022): two
// curators who hold different samples of the same population and the same
// secret Key release the same labels with high probability.
//
// All of the aggregation's randomness comes from Key, keyed by public row
// (row i's noise does not depend on the batch size, the other rows or the
// machine), and the noisy values are post-processed by the replicable
// rounding of the paper's rSTAT: a grid of cells of Width votes with a
// random offset (drawn per row from Key) replaces each noisy value by the
// midpoint of its cell. The threshold check compares the rounded noisy top
// vote with T; the argmax takes the class with the highest cell, ties broken
// by a random priority drawn from Key. Two curators whose vote counts on a
// row differ by Δ then disagree with probability at most about Δ/Width at
// each decision, whatever the counts: in effect the threshold and the argmax
// boundary move by a shared uniform offset.
//
// Privacy: the rounding is post-processing of the noisy values and the
// noise has the mechanism's distribution, independent of the data; the
// accounting is unchanged. The guarantee holds only against recipients who
// do not know Key (with it, the noise is known), and covers one release: two
// releases with the same Key share their noise, so the pair is not covered
// (see README, "--replicable").
type Replicable struct {
	Key []byte // the shared secret; never reported
	// Width is the rounding grid as a multiple of the noise's standard
	// deviation (σ1 for the threshold, σ2 or σ for the argmax, the Laplace
	// scale b for LNMax); 0 means DefaultReplicableWidth.
	Width float64
	Via   string // how the key was shared, for the report (never the key)
}

// DefaultReplicableWidth is the rounding grid of a replicable run, in units
// of the noise's standard deviation (see README for the measurements).
const DefaultReplicableWidth = 4.0

// validateReplicable checks a replicable run's parameters before any data
// is read.
func validateReplicable(cfg *Config) error {
	r := cfg.Replicable
	if r == nil {
		return nil
	}
	c := *r // the caller's value is not touched
	r, cfg.Replicable = &c, &c
	if len(r.Key) < 16 {
		return paramError("replicable", " needs a shared seed of at least 16 bytes, got %d", len(r.Key))
	}
	if r.Width == 0 {
		r.Width = DefaultReplicableWidth
	}
	if !(r.Width > 0 && r.Width <= 1e6) {
		return paramError("replicable-width", " must be in (0, 1e6], got %g", r.Width)
	}
	if len(cfg.Labels) > 1 {
		return paramError("replicable", " supports one %v column for now, got %d", ParamName("label"), len(cfg.Labels))
	}
	if cfg.Select == SelectUncertain {
		return paramError("replicable", " does not support %v uncertain (its queries are chosen in rounds, not keyed by row)", ParamName("select"))
	}
	if r.Via == "" {
		r.Via = "not stated"
	}
	return nil
}

// rounding is the replicable rounding of one run: grid widths in votes,
// and the shared key's cipher.
type rounding struct {
	check, answer int64 // Confident-GNMax threshold grid; argmax grid
	keyed         *noise.Keyed
}

// roundDraw is the shared randomness of one row's rounding.
type roundDraw struct {
	offCheck, offAnswer int64  // grid offsets in [0, width)
	tie                 uint64 // the row's tie-breaking priorities
}

// newRounding sets up the rounding of aggregator a with noise p, on a grid
// of width standard deviations, keyed by key (nil in tests that draw from
// their own sources).
func newRounding(a *aggregator, p MechanismParams, width float64, key []byte) (*rounding, error) {
	// The width in votes: width × the noise's standard deviation
	// (std·f), rounded up. A public parameter, not on the noise path.
	votes := func(name, s string, std float64) (int64, error) {
		_, f, err := parsePositive(name, s)
		if err != nil {
			return 0, err
		}
		return max(1, int64(math.Ceil(width*std*f))), nil
	}
	r := &rounding{}
	if key != nil {
		r.keyed = noise.NewKeyed(key)
	}
	m, ok := mechanismOf(a.kind).(argmaxMechanism)
	if !ok {
		return nil, badParam("replicable", " does not support %v %s", ParamName("mechanism"), a.kind)
	}
	var err error
	r.check, r.answer, err = m.grid(p, votes)
	return r, err
}

// draw draws a row's rounding from its keyed source, after its noise.
func (r *rounding) draw(src noise.Source) roundDraw {
	var d roundDraw
	if r.check > 0 {
		d.offCheck = int64(noise.UniformUint64(src, uint64(r.check)))
	}
	if r.answer > 0 {
		d.offAnswer = int64(noise.UniformUint64(src, uint64(r.answer)))
		d.tie = src.Uint64()
	}
	return d
}

// cell is the index of the grid cell [off + jW, off + (j+1)W) holding v.
func cell(v, off, w int64) int64 {
	d := v - off
	q := d / w
	if d%w != 0 && d < 0 {
		q--
	}
	return q
}

// passes is the rounded threshold check: the midpoint of the cell of the
// noisy top vote, off + jW + W/2, is at least T (in integers, doubled).
func (r *rounding) passes(noisyTop, threshold int64, d roundDraw) bool {
	j := cell(noisyTop, d.offCheck, r.check)
	return 2*(d.offCheck+j*r.check)+r.check >= 2*threshold
}

// argmax is the class whose noisy count has the highest cell; classes in
// the same cell are ordered by priorities drawn from the row's tie word.
func (r *rounding) argmax(counts []int32, z []int64, d roundDraw) int {
	best, bestCell, bestPri := 0, int64(math.MinInt64), uint64(0)
	for j, c := range counts {
		cj := cell(int64(c)+z[j], d.offAnswer, r.answer)
		pj := mix64(d.tie ^ uint64(j)*0x9e3779b97f4a7c15)
		if cj > bestCell || (cj == bestCell && pj > bestPri) {
			best, bestCell, bestPri = j, cj, pj
		}
	}
	return best
}

// mix64 is the SplitMix64 finaliser: it spreads one random word into
// independent-looking priorities, one per class.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// drawReplicable draws the noise and rounding of a batch's queries, each
// from its own row's keyed stream (stream number = public row index), in
// parallel over the cores: a row's draws depend on nothing else.
func (st *runState) drawReplicable(b *batch, classes int) {
	q := b.queryN
	if cap(b.zRep) < q {
		b.zRep = make([]roundDraw, q)
	}
	b.zRep = b.zRep[:q]
	r := st.agg.round
	workers := min(runtime.GOMAXPROCS(0), max(1, q/1024))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			check := make([]int64, 1)
			for i := lo; i < hi; i++ {
				row := b.first + int64(i)
				if b.sel != nil {
					row = b.first + int64(b.sel[i])
				}
				src := r.keyed.Stream(uint64(row))
				c := check[:0]
				if st.agg.check != nil {
					c = check
				}
				st.agg.noiseFor(src, c, b.zArg[i*classes:(i+1)*classes])
				if len(c) > 0 {
					b.zCheck[i] = c[0]
				}
				b.zRep[i] = r.draw(src)
			}
		}(w*q/workers, (w+1)*q/workers)
	}
	wg.Wait()
}
