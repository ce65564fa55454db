package label

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/learners"
)

// Query selection strategies accepted by Config.Select: which public rows
// are put to the teachers (and so spend the budget).
const (
	// SelectFirst queries the first rows, in order (the default).
	SelectFirst = "first"
	// SelectRandom queries a uniform random sample of the public rows, drawn
	// from the run's noise source: public randomness, independent of the data.
	SelectRandom = "random"
	// SelectUncertain queries, in rounds, the candidate rows the current
	// student is least sure of (active learning). The candidates are the
	// leading rows the feature encoder is fitted on (a bounded pool).
	SelectUncertain = "uncertain"
)

// Selections lists the query selection strategies, the default first.
var Selections = []string{SelectFirst, SelectRandom, SelectUncertain}

// Bounds of the student's memory: none grows with the number of public rows.
const (
	// StudentMaxTrainRows caps the answered rows the student is trained on
	// (a uniform reservoir over the answers).
	StudentMaxTrainRows = 200_000
	// SelfTrainPoolRows is the number of unlabelled public rows self-training
	// pseudo-labels (the first such rows of the stream).
	SelfTrainPoolRows = 20_000
	// SelfTrainConfidence is the probability the student must give a class
	// for self-training to pseudo-label a row with it.
	SelfTrainConfidence = 0.9
	// UncertainRounds is the number of query rounds of SelectUncertain; the
	// first is a uniform random sample of the candidates.
	UncertainRounds = 5
	// BalanceExponent tempers the student's class weights: a class of n_c
	// of the n answers weighs (n / (classes·n_c))^BalanceExponent per row.
	// The answers under-represent the classes the teachers rarely agree
	// on (the rare ones); 1 would weigh every class alike, which costs
	// accuracy where the imbalance is real.
	BalanceExponent = 0.5
)

// Noise streams of the student and the selection (see run.go).
const (
	streamSelect  = 4
	streamStudent = 5
)

// pre-answered pool rows (SelectUncertain): not queried, or abstained.
const (
	preNotAsked  = -1
	preAbstained = -2
)

// validateStudent checks the student and selection parameters.
func validateStudent(cfg *Config) error {
	if cfg.Student != "" && !slices.Contains(learners.LearnerNames, cfg.Student) {
		return paramError("student", " %q is not one of %s", cfg.Student, strings.Join(learners.LearnerNames, ", "))
	}
	if cfg.Select == "" {
		cfg.Select = SelectFirst
	}
	if !slices.Contains(Selections, cfg.Select) {
		return paramError("select", " %q is not one of %s", cfg.Select, strings.Join(Selections, ", "))
	}
	if cfg.SelfTrain && cfg.Student == "" {
		return paramError("self-train", " needs %v", ParamName("student"))
	}
	if cfg.Select == SelectUncertain && cfg.Student == "" {
		return paramError("select", " uncertain needs %v (the student's uncertainty chooses the queries)", ParamName("student"))
	}
	if cfg.Select == SelectRandom && cfg.PublicRows < 0 {
		return paramError("select", " random needs the number of public rows in advance (a file, not a stream)")
	}
	return nil
}

// selectionTarget is the number of queries a random or uncertain selection
// aims at: --max-queries, else every public row.
func (st *runState) selectionTarget() int64 {
	n := st.l.cfg.PublicRows
	if st.maxQueries > 0 && (n < 0 || st.maxQueries < n) {
		n = st.maxQueries
	}
	return n
}

// selectRandom marks the rows of b that are queries under SelectRandom:
// selection sampling (Knuth's algorithm S) draws exactly N of the R public
// rows, each subset equally likely, so each row is a query with
// probability N/R. The draws come from the run's noise source, in row order.
func (st *runState) selectRandom(b *batch) {
	n := b.rec.NumRows()
	b.sel = b.sel[:0]
	if st.selSrc == nil {
		st.selSrc = st.l.source(streamSelect)
	}
	for i := int64(0); i < n && st.chosen < st.target; i++ {
		left := uint64(st.l.cfg.PublicRows - (b.first + i))
		if left == 0 {
			break
		}
		if noise.UniformUint64(st.selSrc, left) < uint64(st.target-st.chosen) {
			b.sel = append(b.sel, int32(i))
			st.chosen++
		}
	}
	b.queryN = len(b.sel)
}

