package label

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
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
// it is not declared with --classes.
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

// sensitiveData is the sensitive rows as trainTeachers prepares them.
type sensitiveData struct {
	recs      []arrow.Record
	labels    [][]string // canonical label text per row ("" for null), per label column
	hasLab    [][]bool   // whether the row has a usable label, per label column
	starts    []int      // first row of each batch
	total     int        // rows
	ids       [][32]byte // SHA-256 of each row's privacy-unit identity
	teacherOf []int      // each row's teacher
}

// trainTeachers fixes the class sets from the sensitive batches recs,
// partitions their privacy units over the teachers and trains one model per
// (label column, teacher). The caller keeps ownership of recs.
func (l *Labeler) trainTeachers(ctx context.Context, recs []arrow.Record, enc *learners.Encoder) (*learners.Ensemble, *teacherData, error) {
	cfg := &l.cfg
	sd := l.readLabels(recs)
	if cfg.Diagnose != nil {
		// Rows without a label are dropped from that label column's
		// training; how many there are is a statistic of the data.
		for j, lf := range l.labelFields {
			if n := sd.total - countTrue(sd.hasLab[j]); n > 0 {
				cfg.diagnose("%s: %d rows with a null label %q were dropped", cfg.sens(), n, lf.Name)
			}
		}
	}
	if err := l.partition(sd); err != nil {
		return nil, nil, err
	}
	// A label column without a usable value is not an error either: with
	// --classes its teachers all vote the fixed class, and without them the
	// private class discovery (a charged test) is what refuses the run.
	for j, lf := range l.labelFields {
		if !slices.Contains(sd.hasLab[j], true) {
			cfg.diagnose("%s: the label column %q has no usable value", cfg.sens(), lf.Name)
		}
	}
	td, err := l.classSets(sd)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Choose { // PATE or dp-logreg, by a noisy count (choose.go)
		if switched, err := l.choose(int64(sd.total), td, enc.Dim(), oneHotFeatures(enc)); err != nil || switched {
			return nil, td, spentBefore(err, td.discoveryRho)
		}
	}
	// From here on a failure comes after the class discovery: it says
	// what the discovery spent (the ledger charges a failed run its
	// maximum whatever it says).
	teacherRows, y := l.assignRows(sd, td)
	X, err := l.prepareSensitive(sd, enc)
	if err != nil {
		return nil, nil, spentBefore(err, td.discoveryRho)
	}
	if err := l.fitTeachers(ctx, td, X, enc.Dim(), y, teacherRows); err != nil {
		return nil, nil, spentBefore(err, td.discoveryRho)
	}
	return td.labels[0].ens, td, nil
}

// readLabels reads the label columns' values row by row.
func (l *Labeler) readLabels(recs []arrow.Record) *sensitiveData {
	nl := len(l.labelFields)
	sd := &sensitiveData{recs: recs, labels: make([][]string, nl), hasLab: make([][]bool, nl)}
	for _, rec := range recs {
		s := rec.Schema()
		for j, lf := range l.labelFields {
			lc := rec.Column(s.FieldIndices(lf.Name)[0])
			for i := 0; i < int(rec.NumRows()); i++ {
				v, ok := valueText(lc, i)
				sd.labels[j] = append(sd.labels[j], v)
				sd.hasLab[j] = append(sd.hasLab[j], ok)
			}
		}
		sd.starts = append(sd.starts, sd.total)
		sd.total += int(rec.NumRows())
	}
	return sd
}

// partition computes the privacy-unit identities (a SHA-256 of the unit's
// canonical bytes) batch by batch, in parallel, and each row's teacher: one
// keyed random function of the unit identity, shared by every label column,
// so a unit's rows all go to one teacher, which learns one model per label
// column (Bun, Nissim, Stemmer). Each batch's goroutine has a partitioner
// of its own, under the one key.
func (l *Labeler) partition(sd *sensitiveData) error {
	cfg := &l.cfg
	part := newPartitioner(cfg.Teachers, l.source(streamPartition))
	sd.teacherOf = make([]int, sd.total)
	if cfg.PrivacyUnit != "" {
		l.identifyUnits(sd, part)
		return nil
	}
	sd.ids = make([][32]byte, sd.total)
	g := new(errgroup.Group)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for bi, rec := range sd.recs {
		// Parts of a batch, so that the cores share the work evenly
		// (a row of an embedding takes microseconds).
		n := int(rec.NumRows())
		for lo := 0; lo < n; lo += identityPart {
			g.Go(func() error {
				sd.rowIdentities(part.clone(), rec, sd.starts[bi], lo, min(n, lo+identityPart))
				return nil
			})
		}
	}
	return g.Wait()
}

