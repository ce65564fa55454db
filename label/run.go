package label

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"golang.org/x/sync/errgroup"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// Noise streams of a seeded run: each use of randomness has its own.
const (
	streamPartition = 1
	streamClasses   = 2
	streamAggregate = 3
	// streamLabel + j (1 ≤ j < maxLabels) keys the aggregation noise of
	// the j-th label column of a multi-label run, as streamAggregate keys
	// the first's.
	streamLabel = 128
)

func (l *Labeler) source(stream uint64) noise.Source {
	if l.cfg.Seed != nil {
		return noise.NewSeededSource(*l.cfg.Seed, stream)
	}
	return noise.NewCryptoSource()
}

// Run trains the teachers on the sensitive batches, labels the public
// batches and writes them to out. On error nothing more is written; the
// caller discards the output.
func (l *Labeler) Run(ctx context.Context, sensitive, public RecordReader, out RecordWriter) (*Report, error) {
	l.resetChoice()
	l.warnings = nil
	cfg := &l.cfg
	// The sensitive batches are read from the start, while the public head
	// is read and the encoder fitted (the two files are independent); they
	// are spilled once the encoder can encode them.
	sr := readAhead(ctx, sensitive, 2)
	defer sr.close()

	// 1. The encoder is fitted on public data only (invariant 2): the first
	// batches of the public stream, which are then labelled like the rest.
	cfg.phase(PhaseReading, 0, 0)
	head, headRows, err := readHead(ctx, public, cfg.EncoderOptions.MaxSampleRows)
	defer func() {
		for _, r := range head {
			r.Release()
		}
	}()
	if err != nil {
		return nil, errorf(err, "%s", cfg.pub())
	}
	if headRows == 0 {
		return nil, invalid("%s has no rows", cfg.pub())
	}
	l.leaveOutIDs(head)
	enc, err := learners.FitEncoder(l.public, l.features, head, cfg.EncoderOptions)
	if err != nil {
		return nil, invalid("fitting the feature encoder on %s: %v", cfg.pub(), err)
	}
	if err := enc.CheckSchema(sensitive.Schema()); err != nil {
		return nil, invalid("%s: %v", cfg.sens(), err)
	}
	if l.bins, err = l.publicBins(enc, head, headRows); err != nil {
		return nil, invalid("fitting the bin edges on %s: %v", cfg.pub(), err)
	}

	// 2. Teachers. The sensitive rows are encoded as they are read and
	// spilled, grouped by their unit's keyed hash (spill.go): the memory
	// does not grow with their number.
	cfg.phase(PhaseTraining, 0, 0)
	sens, err := l.ingest(ctx, sr, enc)
	if err != nil {
		return nil, errorf(err, "%s", cfg.sens())
	}
	ens, td, err := l.train(ctx, sens, enc, head)
	sens.close() // the teachers are trained: the sensitive rows are no longer needed
	if err != nil {
		if l.chosen != nil { // dp-logreg failed after the class discovery it was chosen with
			err = spentBefore(err, l.chosen.discoveryRho)
		}
		return nil, l.withChoice(err)
	}

	// Streaming needs less memory than training did; keep its garbage in
	// check so that the peak does not depend on the number of public rows.
	var ahead int64
	if la, ok := public.(interface{ LookAhead() int64 }); ok {
		ahead = la.LookAhead()
	}
	defer capHeap(ahead)()

	// From here on a failure comes after the class discovery ran: it
	// charges what the discovery cost (the labels' own spend is the
	// ledger's write-ahead entry's business).
	discovered := l.choiceRho // the chooser's count, charged with the discovery
	if td != nil {
		discovered += td.discoveryRho
	}

	// 3. Budget, noise, aggregator.
	rep, agg, filter, err := l.prepareMechanism(td)
	if err != nil {
		return nil, spentBefore(err, discovered)
	}
	if err := l.startPure(ens, rep, agg, filter); err != nil {
		return nil, spentBefore(err, discovered)
	}

	// 4. Stream the public data: read → vote → aggregate → write.
	cfg.phase(PhaseLabelling, 0, 0)
	st := l.newRunState(enc, ens, agg, filter, td)
	if err := st.startStudent(head); err != nil {
		return nil, spentBefore(err, discovered)
	}
	if st.student != nil {
		defer st.student.close()
	}
	err = st.stream(ctx, head, public, out)
	head = nil // the stream owns (and has released) the head batches
	if err != nil {
		// What the filter had spent when the stream stopped (the discovery's
		// and the chooser's ρ included): an interrupted run whose figures
		// were shown (Config.Progress) is charged it.
		return nil, spentBefore(err, math.Max(discovered, st.rhoSpent()))
	}
	l.finishReport(rep, st, agg, filter, td)
	l.keepTrained(st)
	return rep, nil
}