// student trains a model on the answered rows when the private queries end
// and labels every row the teachers did not. Until then the labelled
// batches are spooled to a temporary Arrow IPC stream, replayed once the
// student is trained; later batches are labelled directly. Its memory is
// bounded by StudentMaxTrainRows and SelfTrainPoolRows rows of features.
type student struct {
	st      *runState
	learner learners.Learner
	classes int
	dim     int

	x    []float32 // answered rows (reservoir), row-major
	y    []int32
	seen int64 // answered rows offered to the reservoir
	src  noise.Source

	pool     []float32 // self-training: unlabelled rows
	poolRows int

	model   learners.Model
	trained bool
	info    StudentReport
	scratch *learners.Matrix
	pred    []int32

	spoolPath string
	spoolFile *os.File
	// spoolLinked: the spool still has a name in the directory, for close
	// to remove.
	spoolLinked bool
	spoolW      *ipc.Writer
	spoolRows   int64
}

func newStudent(st *runState) (*student, error) {
	cfg := &st.l.cfg
	lr, err := learners.NewLearner(cfg.Student, st.l.learnerOptions())
	if err != nil {
		return nil, paramError("student", ": %v", err)
	}
	s := &student{st: st, learner: lr, classes: len(st.classes.values), dim: st.enc.Dim(),
		src: st.l.source(streamStudent), scratch: learners.NewMatrix(0, st.enc.Dim())}
	s.info.Learner = cfg.Student
	if cfg.SelfTrain {
		s.info.SelfTraining = &SelfTrainInfo{Confidence: SelfTrainConfidence}
	}
	return s, nil
}

// addAnswer offers one answered row (its encoded features and released
// class) to the training reservoir.
func (s *student) addAnswer(row []float32, c int) {
	s.seen++
	if len(s.y) < StudentMaxTrainRows {
		s.x = append(s.x, row...)
		s.y = append(s.y, int32(c))
		return
	}
	if j := noise.UniformUint64(s.src, uint64(s.seen)); j < StudentMaxTrainRows {
		copy(s.x[int(j)*s.dim:], row)
		s.y[j] = int32(c)
	}
}

// ready says whether the student can be trained once the queries are over:
// self-training waits for its pool of unlabelled rows.
func (s *student) ready() bool {
	return !s.st.l.cfg.SelfTrain || s.poolRows >= SelfTrainPoolRows
}

// spool writes one labelled batch of the query phase: the public input
// columns, the label and the source.
func (s *student) spool(rec arrow.Record, la, sa arrow.Array) error {
	mem := s.st.l.cfg.Allocator
	fields := append(slices.Clone(rec.Schema().Fields()),
		arrow.Field{Name: "pate.spool.label", Type: la.DataType(), Nullable: true},
		arrow.Field{Name: "pate.spool.source", Type: arrow.BinaryTypes.String})
	schema := arrow.NewSchema(fields, nil)
	if s.spoolW == nil {
		f, err := os.CreateTemp("", "pate-spool-*.arrows")
		if err != nil {
			return fmt.Errorf("student: creating the spool: %w", err)
		}
		s.spoolFile, s.spoolPath = f, f.Name()
		// Unlinked at once where the system allows it (the open file stays
		// readable): a run killed outright then leaves nothing behind.
		s.spoolLinked = os.Remove(f.Name()) != nil
		s.spoolW = ipc.NewWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	}
	cols := append(slices.Clone(rec.Columns()), la, sa)
	sr := array.NewRecord(schema, cols, rec.NumRows())
	defer sr.Release()
	if err := s.spoolW.Write(sr); err != nil {
		return fmt.Errorf("student: writing the spool %s: %w", s.spoolPath, err)
	}
	s.spoolRows += rec.NumRows()
	if s.st.l.cfg.SelfTrain && s.poolRows < SelfTrainPoolRows {
		if err := s.encode(rec); err != nil {
			return err
		}
		src := sa.(*array.String)
		for i := 0; i < int(rec.NumRows()) && s.poolRows < SelfTrainPoolRows; i++ {
			if src.Value(i) != SourceTeachers {
				s.pool = append(s.pool, s.scratch.Row(i)...)
				s.poolRows++
			}
		}
	}
	return nil
}

