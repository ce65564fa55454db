// The stream of the public rows: one function per stage (read, vote,
// aggregate, write), bounded channels between them, and the noise each
// batch draws. Run (run.go) sets it up; the votes are vote.go's.

package label

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"golang.org/x/sync/errgroup"

	"github.com/pate-tool/pate/learners"
)

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