// train trains what votes: the teachers, or a mechanism that learns from the
// rows themselves (also when the chooser picked dp-logreg after the
// teachers' class discovery).
func (l *Labeler) train(ctx context.Context, s *spill, enc *learners.Encoder, head []arrow.Record) (voter, *teacherData, error) {
	if m, ok := mechanismOf(l.cfg.Mechanism).(rowMechanism); ok {
		return l.trainRows(ctx, m, s, enc, head)
	}
	ens, td, err := l.trainSpilled(ctx, s, enc)
	if err == nil && l.chosen != nil {
		return l.trainRows(ctx, mechanismOf(l.cfg.Mechanism).(rowMechanism), s, enc, head)
	}
	return ens, td, err
}

// newRunState sets up the state of the stream: the voter, the aggregator
// and its budget filter, the class sets.
func (l *Labeler) newRunState(enc *learners.Encoder, ens voter, agg *aggregator, filter budget, td *teacherData) *runState {
	cfg := &l.cfg
	st := &runState{l: l, enc: enc, ens: ens, agg: agg, filter: filter, classes: td.classes,
		deltaConv: cfg.Delta - td.discoveryDelta, maxQueries: cfg.MaxQueries, step: timelineStep(cfg.PublicRows), released: make([]int64, len(td.classes.values))}
	if l.multi() {
		st.initLabels(td)
	}
	st.vote = st.voteEnsemble
	if m, ok := mechanismOf(cfg.Mechanism).(modelMechanism); ok {
		st.answerSource = m.answerSource()
	}
	st.tileBufs.New = func() any { return new([]float32) }
	if bs, ok := ens.(batchStarter); ok { // each batch's predictions draw from their own stream
		st.vote = func(b *batch) error {
			bs.startBatch(l, b.first)
			return st.voteEnsemble(b)
		}
	}
	return st
}

// prepareMechanism sets up the budget filter, plans the noise the user did
// not give, and builds the aggregator.
func (l *Labeler) prepareMechanism(td *teacherData) (*Report, *aggregator, budget, error) {
	cfg := &l.cfg
	if m, ok := pureEvents(cfg.Mechanism); ok {
		return l.preparePure(m, td, plannedQueries(cfg))
	}
	rep := l.newReport(td)
	var filter budget = &unlimited{spent: td.discoveryRho + l.choiceRho}
	rhoAvail := 0.0
	deltaConv := cfg.Delta - td.discoveryDelta
	if cfg.Epsilon > 0 {
		f, err := rdp.NewFilter(cfg.Epsilon, deltaConv)
		if err != nil {
			return nil, nil, nil, invalid("budget: %w", err)
		}
		if err := f.Charge(td.discoveryRho + l.choiceRho); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: the class discovery alone exceeds ε = %g", ErrBudgetRefused, cfg.Epsilon)
		}
		filter = f
		rhoAvail = f.Remaining()
	}
	queries := cfg.PublicRows
	if cfg.MaxQueries > 0 && (queries < 0 || cfg.MaxQueries < queries) {
		queries = cfg.MaxQueries
	}
	if _, ok := mechanismOf(cfg.Mechanism).(modelMechanism); ok {
		// One model spends the filter when it is trained (its voter's
		// start); its answers are free.
		agg, err := newAggregator(cfg.Mechanism, len(td.classes.values), cfg.Params)
		if err != nil {
			return nil, nil, nil, invalid("%v", err)
		}
		rep.Params = cfg.Params
		rep.PlannedQueries = queries
		return rep, agg, filter, nil
	}
	if len(td.labels) > 1 {
		agg, err := l.prepareLabels(td, rhoAvail, queries, filter)
		if err != nil {
			return nil, nil, nil, err
		}
		rep.PlannedQueries = queries
		return rep, agg, filter, nil
	}
	params := cfg.Params
	agg, err := l.planAggregator(len(td.classes.values), rhoAvail, queries, &params)
	if err != nil {
		return nil, nil, nil, err
	}
	if cfg.Replicable != nil {
		if agg.round, err = newRounding(agg, params, cfg.Replicable.Width, cfg.Replicable.Key); err != nil {
			return nil, nil, nil, invalid("%w", err)
		}
		rep.Replicable, rep.ReplicableVia = true, cfg.Replicable.Via
		rep.ReplicableGrid = &ReplicableGrid{Check: agg.round.check, Answer: agg.round.answer}
	}
	if cfg.Epsilon > 0 && !filter.Fits(agg.rhoPerQuery()) {
		return nil, nil, nil, fmt.Errorf("%w: ε = %g, δ = %g cannot pay for a single query with this noise", ErrBudgetRefused, cfg.Epsilon, cfg.Delta)
	}
	if ov, ok := mechanismOf(cfg.Mechanism).(ownVotes); ok {
		if sigma, k, beyond := ov.noiseBeyondVotes(params); beyond {
			cfg.warn("the noise (σ %.4g) is larger than the %d neighbours' widest vote margin: the labels will be "+
				"close to guessing; raise --epsilon, put fewer queries (--max-queries) or raise --knn-k", sigma, k)
		}
	} else if sigma, beyond := noiseBeyondVotes(agg, cfg.Teachers); beyond {
		cfg.warn("the noise (σ %.4g) is larger than the %d teachers' widest vote margin: the labels will be "+
			"close to guessing; raise --epsilon, put fewer queries (--max-queries) or use more teachers",
			sigma, cfg.Teachers)
	}
	rep.Params = params
	rep.PlannedQueries = queries
	return rep, agg, filter, nil
}