func (s *student) encode(rec arrow.Record) error {
	if err := s.st.enc.Encode(rec, s.scratch); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidInput, s.st.l.cfg.pub(), err)
	}
	return nil
}

// train fits the student on the answered rows, then with --self-train
// pseudo-labels the confident pool rows and fits once more.
func (s *student) train() error {
	s.trained = true
	s.info.TrainedOn = int64(len(s.y))
	if len(s.y) == 0 {
		s.st.l.cfg.warn("no query was answered: the student cannot be trained, the other rows abstain")
		return nil
	}
	s.warnFewAnswers()
	x := &learners.Matrix{Rows: len(s.y), Cols: s.dim, Data: s.x}
	m, err := s.fit(x, s.y)
	if err != nil {
		return fmt.Errorf("training the student: %w", err)
	}
	s.model = m
	if st := s.info.SelfTraining; st != nil && s.poolRows > 0 {
		st.Pool = int64(s.poolRows)
		pm, ok := m.(learners.ProbModel)
		if !ok {
			return fmt.Errorf("student %s gives no probabilities for self-training", s.info.Learner)
		}
		pool := &learners.Matrix{Rows: s.poolRows, Cols: s.dim, Data: s.pool}
		proba := make([]float32, s.poolRows*s.classes)
		pm.PredictProba(pool, proba)
		xs, ys := slices.Clone(s.x), slices.Clone(s.y)
		for i := 0; i < s.poolRows; i++ {
			p := proba[i*s.classes : (i+1)*s.classes]
			best := 0
			for c := range p {
				if p[c] > p[best] {
					best = c
				}
			}
			if float64(p[best]) >= SelfTrainConfidence {
				xs = append(xs, pool.Row(i)...)
				ys = append(ys, int32(best))
				st.PseudoLabelled++
			}
		}
		if st.PseudoLabelled > 0 {
			m2, err := s.fit(&learners.Matrix{Rows: len(ys), Cols: s.dim, Data: xs}, ys)
			if err != nil {
				return fmt.Errorf("self-training the student: %w", err)
			}
			s.model = m2
		}
		s.pool = nil
	}
	return nil
}

// label returns rec's label and source columns: the student's prediction
// for every row whose source (old, when given) is not the teachers.
func (s *student) label(rec arrow.Record, oldLabel arrow.Array, oldSource *array.String) (arrow.Array, arrow.Array, error) {
	n := int(rec.NumRows())
	if s.model != nil {
		if err := s.encode(rec); err != nil {
			return nil, nil, err
		}
		if cap(s.pred) < n {
			s.pred = make([]int32, n)
		}
		s.pred = s.pred[:n]
		s.model.Predict(s.scratch, s.pred)
	}
	mem := s.st.l.cfg.Allocator
	lb := array.NewBuilder(mem, s.st.l.labelField.Type)
	defer lb.Release()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	lb.Reserve(n)
	sb.Reserve(n)
	sc := &s.st.sources
	for i := 0; i < n; i++ {
		if oldSource != nil && oldSource.Value(i) == SourceTeachers {
			if err := lb.AppendValueFromString(oldLabel.ValueStr(i)); err != nil {
				return nil, nil, fmt.Errorf("student: replaying a label: %w", err)
			}
			sb.Append(SourceTeachers)
			continue // counted when spooled
		}
		if oldSource != nil {
			sc.Abstained-- // counted as abstained when spooled
		}
		if s.model == nil {
			s.st.classes.appendClass(lb, -1)
			sb.Append(SourceAbstained)
			sc.Abstained++
			continue
		}
		s.st.classes.appendClass(lb, int(s.pred[i]))
		sb.Append(SourceStudent)
		sc.Student++
	}
	return lb.NewArray(), sb.NewArray(), nil
}

