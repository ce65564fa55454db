package label

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"
	"golang.org/x/sync/errgroup"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// teacherData is what training the teachers tells the rest of the run.
// classes, classesSource and discovery are the first label column's;
// discoveryRho and discoveryDelta are the totals over the label columns.
type teacherData struct {
	classes        *classSet
	classesSource  string
	discovery      *ClassDiscovery
	discoveryRho   float64
	discoveryDelta float64

	labels []*labelData // one per label column (New); nil in aggregate mode
}

// labelData is one label column's class set, its private discovery and its
// ensemble: one model per teacher, trained on the teacher's partition.
type labelData struct {
	name           string
	field          arrow.Field
	classes        *classSet
	classesSource  string
	discovery      *ClassDiscovery
	discoveryRho   float64
	discoveryDelta float64
	ens            *learners.Ensemble

	// Set by prepareLabels (multi-label runs).
	weight     float64 // share of the budget
	rhoPlanned float64 // the ρ its noise was planned for
	params     MechanismParams
	agg        *aggregator
}

// Share of the budget's ρ and of δ spent on discovering the class set when
// it is not declared with --classes (the ρ share when the run has no
// noisy count to size it on: see DiscoveryShare).
const (
	discoveryRhoShare   = 0.02
	discoveryDeltaShare = 0.1
	discoverySigmaFree  = 10 // σ of the discovery when the run has no budget filter
)