// planAggregator plans the noise params leaves empty so that queries
// queries fit rho (when the run has a budget), and builds the aggregator
// over the given number of classes.
func (l *Labeler) planAggregator(classes int, rho float64, queries int64, params *MechanismParams) (*aggregator, error) {
	cfg := &l.cfg
	m := mechanismOf(cfg.Mechanism).(argmaxMechanism)
	if cfg.Epsilon > 0 {
		if queries < 0 {
			if len(m.missing(*params)) > 0 {
				return nil, invalid("the number of public rows is not known in advance (a stream): give --max-queries or explicit noise to plan for")
			}
		} else if err := planNoise(cfg.Mechanism, rho, queries, params, cfg.AnsweredFraction, cfg.SigmaRatio); err != nil {
			return nil, invalid("planning the noise: %w", err)
		}
	}
	m.complete(params, cfg.Teachers)
	agg, err := newAggregator(cfg.Mechanism, classes, *params)
	if err != nil {
		return nil, invalid("%w", err)
	}
	return agg, nil
}

// capHeap collects what training left behind and bounds the memory of the
// stream that follows by the memory in use when it starts, so that the
// peak of a run does not depend on its number of public rows:
//
//   - the garbage collector keeps the heap within a quarter of the live
//     data (the default lets it double): streaming allocates a batch's
//     worth of garbage per batch;
//   - a soft memory limit of half again the memory in use once training is
//     done and its garbage collected (by then the reader has decoded as
//     far ahead as it may, so this is the stream's working set), or of
//     the public reader's look-ahead (ahead bytes) if that is more: without
//     it, free heap spans are handed back to the kernel so slowly that the
//     resident size of a long stream crept past that of a short one with
//     the same live data. The limit is soft: a stream that needs more
//     live memory gets it, at the price of more collections.
//
// The look-ahead matters for files whose reader holds whole row groups of
// a list column (DuckDB writes 189 MB of a 384-float embedding per row
// group): the memory in use at the start holds one of them, and a limit
// below the few the reader keeps in flight had the collector and the
// scavenger hand each freed row group back to the kernel, to be faulted
// in again for the next (0.3 s of a 2.5 s run).
//
// It returns a function that restores the previous settings.
func capHeap(ahead int64) func() {
	runtime.GC()
	prev := debug.SetGCPercent(25)
	inUse := runtimeMemoryInUse()
	prevLimit := debug.SetMemoryLimit(inUse + max(inUse/2, minStreamHeadroom, ahead))
	return func() {
		debug.SetMemoryLimit(prevLimit)
		debug.SetGCPercent(prev)
	}
}

// minStreamHeadroom is the least the stream's soft memory limit allows
// above the memory in use when it starts.
const minStreamHeadroom = 64 << 20

// runtimeMemoryInUse is the memory the Go runtime holds from the kernel,
// less what it has released and its free heap spans: what its soft memory
// limit counts, but for the free spans it could hand back.
func runtimeMemoryInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	for _, v := range s {
		if v.Value.Kind() != metrics.KindUint64 {
			return math.MaxInt64 / 2
		}
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64() - s[2].Value.Uint64())
}

// timelineStep spaces the report's timeline points: about 200 over the
// public rows when their number is known, every 1,000 rows otherwise.
func timelineStep(rows int64) int64 {
	if rows <= 0 {
		return 1000
	}
	return max(1, (rows+199)/200)
}

// readHead reads batches until it holds at least n rows (100,000 when n ≤ 0)
// or the stream ends. The caller releases what it returns, error or not.
func readHead(ctx context.Context, r RecordReader, n int) ([]arrow.Record, int, error) {
	if n <= 0 {
		n = 100_000
	}
	return readRows(ctx, r, n)
}