// finish trains the student and replays the spool through send.
func (s *student) finish(ctx context.Context, send func(arrow.Record) error) error {
	if err := s.train(); err != nil {
		return err
	}
	if s.spoolW == nil {
		return nil
	}
	if err := s.spoolW.Close(); err != nil {
		return fmt.Errorf("student: closing the spool: %w", err)
	}
	s.spoolW = nil
	if _, err := s.spoolFile.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("student: rewinding the spool: %w", err)
	}
	r, err := ipc.NewReader(s.spoolFile, ipc.WithAllocator(s.st.l.cfg.Allocator))
	if err != nil {
		return fmt.Errorf("student: reading the spool: %w", err)
	}
	defer r.Release()
	nf := int(r.Schema().NumFields())
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.Record()
		pub := array.NewRecord(arrow.NewSchema(rec.Schema().Fields()[:nf-2], nil), rec.Columns()[:nf-2], rec.NumRows())
		la, sa, err := s.label(pub, rec.Column(nf-2), rec.Column(nf-1).(*array.String))
		if err != nil {
			pub.Release()
			return err
		}
		out := s.st.outRecord(pub, la, sa)
		pub.Release()
		if err := send(out); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("student: reading the spool: %w", err)
	}
	return nil
}

// close removes the spool, whatever happened.
func (s *student) close() {
	if s.spoolW != nil {
		_ = s.spoolW.Close()
	}
	if s.spoolFile != nil {
		_ = s.spoolFile.Close()
		if s.spoolLinked {
			_ = os.Remove(s.spoolPath)
		}
	}
}

// outRecord builds an output record from the public batch rec, the label
// column la, the source column sa and, in a multi-label run, the label
// columns after the first (more); it releases them.
func (st *runState) outRecord(rec arrow.Record, la, sa arrow.Array, more ...arrow.Array) arrow.Record {
	cols := make([]arrow.Array, 0, len(st.l.keep)+2+len(more))
	for _, j := range st.l.keep {
		cols = append(cols, rec.Column(j))
	}
	cols = append(cols, la)
	cols = append(cols, more...)
	cols = append(cols, sa)
	out := array.NewRecord(st.l.out, cols, rec.NumRows())
	la.Release()
	sa.Release()
	for _, a := range more {
		a.Release()
	}
	return out
}

