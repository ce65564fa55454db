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
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"

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
	head, headRows, err := l.readPublicHead(ctx, public)
	defer func() { releaseAll(head) }() // head is nil once the stream owns it
	if err != nil {
		return nil, err
	}
	enc, err := l.fitEncoder(head, headRows, sensitive.Schema())
	if err != nil {
		return nil, err
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

	return l.release(ctx, &head, public, out, enc, ens, td)
}

// release is a run once its voter is ready: it plans the mechanism, streams
// the public batches (*head first, which it takes over) through the voter
// and the aggregator, and writes the labelled batches to out.
func (l *Labeler) release(ctx context.Context, head *[]arrow.Record, public RecordReader, out RecordWriter, enc *learners.Encoder, ens voter, td *teacherData) (*Report, error) {
	cfg := &l.cfg
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
	if err := st.startStudent(*head); err != nil {
		return nil, spentBefore(err, discovered)
	}
	if st.student != nil {
		defer st.student.close()
	}
	err = st.stream(ctx, *head, public, out)
	*head = nil // the stream owns (and has released) the head batches
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

// readPublicHead reads the head of the public stream, which the encoder
// and the bin edges are fitted on and which is then labelled like the rest;
// a stream without rows is refused.
func (l *Labeler) readPublicHead(ctx context.Context, public RecordReader) ([]arrow.Record, int, error) {
	cfg := &l.cfg
	head, headRows, err := readHead(ctx, public, cfg.EncoderOptions.MaxSampleRows)
	if err != nil {
		return head, 0, errorf(err, "%s", cfg.pub())
	}
	if headRows == 0 {
		return head, 0, invalid("%s has no rows", cfg.pub())
	}
	return head, headRows, nil
}

// fitEncoder fits the run's encoder on the public head, row identifiers
// left out (invariant 2: public data only), checks the sensitive schema
// against it and fits the learners' bin edges: what a run trains its
// teachers with, wherever they are trained.
func (l *Labeler) fitEncoder(head []arrow.Record, headRows int, sensitive *arrow.Schema) (*learners.Encoder, error) {
	cfg := &l.cfg
	l.leaveOutIDs(head)
	enc, err := learners.FitEncoder(l.public, l.features, head, cfg.EncoderOptions)
	if err != nil {
		return nil, invalid("fitting the feature encoder on %s: %v", cfg.pub(), err)
	}
	if err := enc.CheckSchema(sensitive); err != nil {
		return nil, invalid("%s: %v", cfg.sens(), err)
	}
	if l.bins, err = l.publicBins(enc, head, headRows); err != nil {
		return nil, invalid("fitting the bin edges on %s: %v", cfg.pub(), err)
	}
	return enc, nil
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