// readRows reads batches until it holds at least n rows or the stream ends;
// on error it returns what it read so far with the error.
func readRows(ctx context.Context, r RecordReader, n int) ([]arrow.Record, int, error) {
	var recs []arrow.Record
	rows := 0
	for rows < n {
		if err := ctx.Err(); err != nil {
			return recs, rows, err
		}
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return recs, rows, err
		}
		recs = append(recs, rec)
		rows += int(rec.NumRows())
	}
	return recs, rows, nil
}

// batch is one public record batch on its way through the pipeline.
type batch struct {
	rec    arrow.Record
	first  int64   // index of its first row in the public data
	queryN int     // rows of it that are put to the teachers
	sel    []int32 // when non-nil, the rows (ascending) of the queryN queries; else the first queryN rows
	noMore bool    // no query from this batch on: the student may take over
	counts []int32 // queryN × classes votes
	x      *learners.Matrix
	zCheck []int64 // queryN threshold draws (Confident-GNMax)
	zArg   []int64 // queryN × classes argmax draws

	more []labelVotes // multi-label: the votes and noise of the label columns after the first
	zRep []roundDraw  // --replicable: queryN roundings
}

type runState struct {
	l          *Labeler
	enc        *learners.Encoder
	ens        voter
	agg        *aggregator
	filter     budget
	classes    *classSet
	maxQueries int64
	// deltaConv is the δ the run's ρ converts at: δ less the class
	// discovery's.
	deltaConv float64

	// vote fills b.counts for the b.queryN first rows of b; skip, when set,
	// consumes the votes of a batch that is not queried (aggregate mode).
	vote func(b *batch) error
	skip func(b *batch) error

	// The student: see student.go.
	student *student

	tileBufs sync.Pool    // *[]float32 column-major tiles of voteTiles
	sources  SourceCounts // output rows by source
	pre      []int32      // SelectUncertain: outcome of each candidate row
	selSrc   noise.Source // SelectRandom: the selection's draws
	chosen   int64        // SelectRandom: queries selected so far
	target   int64        // SelectRandom: queries to select

	// folds: the ensembles of foldsOf with the encoder's standardisation
	// folded in (nil: not foldable), made by voteTiles' first call.
	folds   []*learners.FoldedEnsemble
	foldsOf []*learners.Ensemble

	released []int64 // answers per class

	// answerSource is the pate_source of an answered row when a model
	// mechanism answers ("": SourceTeachers; see answeredBy).
	answerSource string

	// Multi-label runs: every label column, the first included
	// (its ensemble and aggregator are also ens and agg above), and the
	// most one query costs, rounded up; nil for a single label.
	labels    []*labelRun
	rhoQuery  float64
	timeline  []TimePoint
	step      int64       // rows between two timeline points
	stopped   atomic.Bool // the budget filter refused: no more queries
	stopRow   int64
	rows      int64
	seen      int64
	answered  int64
	abstained int64
}

// pipeline is the channels and the batch pool of one stream. Stages are
// joined by channels of capacity 2, so memory is bounded by a few batches
// whatever the number of rows.
type pipeline struct {
	read     chan *batch       // reader → voter
	voted    chan *batch       // voter → aggregator
	labelled chan arrow.Record // aggregator → writer
	pool     sync.Pool         // *batch
}

// stream runs the pipeline read → vote → aggregate → write, one goroutine
// per stage (as miller's record streams: each stage owns what it receives
// and passes it on or releases it).
func (st *runState) stream(ctx context.Context, head []arrow.Record, public RecordReader, out RecordWriter) error {
	g, ctx := errgroup.WithContext(ctx)
	p := &pipeline{read: make(chan *batch, 2), voted: make(chan *batch, 2), labelled: make(chan arrow.Record, 2)}
	p.pool.New = func() any { return &batch{} }
	g.Go(func() error { return st.readStage(ctx, p, head, public) })
	g.Go(func() error { return st.voteStage(ctx, p) })
	g.Go(func() error { return st.aggregateStage(ctx, p) })
	g.Go(func() error { return writeStage(p, out) })
	err := g.Wait()
	if err == nil && (len(st.timeline) == 0 || st.timeline[len(st.timeline)-1].Rows != st.rows) {
		st.mark(st.rows)
	}
	// Drain what a failed stage left in the channels.
	for b := range p.read {
		b.rec.Release()
	}
	for b := range p.voted {
		b.rec.Release()
	}
	for rec := range p.labelled {
		rec.Release()
	}
	return err
}