// selectUncertain runs the private queries of SelectUncertain before the
// stream: the candidates are the head rows (the bounded sample the encoder
// was fitted on). The first round queries a uniform random sample of them;
// each later round trains the student on the answers so far and queries
// the unqueried candidates with the smallest margin between the student's
// two most probable classes. The student sees released labels only, so the
// choice is post-processing. The outcome of each candidate is kept in
// st.pre for the stream, which releases it in row order.
func (st *runState) selectUncertain(head []arrow.Record) error {
	sp := st.student
	classes := len(st.classes.values)
	dim := st.enc.Dim()
	var rows int
	for _, r := range head {
		rows += int(r.NumRows())
	}
	x := learners.NewMatrix(rows, dim)
	counts := make([]int32, rows*classes)
	m := learners.NewMatrix(0, dim)
	// Linear teachers vote on every candidate at once (one fused kernel
	// pass); others, whose votes cost far more (boosted trees: thousands
	// of tree walks a row), vote on a candidate when it is put to them.
	ens, _ := st.ens.(*learners.Ensemble)
	lazy := ens == nil || !ens.Stacked()
	off := 0
	for _, r := range head {
		if err := st.enc.Encode(r, m); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidInput, st.l.cfg.pub(), err)
		}
		copy(x.Data[off*dim:], m.Data[:m.Rows*dim])
		if !lazy {
			st.ens.Votes(m, counts[off*classes:(off+m.Rows)*classes])
		}
		off += m.Rows
	}
	target := int(min(st.selectionTarget(), int64(rows)))
	if st.selectionTarget() < 0 {
		target = rows
	}
	st.pre = make([]int32, rows)
	for i := range st.pre {
		st.pre[i] = preNotAsked
	}
	src := st.l.source(streamSelect)
	zCheck := make([]int64, 1)
	zArg := make([]int64, classes)
	one := &learners.Matrix{Rows: 1, Cols: dim}
	ask := func(i int) bool { // false: the budget stopped the queries
		if lazy {
			one.Data = x.Row(i)
			st.ens.Votes(one, counts[i*classes:(i+1)*classes])
		}
		st.agg.noiseFor(src, zCheck, zArg)
		c, o := st.agg.query(counts[i*classes:(i+1)*classes], zCheck[0], zArg, nil, st.filter)
		switch o {
		case outAnswered:
			st.pre[i] = int32(c)
			sp.addAnswer(x.Row(i), c)
		case outAbstained:
			st.pre[i] = preAbstained
		case outStopped:
			st.stopped.Store(true)
			st.stopRow = int64(i)
			return false
		}
		return true
	}
	perRound := max(1, (target+UncertainRounds-1)/UncertainRounds)
	// Round 1: a uniform random sample (partial Fisher–Yates).
	perm := make([]int, rows)
	for i := range perm {
		perm[i] = i
	}
	asked := 0
	for ; asked < min(perRound, target); asked++ {
		j := asked + int(noise.UniformUint64(src, uint64(rows-asked)))
		perm[asked], perm[j] = perm[j], perm[asked]
		if !ask(perm[asked]) {
			return nil
		}
	}
	proba := make([]float32, rows*classes)
	margin := make([]float32, rows)
	predicted := make([]int32, rows)
	for asked < target {
		if len(sp.y) == 0 { // nothing to learn from yet: keep sampling at random
			j := asked + int(noise.UniformUint64(src, uint64(rows-asked)))
			perm[asked], perm[j] = perm[j], perm[asked]
			if !ask(perm[asked]) {
				return nil
			}
			asked++
			continue
		}
		mod, err := sp.fit(&learners.Matrix{Rows: len(sp.y), Cols: dim, Data: sp.x}, sp.y)
		if err != nil {
			return fmt.Errorf("training the selection student: %w", err)
		}
		pm, ok := mod.(learners.ProbModel)
		if !ok {
			return fmt.Errorf("student %s gives no probabilities for --select uncertain", sp.info.Learner)
		}
		pm.PredictProba(x, proba)
		margins(proba, classes, margin, predicted)
		rest := perm[asked:]
		slices.SortStableFunc(rest, func(i, j int) int {
			return cmp.Or(cmp.Compare(margin[i], margin[j]), i-j)
		})
		balanceRound(rest, min(perRound, target-asked), predicted, classes)
		end := min(target, asked+perRound)
		for ; asked < end; asked++ {
			if !ask(perm[asked]) {
				return nil
			}
		}
	}
	return nil
}

// margins sets, for each row of proba (classes probabilities a row), the
// margin between its two most probable classes and the most probable one.
func margins(proba []float32, classes int, margin []float32, predicted []int32) {
	for i := range margin {
		p := proba[i*classes : (i+1)*classes]
		var a, b float32 // two largest
		top := 0
		for c, v := range p {
			if v > a {
				a, b, top = v, a, c
			} else if v > b {
				b = v
			}
		}
		margin[i] = a - b
		predicted[i] = int32(top)
	}
}

// startStudent prepares the selection and, with Config.Student, the
// student; SelectUncertain puts its queries here, before the stream.
func (st *runState) startStudent(head []arrow.Record) error {
	cfg := &st.l.cfg
	st.target = st.selectionTarget()
	if cfg.Student == "" {
		return nil
	}
	sp, err := newStudent(st)
	if err != nil {
		return err
	}
	st.student = sp
	if cfg.Select == SelectUncertain {
		return st.selectUncertain(head)
	}
	return nil
}