// identifyUnits sets sd.ids from the privacy-unit column, a batch per
// goroutine, and, when part is not nil, each row's teacher (sd.teacherOf,
// allocated by the caller). Rows whose unit is null are dropped (their
// labels count as missing), said by a diagnostic only.
func (l *Labeler) identifyUnits(sd *sensitiveData, part *partitioner) {
	cfg := &l.cfg
	var nullUnits atomic.Int64 // rows dropped for a null privacy unit
	sd.ids = make([][32]byte, sd.total)
	g := new(errgroup.Group)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for bi, rec := range sd.recs {
		g.Go(func() error {
			var p *partitioner
			if part != nil {
				p = part.clone()
			}
			uc := rec.Column(rec.Schema().FieldIndices(cfg.PrivacyUnit)[0])
			nullUnits.Add(sd.unitIdentities(p, uc, sd.starts[bi]))
			return nil
		})
	}
	_ = g.Wait() // the tasks return no error
	if n := nullUnits.Load(); n > 0 {
		cfg.diagnose("%s: %d rows with a null privacy unit (%q) were dropped", cfg.sens(), n, cfg.PrivacyUnit)
	}
}

// unitIdentities identifies the rows of one batch, from its row first on,
// by their privacy-unit column uc (and assigns their teacher when part is
// not nil), and returns how many rows it dropped.
func (sd *sensitiveData) unitIdentities(part *partitioner, uc arrow.Array, first int) int64 {
	var buf []byte
	var dropped int64
	for i := 0; i < uc.Len(); i++ {
		r := first + i
		if uc.IsNull(i) {
			// A row without a unit belongs to no one the guarantee can
			// name: it is dropped (its labels count as missing),
			// silently. Failing would reveal that such a row exists.
			for j := range sd.hasLab {
				sd.hasLab[j][r] = false
			}
			dropped++
			continue
		}
		buf = rowIdentity(append(buf[:0], 1), []arrow.Array{uc}, i)
		sd.ids[r] = sha256.Sum256(buf)
		if part != nil {
			sd.teacherOf[r] = part.teacher(sd.ids[r][:])
		}
	}
	return dropped
}

// identityPart is the number of rows of a batch identified by one task.
const identityPart = 4096

// rowIdentities identifies rows [from, to) of one batch, whose row 0 is
// sensitive row first, when the whole row is the unit: a block of rows at
// a time, column by column.
func (sd *sensitiveData) rowIdentities(part *partitioner, rec arrow.Record, first, from, to int) {
	n := to
	cols := rec.Columns()
	blk := make([][]byte, min(to-from, 256))
	for lo := from; lo < n; lo += len(blk) {
		rows := blk[:min(len(blk), n-lo)]
		for k := range rows {
			rows[k] = append(rows[k][:0], 0)
		}
		rowIdentities(rows, cols, lo)
		for k, id := range rows {
			r := first + lo + k
			sd.ids[r] = sha256.Sum256(id)
			sd.teacherOf[r] = part.teacher(sd.ids[r][:])
		}
	}
}