// readStage sends the head batches, then the rest of the public stream,
// numbering their rows. It owns head: what it does not send it releases.
func (st *runState) readStage(ctx context.Context, p *pipeline, head []arrow.Record, public RecordReader) error {
	defer close(p.read)
	var next int64
	send := func(rec arrow.Record) error {
		b := p.pool.Get().(*batch)
		b.rec, b.first = rec, next
		next += rec.NumRows()
		select {
		case p.read <- b:
			return nil
		case <-ctx.Done():
			rec.Release()
			return ctx.Err()
		}
	}
	for i, rec := range head {
		if err := send(rec); err != nil {
			for _, r := range head[i+1:] {
				r.Release()
			}
			return err
		}
	}
	for {
		rec, err := public.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errorf(err, "%s", st.l.cfg.pub())
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		if err := send(rec); err != nil {
			return err
		}
	}
}

// voteStage chooses the rows of each batch that are queries, encodes them,
// counts the teachers' votes and draws their noise.
func (st *runState) voteStage(ctx context.Context, p *pipeline) error {
	defer close(p.voted)
	classes := len(st.classes.values)
	for b := range p.read {
		st.chooseQueries(b)
		var err error
		if b.queryN > 0 {
			b.counts = growInt32(b.counts, b.queryN*classes)
			if st.labels != nil {
				st.sizeMore(b)
			}
			if err = st.vote(b); err == nil {
				st.drawNoise(b, classes)
			}
		} else if st.skip != nil {
			err = st.skip(b)
		}
		if err != nil {
			b.rec.Release()
			return err
		}
		select {
		case p.voted <- b:
		case <-ctx.Done():
			b.rec.Release()
			return ctx.Err()
		}
	}
	return nil
}

// chooseQueries sets which rows of b are put to the teachers (b.queryN,
// b.sel) and whether the queries are over (b.noMore).
func (st *runState) chooseQueries(b *batch) {
	n := b.rec.NumRows()
	q := n
	b.noMore = st.stopped.Load()
	b.sel = b.sel[:0]
	switch st.l.cfg.Select {
	case SelectRandom:
		b.noMore = b.noMore || st.chosen >= st.target
		if !b.noMore {
			st.selectRandom(b)
			q = int64(b.queryN)
		}
	case SelectUncertain: // asked before the stream, in rounds
		q = 0
		b.noMore = b.noMore || b.first >= int64(len(st.pre))
	default: // the first rows
		b.sel = nil
		if st.maxQueries > 0 {
			q = max(0, min(n, st.maxQueries-b.first))
			b.noMore = b.noMore || b.first >= st.maxQueries
		}
	}
	if b.noMore {
		q = 0
	}
	b.queryN = int(q)
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// outBuilders are the aggregator stage's builders of the output columns.
type outBuilders struct {
	label  array.Builder        // the (first) label column
	source *array.StringBuilder // the source column
	more   []array.Builder      // multi-label: the label columns after the first
}

func (st *runState) newOutBuilders() *outBuilders {
	mem := st.l.cfg.Allocator
	o := &outBuilders{label: array.NewBuilder(mem, st.l.labelField.Type), source: array.NewStringBuilder(mem)}
	for _, lr := range st.labels {
		o.more = append(o.more, array.NewBuilder(mem, lr.field.Type))
	}
	return o
}

func (o *outBuilders) release() {
	o.label.Release()
	o.source.Release()
	for _, b := range o.more {
		b.Release()
	}
}

// aggregateStage is the only stage that touches noise and the budget. It
// works through the rows in order, so the filter sees events in the order
// they happen.
func (st *runState) aggregateStage(ctx context.Context, p *pipeline) error {
	defer close(p.labelled)
	ob := st.newOutBuilders()
	defer ob.release()
	send := func(rec arrow.Record) error {
		select {
		case p.labelled <- rec:
			return nil
		case <-ctx.Done():
			rec.Release()
			return ctx.Err()
		}
	}
	sp := st.student
	for b := range p.voted {
		err := st.aggregateBatch(ctx, b, ob, send)
		b.rec.Release()
		b.rec = nil
		p.pool.Put(b)
		if err != nil {
			return err
		}
		if pr := st.l.cfg.Progress; pr != nil {
			pr(st.progress())
		}
	}
	if sp != nil && !sp.trained && ctx.Err() == nil {
		return sp.finish(ctx, send)
	}
	return nil
}

// aggregateBatch labels the rows of b and sends the output batch (or
// spools it until the student is trained). The caller releases b.rec.
func (st *runState) aggregateBatch(ctx context.Context, b *batch, ob *outBuilders, send func(arrow.Record) error) error {
	n := int(b.rec.NumRows())
	sp := st.student
	// The student takes over once the queries are over: it is trained,
	// the spooled batches are replayed, and it labels every later row.
	if sp != nil && !sp.trained && (b.noMore || st.stopped.Load()) && b.first >= int64(len(st.pre)) && sp.ready() {
		if err := sp.finish(ctx, send); err != nil {
			return err
		}
	}
	var la, sa arrow.Array
	var more []arrow.Array // multi-label: the label columns after the first
	switch {
	case st.labels != nil:
		la, more, sa = st.aggregateLabels(b, ob.more, ob.source)
	case sp != nil && sp.trained:
		var err error
		if la, sa, err = sp.label(b.rec, nil, nil); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if row := b.first + int64(i) + 1; row%st.step == 0 {
				st.mark(row)
			}
		}
	default:
		la, sa = st.aggregateRows(b, ob)
	}
	st.rows += int64(n)
	if sp != nil && !sp.trained {
		err := sp.spool(b.rec, la, sa)
		la.Release()
		sa.Release()
		return err
	}
	return send(st.outRecord(b.rec, la, sa, more...))
}