// fit trains the student's learner on answered (or pseudo-labelled) rows.
// When the answers are imbalanced (see imbalanced), the classes get
// balancing weights (see BalanceExponent), so that a class the answers
// hold few of is not drowned by the majority: as row weights for a learner
// that takes them, else by repeating the rows of the lighter classes.
// Otherwise every row weighs the same. The answers are released labels: their
// class counts are public, and so is this choice.
func (s *student) fit(x *learners.Matrix, y []int32) (learners.Model, error) {
	if !imbalanced(y, s.classes) {
		return s.learner.Fit(x, y, s.classes)
	}
	w := classWeights(y, s.classes, BalanceExponent)
	if wl, ok := s.learner.(learners.WeightedLearner); ok {
		return wl.FitWeighted(x, y, w, s.classes)
	}
	xr, yr := replicate(x, y, w)
	return s.learner.Fit(xr, yr, s.classes)
}

// replicate stands in for row weights with a learner that takes none:
// each row is repeated w/w_min times (rounded; the lightest class's rows
// once each), scaled down to at most maxReplication times the rows in all,
// so that memory stays bounded by the answers'.
func replicate(x *learners.Matrix, y []int32, w []float32) (*learners.Matrix, []int32) {
	wmin := float64(slices.Min(w))
	extra := 0.0 // the copies beyond each row's first
	for _, v := range w {
		extra += float64(v)/wmin - 1
	}
	copies := func(v float32) int { return int(math.Round(float64(v)/wmin - 1)) }
	if budget := (maxReplication - 1) * float64(len(y)); extra > budget {
		scale := budget / extra
		copies = func(v float32) int { return int((float64(v)/wmin - 1) * scale) }
	}
	out := learners.NewMatrix(0, x.Cols)
	var yr []int32
	for i, c := range y {
		for range 1 + copies(w[i]) {
			out.Data = append(out.Data, x.Row(i)...)
			out.Rows++
			yr = append(yr, c)
		}
	}
	return out, yr
}

// maxReplication bounds replicate's rows, as a multiple of its input's.
const maxReplication = 4

// ImbalanceRatio is the ratio of the largest to the smallest class count
// among the answers above which the student weighs the classes: Adult's
// answers (about 3 to 1, as its data) are fitted as they are.
const ImbalanceRatio = 4

// imbalanced reports whether the largest class of y holds more than
// ImbalanceRatio times the rows of the smallest class present.
func imbalanced(y []int32, classes int) bool {
	counts := make([]int, classes)
	for _, c := range y {
		counts[c]++
	}
	lo, hi := len(y), 0
	for _, n := range counts {
		if n > 0 {
			lo, hi = min(lo, n), max(hi, n)
		}
	}
	return hi > ImbalanceRatio*lo
}

// classWeights returns each row's weight (n / (k·n_c))^alpha, with n_c the
// rows of its class and k the classes present: alpha = 1 weighs every
// class alike, 0 every row alike.
func classWeights(y []int32, classes int, alpha float64) []float32 {
	counts := make([]int, classes)
	for _, c := range y {
		counts[c]++
	}
	present := 0
	for _, n := range counts {
		if n > 0 {
			present++
		}
	}
	per := make([]float32, classes)
	for c, n := range counts {
		if n > 0 {
			per[c] = float32(math.Pow(float64(len(y))/(float64(present)*float64(n)), alpha))
		}
	}
	w := make([]float32, len(y))
	for i, c := range y {
		w[i] = per[c]
	}
	return w
}

// binSampleRows bounds the public rows the bin edges are fitted on: every
// s-th row of the head, so that a sorted file does not bias them.
const binSampleRows = 20_000