// classSets fixes each label column's class set: declared (public) or
// released privately.
func (l *Labeler) classSets(sd *sensitiveData) (*teacherData, error) {
	cfg := &l.cfg
	td := &teacherData{}
	for j, lf := range l.labelFields {
		ld := &labelData{name: lf.Name, field: lf}
		if cfg.Classes != nil {
			var err error
			ld.classes, err = newClassSet(lf.Type, cfg.Classes)
			if err != nil {
				return nil, paramError("classes", ": %v", err)
			}
			ld.classesSource = "declared with --classes"
		} else if err := l.discoverClasses(ld, j, sd.labels[j], sd.hasLab[j], sd.ids); err != nil {
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

// assignRows lists each teacher's rows and each row's class index, per
// label column.
//
// Fewer units than teachers is not an error: whether the run goes ahead
// must not depend on the number of units (k units would release and k−1
// abort). Teachers without rows vote the fixed class (constModel); how many
// there are is a not-private diagnostic.
func (l *Labeler) assignRows(sd *sensitiveData, td *teacherData) (teacherRows [][][]int, y [][]int32) {
	cfg := &l.cfg
	nl := len(td.labels)
	if cfg.Diagnose != nil {
		units := make(map[[32]byte]struct{}, min(sd.total, cfg.Teachers))
		for i := 0; i < sd.total && len(units) < cfg.Teachers; i++ {
			if usable(sd.hasLab, i) {
				units[sd.ids[i]] = struct{}{}
			}
		}
		if len(units) < cfg.Teachers {
			cfg.diagnose("%s has %d privacy units with a label, fewer than the %d teachers (--teachers)", cfg.sens(), len(units), cfg.Teachers)
		}
	}
	teacherRows = make([][][]int, nl) // per label column, per teacher
	y = make([][]int32, nl)
	for j, ld := range td.labels {
		teacherRows[j] = make([][]int, cfg.Teachers)
		y[j] = make([]int32, sd.total)
		for i := range sd.ids {
			if !sd.hasLab[j][i] {
				continue
			}
			c, ok := ld.classes.index[sd.labels[j][i]]
			if !ok { // a class the public set does not have: it cannot be voted for
				continue
			}
			y[j][i] = int32(c)
			t := sd.teacherOf[i]
			teacherRows[j][t] = append(teacherRows[j][t], i)
		}
		empty := 0
		for _, r := range teacherRows[j] {
			if len(r) == 0 {
				empty++
			}
		}
		if empty > 0 {
			what := ""
			if nl > 1 {
				what = fmt.Sprintf(" for label %q", ld.name)
			}
			cfg.diagnose("%d of %d teachers received no usable rows%s and vote for the first class; consider fewer --teachers", empty, cfg.Teachers, what)
		}
	}
	return teacherRows, y
}

// sensitiveRows are the sensitive batches, prepared for the public encoder,
// from which each teacher's rows are encoded into its training matrix.
//
// When every feature is an element of a list column (an embedding), a row's
// values are contiguous in the batch and each teacher's rows are encoded
// straight from it: encoding every row into one matrix first took as much
// fresh memory again as the sensitive data (150 MB for 100,000 embeddings
// of 384 float32s, all of it page faults), and a pass to copy each
// teacher's rows out of it. Other features are a column each, and a
// teacher's rows, encoded one at a time, read each column at random (64
// cache misses a row of 64 features: 0.45 CPU-s for 100,000 rows, against
// 0.03 s for the batch): those are encoded batch by batch into one matrix,
// each column in order, and the teachers copy their rows from it.
type sensitiveRows struct {
	batches []*learners.Prepared
	starts  []int            // first row of each batch
	whole   *learners.Matrix // every row encoded, unless a row is encoded from its batch
}

// prepareSensitive prepares the sensitive batches for the encoder (which
// checks their feature columns), in one goroutine: a Prepared is then read
// only, by any number of them. Unless every feature is a list element, it
// then encodes them all, batch by batch in parallel.
func (l *Labeler) prepareSensitive(sd *sensitiveData, enc *learners.Encoder) (*sensitiveRows, error) {
	s := &sensitiveRows{batches: make([]*learners.Prepared, len(sd.recs)), starts: sd.starts}
	for bi, rec := range sd.recs {
		p, err := enc.Prepare(rec)
		if err != nil {
			return nil, invalid("%s, batch %d: %v", l.cfg.sens(), bi, err)
		}
		s.batches[bi] = p
	}
	if slices.ContainsFunc(enc.Columns, func(f learners.Feature) bool { return f.Column == "" }) {
		dim := enc.Dim()
		s.whole = learners.NewMatrix(sd.total, dim)
		var g errgroup.Group
		g.SetLimit(runtime.GOMAXPROCS(0))
		for bi, p := range s.batches {
			g.Go(func() error {
				lo, hi := s.starts[bi]*dim, (s.starts[bi]+p.Rows())*dim
				p.EncodeRows(0, p.Rows(), &learners.Matrix{Data: s.whole.Data[lo:hi:hi]}) // in place
				return nil
			})
		}
		g.Wait()
	}
	return s, nil
}

// encode sets x to the encoded rows (ascending row numbers): copied from
// the whole matrix, or encoded from their batches, a run of consecutive
// rows of a batch at a time.
func (s *sensitiveRows) encode(rows []int, x *learners.Matrix) {
	x.Reset(len(rows))
	if s.whole != nil {
		for k, r := range rows {
			copy(x.Row(k), s.whole.Row(r))
		}
		return
	}
	dim := x.Cols
	bi := 0
	for k := 0; k < len(rows); {
		r := rows[k]
		for bi+1 < len(s.starts) && s.starts[bi+1] <= r {
			bi++
		}
		lo, end := r-s.starts[bi], s.starts[bi]+s.batches[bi].Rows()
		n := 1
		for k+n < len(rows) && rows[k+n] == r+n && r+n < end {
			n++
		}
		dst := learners.Matrix{Data: x.Data[k*dim : (k+n)*dim : (k+n)*dim]}
		s.batches[bi].EncodeRows(lo, lo+n, &dst)
		k += n
	}
}

// fitTeachers trains one model per (label column, teacher), one goroutine
// per core, and stacks each column's models into its ensemble.
func (l *Labeler) fitTeachers(ctx context.Context, td *teacherData, X *sensitiveRows, dim int, y [][]int32, teacherRows [][][]int) error {
	cfg := &l.cfg
	nl := len(td.labels)
	models := make([][]learners.Model, nl)
	for j := range models {
		models[j] = make([]learners.Model, cfg.Teachers)
	}
	g, gctx := errgroup.WithContext(ctx)
	next := make(chan [2]int)
	g.Go(func() error {
		defer close(next)
		for j := range models {
			for t := range models[j] {
				select {
				case next <- [2]int{j, t}:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
		}
		return nil
	})
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		g.Go(func() error {
			lr, err := learners.NewLearner(cfg.Learner, l.learnerOptions())
			if err != nil {
				return paramError("learner", ": %v", err)
			}
			x := learners.NewMatrix(0, dim) // each teacher's rows in turn: Fit keeps no reference
			for jt := range next {
				j, t := jt[0], jt[1]
				classes := len(td.labels[j].classes.values)
				rows := teacherRows[j][t]
				if len(rows) == 0 {
					models[j][t] = constModel{classes: classes, dim: dim}
					continue
				}
				X.encode(rows, x)
				yt := make([]int32, len(rows))
				for k, r := range rows {
					yt[k] = y[j][r]
				}
				m, err := lr.Fit(x, yt, classes)
				if err != nil {
					if nl > 1 {
						return fmt.Errorf("training teacher %d for label %q: %w", t, td.labels[j].name, err)
					}
					return fmt.Errorf("training teacher %d: %w", t, err)
				}
				models[j][t] = m
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for j, ld := range td.labels {
		ens, err := learners.NewEnsemble(models[j], len(ld.classes.values))
		if err != nil {
			return fmt.Errorf("stacking the teachers: %w", err)
		}
		ld.ens = ens
	}
	return nil
}

// discoverClasses releases the set of label values privately, when the user
// did not declare it: the class set is itself a function of the sensitive
// data (a value held by one unit only must not be revealed by its mere
// presence). Each unit counts once, for its most frequent label; a value is
// kept when its count plus discrete Gaussian noise reaches a threshold that a
// value held by one unit passes with probability at most δ_c. This is the
// stable-histogram mechanism: ρ_c-zCDP on the values present in both
// neighbours, plus δ_c for a value present in one only.
//
// With L label columns, one unit moves one count of each column's
// histogram: the L releases are one query of squared L2 sensitivity L. Each
// column gets σ√L (so the discovery's total ρ is the single-label one) and
// δ_c/L (a union bound over the columns).
func (l *Labeler) discoverClasses(ld *labelData, j int, labels []string, hasLab []bool, ids [][32]byte) error {
	cfg := &l.cfg
	nl := float64(len(l.labelFields))
	perUnit := make(map[[32]byte]map[string]int)
	for i := range labels {
		if !hasLab[i] {
			continue
		}
		m := perUnit[ids[i]]
		if m == nil {
			m = make(map[string]int, 1)
			perUnit[ids[i]] = m
		}
		m[labels[i]]++
	}
	counts := make(map[string]int64)
	for _, m := range perUnit {
		vals := make([]string, 0, len(m))
		for v := range m {
			vals = append(vals, v)
		}
		sortClassValues(ld.field.Type, vals)
		best := vals[0]
		for _, v := range vals[1:] {
			if m[v] > m[best] {
				best = v
			}
		}
		counts[best]++
	}

	sigma := float64(discoverySigmaFree)
	if cfg.Epsilon > 0 {
		rhoB := rdp.RhoForEps(cfg.Epsilon, cfg.Delta*(1-discoveryDeltaShare))
		sigma = math.Sqrt(1 / (2 * discoveryRhoShare * rhoB))
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
	ld.classesSource = "released privately from the sensitive data (stable histogram)"
	if len(kept) < 2 {
		hint := "; declare the classes with --classes"
		if nl > 1 {
			hint = ""
		}
		return invalid("label column %q: %d class(es) survived private class discovery (a class needs about %d privacy units to be released)%s", ld.name, len(kept), tau, hint)
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