// aggregateRows labels the rows of a single-label batch: its queries with
// the aggregator, the rows asked before the stream with their outcome, the
// others abstain.
func (st *runState) aggregateRows(b *batch, ob *outBuilders) (labels, sources arrow.Array) {
	n := int(b.rec.NumRows())
	lb, sb := ob.label, ob.source
	lb.Reserve(n)
	sb.Reserve(n)
	k := 0 // the batch's next query
	for i := 0; i < n; i++ {
		c, src := -1, SourceAbstained
		q := -1
		if k < b.queryN && (b.sel == nil || int(b.sel[k]) == i) {
			q, k = k, k+1
		}
		row := b.first + int64(i)
		if q >= 0 && !st.stopped.Load() {
			c, src = st.query(b, q, row)
		} else if row < int64(len(st.pre)) { // asked before the stream
			c, src = st.asked(row)
		}
		if src == st.answeredBy() {
			st.sources.Teachers++
		} else {
			st.sources.Abstained++
		}
		st.classes.appendClass(lb, c)
		sb.Append(src)
		if (row+1)%st.step == 0 {
			st.mark(row + 1)
		}
	}
	return lb.NewArray(), sb.NewArray()
}

// query puts the q-th query of b (public row row) to the aggregator and
// counts what happened: its class and source.
func (st *runState) query(b *batch, q int, row int64) (int, string) {
	classes := len(st.classes.values)
	var zc int64
	if len(b.zCheck) > 0 {
		zc = b.zCheck[q]
	}
	var rd *roundDraw
	if len(b.zRep) > 0 {
		rd = &b.zRep[q]
	}
	c, o := st.agg.query(b.counts[q*classes:(q+1)*classes], zc, b.zArg[q*classes:(q+1)*classes], rd, st.filter)
	switch o {
	case outAnswered:
		st.answered++
		st.released[c]++
		st.seen++
		if st.student != nil {
			st.student.addAnswer(b.x.Row(q), c)
		}
		return c, st.answeredBy()
	case outAbstained:
		st.abstained++
		st.seen++
	case outStopped:
		st.stopped.Store(true)
		st.stopRow = row
	}
	return -1, SourceAbstained
}

// answeredBy is the pate_source of an answered row.
func (st *runState) answeredBy() string {
	if st.answerSource == "" {
		return SourceTeachers
	}
	return st.answerSource
}

// asked counts the outcome of a row asked before the stream (--select
// uncertain).
func (st *runState) asked(row int64) (int, string) {
	switch v := st.pre[row]; {
	case v >= 0:
		st.answered++
		st.released[v]++
		st.seen++
		return int(v), st.answeredBy()
	case v == preAbstained:
		st.abstained++
		st.seen++
	}
	return -1, SourceAbstained
}