// publicBins fits the split edges of the histogram learners on the public
// head (headRows rows, evenly thinned to binSampleRows), when the teachers
// or the student are one (invariant 2: nothing a teacher splits on is
// fitted on sensitive data); nil otherwise.
func (l *Labeler) publicBins(enc *learners.Encoder, head []arrow.Record, headRows int) (*learners.Bins, error) {
	cfg := &l.cfg
	if cfg.LearnerOptions.Bins != nil || (cfg.Learner != "gbt" && cfg.Student != "gbt") {
		return nil, nil
	}
	x, err := publicSample(enc, head, headRows, binSampleRows)
	if err != nil {
		return nil, err
	}
	return learners.PublicBins(x, learners.DefaultMaxBins), nil
}

// publicSample encodes every s-th row of the public head (headRows rows),
// s chosen so that at most about maxRows are kept and a sorted file does
// not bias them.
func publicSample(enc *learners.Encoder, head []arrow.Record, headRows, maxRows int) (*learners.Matrix, error) {
	step := max(1, (headRows+maxRows-1)/maxRows)
	dim := enc.Dim()
	x := learners.NewMatrix(0, dim)
	x.Data = make([]float32, 0, (headRows/step+1)*dim)
	m := learners.NewMatrix(0, dim)
	next := 0 // the next kept row, counted over the head
	first := 0
	for _, r := range head {
		if err := enc.Encode(r, m); err != nil {
			return nil, err
		}
		for ; next < first+m.Rows; next += step {
			x.Data = append(x.Data, m.Row(next-first)...)
			x.Rows++
		}
		first += m.Rows
	}
	return x, nil
}

// learnerOptions are the learner options of the run: the configuration's,
// with the public bin edges Run fitted.
func (l *Labeler) learnerOptions() learners.LearnerOptions {
	o := l.cfg.LearnerOptions
	if o.Bins == nil {
		o.Bins = l.bins
	}
	return o
}

// balanceRound reorders the candidates rest (least sure first) so that
// its first n are the round's queries taken class by class: the least
// sure candidate the student predicts class 0, then class 1, …, round
// robin over the classes it predicts for some candidate (each turn in the
// order of their margins, should the budget stop it midway). The plain
// smallest margins would spend a round on the classes the student
// confuses most, and a rare class it never predicts with confidence
// would get no answers to learn from (class-balanced uncertainty). The
// rest keep their order after the n.
func balanceRound(rest []int, n int, predicted []int32, classes int) {
	if n <= 0 || classes < 2 {
		return
	}
	queues := make([][]int, classes)
	pos := make(map[int]int, len(rest))
	for p, i := range rest {
		queues[predicted[i]] = append(queues[predicted[i]], i)
		pos[i] = p
	}
	picked := make([]int, 0, len(rest))
	taken := make(map[int]bool, n)
	for len(picked) < n {
		// One turn: each class's least sure candidate, least sure first.
		start := len(picked)
		for c := range queues {
			if len(queues[c]) == 0 || len(picked) == n {
				continue
			}
			i := queues[c][0]
			queues[c] = queues[c][1:]
			picked = append(picked, i)
			taken[i] = true
		}
		if len(picked) == start {
			break
		}
		turn := picked[start:]
		slices.SortFunc(turn, func(a, b int) int { return pos[a] - pos[b] })
	}
	for _, i := range rest {
		if !taken[i] {
			picked = append(picked, i)
		}
	}
	copy(rest, picked)
}

// StudentFewAnswers is the number of answers a class below which the
// student's labels are called poor on stderr.
const StudentFewAnswers = 5

// warnFewAnswers says on stderr when the student learns from so few
// answers, or so few of the classes, that its labels of every other row
// will be poor. The answers are the mechanism's released labels, so their
// number and classes are public.
func (s *student) warnFewAnswers() {
	seen := make(map[int32]bool)
	for _, y := range s.y {
		seen[y] = true
	}
	if len(s.y) >= StudentFewAnswers*s.classes && len(seen) == s.classes {
		return
	}
	s.st.l.cfg.warn("the student learns from few answers (%d, covering %d of the %d classes; fewer than %d a class): "+
		"it labels the other rows poorly and never with a class it was not shown; fewer teachers (--teachers), "+
		"a larger ε or --mechanism dp-logreg would do better", len(s.y), len(seen), s.classes, StudentFewAnswers)
}