// readAll reads every batch of r; on error it releases what it read.
func readAll(ctx context.Context, r RecordReader) ([]arrow.Record, error) {
	recs, _, err := readRows(ctx, r, math.MaxInt)
	if err != nil {
		releaseAll(recs)
		return nil, err
	}
	return recs, nil
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// trainTeachers fixes the class sets from the sensitive batches recs,
// partitions their privacy units over the teachers and trains one model per
// (label column, teacher). The caller keeps ownership of recs.
func (l *Labeler) trainTeachers(ctx context.Context, recs []arrow.Record, enc *learners.Encoder) (*learners.Ensemble, *teacherData, error) {
	s, err := l.ingestRecords(recs, enc)
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	return l.trainSpilled(ctx, s, enc)
}

// trainSpilled is trainTeachers on the rows of a spill.
func (l *Labeler) trainSpilled(ctx context.Context, s *spill, enc *learners.Encoder) (*learners.Ensemble, *teacherData, error) {
	cfg := &l.cfg
	if cfg.Diagnose != nil {
		// Rows without a label are dropped from that label column's
		// training; how many there are is a statistic of the data.
		for j, lf := range l.labelFields {
			if n := s.nulls[j]; n > 0 {
				cfg.diagnose("%s: %d rows with a null label %q were dropped", cfg.sens(), n, lf.Name)
			}
		}
		if s.dropped > 0 {
			cfg.diagnose("%s: %d rows with a null privacy unit (%q) were dropped", cfg.sens(), s.dropped, cfg.PrivacyUnit)
		}
	}
	// A label column without a usable value is not an error either: with
	// --classes its teachers all vote the fixed class, and without them the
	// private class discovery (a charged test) is what refuses the run.
	for j, lf := range l.labelFields {
		if s.dicts[j].usable == 0 {
			cfg.diagnose("%s: the label column %q has no usable value", cfg.sens(), lf.Name)
		}
	}
	if cfg.Choose && cfg.Classes == nil {
		// The chooser's count first: the class discovery's share of the
		// budget is a public rule on it (DiscoveryShare).
		if err := validateChoice(cfg); err != nil {
			return nil, nil, err
		}
		if err := l.releaseCount(int64(s.total), DiscoveryDelta(cfg.Delta, false)); err != nil {
			return nil, nil, err
		}
	}
	td, err := l.classSets(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Choose { // PATE or dp-logreg, by a noisy count (choose.go)
		if switched, err := l.choose(int64(s.total), td, enc.Dim(), oneHotFeatures(enc)); err != nil || switched {
			return nil, td, spentBefore(err, td.discoveryRho)
		}
	}
	// From here on a failure comes after the class discovery: it says
	// what the discovery spent (the ledger charges a failed run its
	// maximum whatever it says).
	if err := l.fitTeachers(ctx, td, s); err != nil {
		return nil, nil, spentBefore(err, td.discoveryRho)
	}
	return td.labels[0].ens, td, nil
}

// identityPart is the number of rows of a batch identified by one task.
const identityPart = 4096

// classSets fixes each label column's class set: declared (public) or
// released privately.
func (l *Labeler) classSets(ctx context.Context, s *spill) (*teacherData, error) {
	cfg := &l.cfg
	td := &teacherData{}
	var counts []map[string]int64
	if cfg.Classes == nil {
		var err error
		if counts, err = l.unitLabelCounts(ctx, s); err != nil {
			return nil, err
		}
	}
	for j, lf := range l.labelFields {
		ld := &labelData{name: lf.Name, field: lf}
		if cfg.Classes != nil {
			var err error
			ld.classes, err = newClassSet(lf.Type, cfg.Classes)
			if err != nil {
				return nil, paramError("classes", ": %v", err)
			}
			ld.classesSource = "declared with --classes"
		} else if err := l.discoverClasses(ld, j, counts[j]); err != nil {
			// The refusal reveals the discoveries run so far: charge them.
			return nil, spentBefore(err, td.discoveryRho+ld.discoveryRho)
		}
		td.labels = append(td.labels, ld)
		td.discoveryRho += ld.discoveryRho
		td.discoveryDelta += ld.discoveryDelta
	}
	td.classes, td.classesSource, td.discovery = td.labels[0].classes, td.labels[0].classesSource, td.labels[0].discovery
	return td, nil
}

// unitLabelCounts counts, per label column, the privacy units whose most
// frequent label is each value (ties to the first value in class order),
// or the rows of each value when rows are the units: what the private
// class discovery releases. A unit's rows are all in one bucket of the
// spill, which is read a bucket at a time.
func (l *Labeler) unitLabelCounts(ctx context.Context, s *spill) ([]map[string]int64, error) {
	type unitLabel struct {
		id   [32]byte
		code uint32
	}
	counts := make([]map[string]int64, s.nl)
	rank := make([][]int, s.nl) // dictionary code (less one) → position in class order
	for j, lf := range l.labelFields {
		counts[j] = make(map[string]int64)
		vals := slices.Clone(s.dicts[j].values)
		sortClassValues(lf.Type, vals)
		pos := make(map[string]int, len(vals))
		for i, v := range vals {
			pos[v] = i
		}
		rank[j] = make([]int, len(vals))
		for c, v := range s.dicts[j].values {
			rank[j][c] = pos[v]
		}
	}
	var buf, scratch []byte
	var pairs []unitLabel
	// Rows are the units when no --privacy-unit is given: each counts,
	// identical rows too. Their ids are hashes of their content, which a
	// frequency table's repeated rows share, and counting ids made the
	// classes of such tables (titanic: 24 distinct rows of 1,467) vanish.
	// One row added or removed moves one count by one either way.
	rowUnits := l.cfg.PrivacyUnit == ""
	for b := range spillBuckets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if buf, err = s.bucket(b, &scratch); err != nil {
			return nil, fmt.Errorf("%s: %w", l.cfg.sens(), err)
		}
		for j := range s.nl {
			if rowUnits {
				for o := 0; o < len(buf); o += s.recSize {
					r := spillRec(buf[o : o+s.recSize])
					if c := r.code(j); c != 0 && !r.dropped() {
						counts[j][s.dicts[j].values[c-1]]++
					}
				}
				continue
			}
			pairs = pairs[:0]
			for o := 0; o < len(buf); o += s.recSize {
				r := spillRec(buf[o : o+s.recSize])
				if c := r.code(j); c != 0 && !r.dropped() {
					pairs = append(pairs, unitLabel{r.id(), c})
				}
			}
			slices.SortFunc(pairs, func(a, b unitLabel) int {
				if c := bytes.Compare(a.id[:], b.id[:]); c != 0 {
					return c
				}
				return int(a.code) - int(b.code)
			})
			for u := 0; u < len(pairs); {
				best, bestN := uint32(0), 0
				v := u
				for v < len(pairs) && pairs[v].id == pairs[u].id {
					w := v
					for w < len(pairs) && pairs[w].id == pairs[u].id && pairs[w].code == pairs[v].code {
						w++
					}
					c := pairs[v].code
					if n := w - v; n > bestN || n == bestN && rank[j][c-1] < rank[j][best-1] {
						best, bestN = c, n
					}
					v = w
				}
				counts[j][s.dicts[j].values[best-1]]++
				u = v
			}
		}
	}
	return counts, nil
}

// fitTeachers trains one model per (label column, teacher), one goroutine
// per core, and stacks each column's models into its ensemble. The spill is
// read a bucket at a time, in order; a teacher (a range of the units' keyed
// hash) is trained as soon as its last bucket is read, so that only a few
// teachers' rows are in memory at once.
//
// Fewer units than teachers is not an error: whether the run goes ahead
// must not depend on the number of units (k units would release and k−1
// abort). Teachers without rows vote the fixed class (constModel); how many
// there are is a not-private diagnostic.
func (l *Labeler) fitTeachers(ctx context.Context, td *teacherData, s *spill) error {
	cfg := &l.cfg
	nl, k, dim := len(td.labels), cfg.Teachers, s.dim
	models := make([][]learners.Model, nl)
	classOf := make([][]int32, nl) // per label column: dictionary code → class index, -1 if none
	for j, ld := range td.labels {
		models[j] = make([]learners.Model, k)
		classOf[j] = make([]int32, len(s.dicts[j].values)+1)
		classOf[j][0] = -1
		for c, v := range s.dicts[j].values {
			ci, ok := ld.classes.index[v]
			if !ok { // a class the public set does not have: it cannot be voted for
				ci = -1
			}
			classOf[j][c+1] = int32(ci)
		}
	}
	type job struct {
		t    int
		recs []byte
	}
	// A teacher's rows are in memory twice while it trains (its records,
	// then its matrix): as many teachers train at once as the cores allow
	// and the budget holds, one at least.
	perTeacher := 2 * s.bytes() / int64(k)
	workers := int(min(int64(runtime.GOMAXPROCS(0)), max(1, trainBudget/max(perTeacher, 1))))
	jobs := make(chan job) // the producer holds one teacher ready, and builds the next
	var units atomic.Int64 // distinct units with a label (diagnostics only)
	empty := make([]atomic.Int64, nl)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(jobs)
		pending := make([][]byte, k)
		next := 0 // the next teacher to train
		var buf, scratch []byte
		for b := range spillBuckets {
			var err error
			if buf, err = s.bucket(b, &scratch); err != nil {
				return fmt.Errorf("%s: %w", cfg.sens(), err)
			}
			for o := 0; o < len(buf); o += s.recSize {
				r := spillRec(buf[o : o+s.recSize])
				if r.dropped() {
					continue
				}
				t := teacherOfHash(r.hash(), k)
				if pending[t] == nil && k <= spillBuckets {
					// Sized for its buckets' records at once (a bucket
					// at either end may hold another teacher's too).
					n := 0
					for c := b; c <= lastBucket(t, k); c++ {
						n += s.bucketBytes(c)
					}
					pending[t] = make([]byte, 0, n)
				}
				pending[t] = append(pending[t], r...)
			}
			done := k // the teachers whose rows are all read
			if b+1 < spillBuckets {
				done = teacherOfHash(uint64(b+1)<<(64-spillBucketBits), k)
			}
			for ; next < done; next++ {
				select {
				case jobs <- job{next, pending[next]}:
					pending[next] = nil
				case <-gctx.Done():
					return gctx.Err()
				}
			}
		}
		return nil
	})
	for range workers {
		g.Go(func() error {
			lr, err := learners.NewLearner(cfg.Learner, l.learnerOptions())
			if err != nil {
				return paramError("learner", ": %v", err)
			}
			x := learners.NewMatrix(0, dim) // each teacher's rows in turn: Fit keeps no reference
			var yt []int32
			var recs []spillRec
			seen := make(map[[32]byte]struct{})
			for jb := range jobs {
				// The teacher's rows in the order of the sensitive file
				// (each bucket's are; a teacher spans a few buckets).
				recs = recs[:0]
				for o := 0; o < len(jb.recs); o += s.recSize {
					recs = append(recs, spillRec(jb.recs[o:o+s.recSize]))
				}
				if !slices.IsSortedFunc(recs, byRow) {
					slices.SortFunc(recs, byRow)
				}
				if cfg.Diagnose != nil {
					clear(seen)
					for _, r := range recs {
						for j := range nl {
							if classOf[j][r.code(j)] >= 0 {
								seen[r.id()] = struct{}{}
								break
							}
						}
					}
					units.Add(int64(len(seen)))
				}
				for j := range nl {
					classes := len(td.labels[j].classes.values)
					x.Reset(len(recs))
					yt = yt[:0]
					for _, r := range recs {
						if c := classOf[j][r.code(j)]; c >= 0 {
							r.x(s.nl, x.Row(len(yt)))
							yt = append(yt, c)
						}
					}
					x.Reset(len(yt))
					if len(yt) == 0 {
						models[j][jb.t] = constModel{classes: classes, dim: dim}
						empty[j].Add(1)
						continue
					}
					m, err := lr.Fit(x, yt, classes)
					if err != nil {
						if nl > 1 {
							return fmt.Errorf("training teacher %d for label %q: %w", jb.t, td.labels[j].name, err)
						}
						return fmt.Errorf("training teacher %d: %w", jb.t, err)
					}
					models[j][jb.t] = m
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if u := units.Load(); cfg.Diagnose != nil && u < int64(k) {
		cfg.diagnose("%s has %d privacy units with a label, fewer than the %d teachers (--teachers)", cfg.sens(), u, k)
	}
	for j, ld := range td.labels {
		if e := empty[j].Load(); e > 0 {
			what := ""
			if nl > 1 {
				what = fmt.Sprintf(" for label %q", ld.name)
			}
			cfg.diagnose("%d of %d teachers received no usable rows%s and vote for the first class; consider fewer --teachers", e, k, what)
		}
		ens, err := learners.NewEnsemble(models[j], len(ld.classes.values))
		if err != nil {
			return fmt.Errorf("stacking the teachers: %w", err)
		}
		ld.ens = ens
	}
	return nil
}

func byRow(a, b spillRec) int { return cmp.Compare(a.row(), b.row()) }

// trainBudget bounds the memory of the teachers in training at once.
const trainBudget = 256 << 20

// lastBucket is the spill bucket of the largest hash teacher t of k gets.
func lastBucket(t, k int) int {
	if t+1 >= k {
		return spillBuckets - 1
	}
	// The smallest hash of teacher t+1 is ⌈(t+1)·2^64/k⌉.
	q, r := bits.Div64(uint64(t+1), 0, uint64(k))
	if r != 0 {
		q++
	}
	return bucketOf(q - 1)
}

// discoverClasses releases the set of label values privately, when the user
// did not declare it: the class set is itself a function of the sensitive
// data (a value held by one unit only must not be revealed by its mere
// presence). Each unit counts once, for its most frequent label (a row is
// a unit without --privacy-unit, repeated rows each counting); a value is
// kept when its count plus discrete Gaussian noise reaches a threshold that a
// value held by one unit passes with probability at most δ_c. This is the
// stable-histogram mechanism: ρ_c-zCDP on the values present in both
// neighbours, plus δ_c for a value present in one only.
//
// With L label columns, one unit moves one count of each column's
// histogram: the L releases are one query of squared L2 sensitivity L. Each
// column gets σ√L (so the discovery's total ρ is the single-label one) and
// δ_c/L (a union bound over the columns).
func (l *Labeler) discoverClasses(ld *labelData, j int, counts map[string]int64) error {
	cfg := &l.cfg
	nl := float64(len(l.labelFields))
	sigma := float64(discoverySigmaFree)
	share := discoveryRhoShare
	if cfg.Epsilon > 0 {
		rhoB := rdp.RhoForEps(cfg.Epsilon, cfg.Delta*(1-discoveryDeltaShare))
		if l.count != nil {
			share = DiscoveryShare(l.count.noisy, rhoB)
		}
		sigma = math.Sqrt(1 / (2 * share * rhoB))
	}
	if nl > 1 {
		sigma *= math.Sqrt(nl)
	}
	sigmaStr := roundUpDecimal(sigma, 3)
	sr, err := noise.ParseRat(sigmaStr)
	if err != nil {
		return fmt.Errorf("class discovery σ %s: %w", sigmaStr, err)
	}
	sigma, _ = sr.Float64()
	dg, err := noise.NewDiscreteGaussian(sr)
	if err != nil {
		return fmt.Errorf("class discovery: %w", err)
	}
	deltaC := cfg.Delta * discoveryDeltaShare
	if nl > 1 {
		deltaC /= nl
	}
	tau := 1 + discreteGaussianTailPoint(sigma, deltaC)

	vals := make([]string, 0, len(counts))
	for v := range counts {
		vals = append(vals, v)
	}
	sortClassValues(ld.field.Type, vals)
	src := l.source(streamClasses + uint64(j)<<8)
	var kept []string
	for _, v := range vals {
		if counts[v]+dg.Sample(src) >= tau {
			kept = append(kept, v)
		}
	}
	ld.discoveryRho = rdp.DiscreteGaussianRho(1, sigma, max(len(vals), 1))
	ld.discoveryDelta = deltaC
	ld.discovery = &ClassDiscovery{Sigma: sigmaStr, Threshold: tau, Rho: Float(ld.discoveryRho), Delta: Float(deltaC)}
	if l.count != nil && cfg.Epsilon > 0 {
		ld.discovery.Share, ld.discovery.Rule = Float(share), DiscoveryRule
	}
	ld.classesSource = "released privately from the sensitive data (stable histogram)"
	if len(kept) < 2 && !(len(kept) == 1 && cfg.Choose) {
		hint := "; declare the classes with --classes"
		if nl > 1 {
			hint = ""
		}
		units := "rows"
		if cfg.PrivacyUnit != "" {
			units = "privacy units (values of " + cfg.PrivacyUnit + ")"
		}
		return invalid("label column %q: %d class(es) survived private class discovery (a class needs about %d %s to be released)%s", ld.name, len(kept), tau, units, hint)
	}
	ld.classes, err = newClassSet(ld.field.Type, kept)
	return err
}

// usable reports whether row i has a usable value in some label column.
func usable(hasLab [][]bool, i int) bool {
	for _, h := range hasLab {
		if h[i] {
			return true
		}
	}
	return false
}

// discreteGaussianTailPoint returns the smallest integer t ≥ 0 with
// Pr[Z ≥ t] ≤ p for Z discrete Gaussian with parameter σ. It only sets a
// threshold from public parameters, so float64 is fine here.
func discreteGaussianTailPoint(sigma, p float64) int64 {
	w := func(z float64) float64 { return math.Exp(-z * z / (2 * sigma * sigma)) }
	limit := math.Ceil(40*sigma) + 40
	norm := w(0)
	for z := 1.0; z <= limit; z++ {
		norm += 2 * w(z)
	}
	tail := 0.0 // Pr[Z ≥ t], accumulated from the far end
	tails := make([]float64, 0, int(limit)+1)
	for z := limit; z >= 0; z-- {
		tail += w(z) / norm
		tails = append(tails, tail)
	}
	// tails[k] = Pr[Z ≥ limit-k]; find the smallest t with Pr[Z ≥ t] ≤ p.
	t := int64(limit)
	for k := range tails {
		if tails[k] > p {
			break
		}
		t = int64(limit) - int64(k)
	}
	return t
}

// constModel is the model of a teacher that received no rows: it always
// votes for the first class. It is linear (zero weights, one bias), so it
// stacks with logistic-regression teachers.
//
// The fixed class keeps invariants 1 and 3 at the edge: the teacher still
// casts exactly one vote, and that vote is a function of its own (empty)
// partition and of public facts (the class order) only. Adding one unit
// changes one teacher's partition, from empty to one unit or back, so it
// changes at most that teacher's vote, as for any other teacher; the run
// never has to refuse for a lack of units, which would itself reveal the
// number of units.
type constModel struct{ classes, dim int }

func (m constModel) Predict(x *learners.Matrix, out []int32) {
	for i := range out[:x.Rows] {
		out[i] = 0
	}
}

func (m constModel) Linear() ([]float32, []float32) {
	b := make([]float32, m.classes)
	b[0] = 1
	return make([]float32, m.classes*m.dim), b
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