// writeStage writes the labelled batches to out.
func writeStage(p *pipeline, out RecordWriter) error {
	for rec := range p.labelled {
		err := out.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	return nil
}

// drawNoise draws the noise of a batch's queries, split over the cores.
// A seeded run gives every (batch, part) its own stream, so its noise does
// not depend on the scheduling. Each label column of a multi-label run has
// streams of its own.
func (st *runState) drawNoise(b *batch, classes int) {
	if st.agg.round != nil { // --replicable (one label column): each row's noise from its own keyed stream
		b.zArg = grow(b.zArg, b.queryN*classes)
		b.zCheck = b.zCheck[:0]
		if st.agg.check != nil {
			b.zCheck = grow(b.zCheck, b.queryN)
		}
		st.drawReplicable(b, classes)
		return
	}
	b.zCheck, b.zArg = st.drawLabelNoise(st.agg, streamAggregate, b, classes, b.zCheck, b.zArg)
	for j := range b.more {
		lv, lr := &b.more[j], st.labels[j+1]
		lv.zCheck, lv.zArg = st.drawLabelNoise(lr.agg, streamLabel+uint64(j+1), b, len(lr.classes.values), lv.zCheck, lv.zArg)
	}
}

// drawLabelNoise draws the noise of one label column's queries of b with
// agg, in the noise streams of kind stream, reusing zCheck and zArg.
func (st *runState) drawLabelNoise(agg *aggregator, stream uint64, b *batch, classes int, zCheck, zArg []int64) ([]int64, []int64) {
	q := b.queryN
	zArg = grow(zArg, q*classes)
	zCheck = zCheck[:0]
	if agg.check != nil {
		zCheck = grow(zCheck, q)
	}
	// Parts end at multiples of a fixed number of rows (not one per core),
	// and a seeded run keys each part's noise stream by its first row: the
	// noise of a row does not depend on the machine, and not on the batch
	// size either when batches are multiples of the part size.
	const part = 8192
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for lo := 0; lo < q; {
		row := b.first + int64(lo)
		hi := min(q, lo+int(part-row%part))
		wg.Add(1)
		sem <- struct{}{}
		go func(lo, hi int, row int64) {
			defer func() { <-sem; wg.Done() }()
			src := st.l.source(stream + uint64(row)<<8)
			var check []int64
			if len(zCheck) > 0 {
				check = zCheck[lo:hi]
			}
			agg.noiseFor(src, check, zArg[lo*classes:hi*classes])
		}(lo, hi, row)
		lo = hi
	}
	wg.Wait()
	return zCheck, zArg
}

func grow(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

// mark appends a timeline point after row rows. When the number of rows
// was not known in advance the timeline thins itself: past maxTimeline
// points every other point is dropped and the step doubles, so the report
// stays small however long the stream.
func (st *runState) mark(rows int64) {
	st.timeline = append(st.timeline, TimePoint{Rows: rows, Queries: st.seen,
		Answered: st.answered, Rho: Float(st.rhoSpent())})
	if len(st.timeline) > maxTimeline {
		kept := st.timeline[:0]
		for i, p := range st.timeline {
			if i%2 == 1 {
				kept = append(kept, p)
			}
		}
		st.timeline = kept
		st.step *= 2
	}
}

// maxTimeline bounds the report's timeline.
const maxTimeline = 400

func (st *runState) rhoSpent() float64 {
	switch f := st.filter.(type) {
	case *rdp.Filter:
		return f.Spent()
	case *unlimited:
		return f.spent
	case *pureFilter:
		return f.rhoSpent()
	}
	return 0
}

// voteEnsemble encodes the queried rows and counts the teachers' votes.
func (st *runState) voteEnsemble(b *batch) error {
	n, q := b.rec.NumRows(), int64(b.queryN)
	rec := b.rec
	if q < n {
		rec = b.rec.NewSlice(0, q)
		defer rec.Release()
	}
	if b.x == nil {
		b.x = learners.NewMatrix(0, st.enc.Dim())
	}
	if b.sel != nil {
		rec = b.rec // encode the batch, then keep the selected rows
	} else if st.student == nil { // nobody needs the encoded rows afterwards
		if ens := st.stacked(); ens != nil {
			if err := st.voteTiles(rec, ens, b); err != nil {
				return fmt.Errorf("%w: %s, rows %d–%d: %v", ErrInvalidInput, st.l.cfg.pub(), b.first, b.first+n-1, err)
			}
			return nil
		}
	}
	if err := st.enc.Encode(rec, b.x); err != nil {
		return fmt.Errorf("%w: %s, rows %d–%d: %v", ErrInvalidInput, st.l.cfg.pub(), b.first, b.first+n-1, err)
	}
	if b.sel != nil {
		for j, r := range b.sel {
			copy(b.x.Row(j), b.x.Row(int(r)))
		}
		b.x.Rows = len(b.sel)
		b.x.Data = b.x.Data[:len(b.sel)*b.x.Cols]
	}
	st.ens.Votes(b.x, b.counts)
	for j := range b.more { // the other label columns' teachers, on the same rows
		st.labels[j+1].ens.Votes(b.x, b.more[j].counts)
	}
	return nil
}

// stacked returns the ensembles of the label columns, in order, when every
// one is stacked for the fused kernel (see voteTiles); nil otherwise.
func (st *runState) stacked() []*learners.Ensemble {
	e, ok := st.ens.(*learners.Ensemble)
	if !ok || !e.Stacked() {
		return nil
	}
	out := []*learners.Ensemble{e}
	for j := 1; j < len(st.labels); j++ {
		ej := st.labels[j].ens
		if ej == nil || !ej.Stacked() {
			return nil
		}
		out = append(out, ej)
	}
	return out
}

// voteTiles counts the votes of the rows of rec in tiles of a few hundred
// rows, each encoded column-major and voted on at once by the goroutine that
// encoded it, while it is in that core's cache. Encoding a whole batch first
// would write it to memory and read it back.
//
// When the features are one float32 list column (an embedding), the
// teachers vote on Arrow's buffer as it is, the encoder's standardisation
// folded into their weights (learners.Ensemble.Fold); rows with a null, a
// NaN or an infinity, or of another length, are encoded as above. The
// folded votes may differ from the encoded ones on a teacher's near-tie
// (float32 rounding; see learners.FoldedEnsemble).
func (st *runState) voteTiles(rec arrow.Record, ens []*learners.Ensemble, b *batch) error {
	p, err := st.enc.Prepare(rec)
	if err != nil {
		return err
	}
	raw := p.Raw(st.folded(ens))
	n, dim := p.Rows(), st.enc.Dim()
	rows := min(4096, max(16, tileBytes/(4*max(1, dim))))
	tiles := (n + rows - 1) / rows
	counts := make([][]int32, len(ens))
	classes := make([]int, len(ens))
	counts[0], classes[0] = b.counts, ens[0].Classes()
	for j := 1; j < len(ens); j++ {
		counts[j], classes[j] = b.more[j-1].counts, ens[j].Classes()
	}
	var next atomic.Int64
	work := func() {
		bp := st.tileBufs.Get().(*[]float32)
		defer st.tileBufs.Put(bp)
		if len(*bp) < dim*rows {
			*bp = make([]float32, dim*rows)
		}
		x := *bp
		sub := make([][]int32, len(ens)) // raw: each ensemble's counts of a tile
		for {
			t := int(next.Add(1) - 1)
			if t >= tiles {
				return
			}
			lo, hi := t*rows, min(n, (t+1)*rows)
			if raw != nil {
				for j := range ens {
					sub[j] = counts[j][lo*classes[j] : hi*classes[j]]
				}
				raw.Votes(lo, hi, sub, x)
				continue
			}
			p.EncodeColumns(lo, hi, x, rows)
			for j, e := range ens {
				e.VotesColumns(x, rows, hi-lo, counts[j][lo*classes[j]:hi*classes[j]])
			}
		}
	}
	workers := min(tiles, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	return nil
}

// folded returns ens with the encoder's standardisation folded in, or nil
// when one of them cannot be folded; it folds them on its first call (from
// the vote stage's one goroutine) and again only if ens changes.
func (st *runState) folded(ens []*learners.Ensemble) []*learners.FoldedEnsemble {
	if slices.Equal(ens, st.foldsOf) {
		return st.folds
	}
	st.foldsOf, st.folds = slices.Clone(ens), nil
	folds := make([]*learners.FoldedEnsemble, len(ens))
	for j, e := range ens {
		if folds[j] = e.Fold(st.enc); folds[j] == nil {
			return nil
		}
	}
	st.folds = folds
	return folds
}

// tileBytes is the size of voteTiles' tiles of encoded values (a variable
// for BenchmarkVoteBatch). A tile's rows must stay in the core's L2 cache
// with the stacked weights (64 KiB for 250 teachers of 64 features), and
// each of its columns should be a long enough run for the hardware
// prefetcher: with 64 columns a tile of 32 KiB reads runs of 1 KiB per
// column, and the reads of the decoded batch, which comes from memory,
// stall.
var tileBytes = 128 << 10

func (st *runState) notAsked() int64 { return st.rows - st.seen }

// progress is what the progress display shows so far.
func (st *runState) progress() Progress {
	_, model := st.ens.(modelVoter) // labels every row; its ρ was charged, as planned, before the first
	return Progress{Rows: st.rows, Answered: st.answered, Abstained: st.rows - st.answered, EpsilonSpent: st.epsSpent(), Public: model}
}

// epsSpent is the realized spend so far, for the progress display: ρ
// converted as the run's report converts it (at δ less the class
// discovery's, on the orders the charges hold at), so that the bar never
// shows less than the report then states.
func (st *runState) epsSpent() float64 {
	if f, ok := st.filter.(*pureFilter); ok { // pure ε-DP events
		return f.epsSpent()
	}
	return st.l.epsilonOf(st.rhoSpent(), st.deltaConv)
}
