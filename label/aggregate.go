package label

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// Formats of a vote file for NewAggregate.
const (
	// VotesCounts has one integer column per class: how many teachers voted
	// for it (the PATE 2018 vote files).
	VotesCounts = "counts"
	// VotesPredictions has one integer column per teacher, or one list
	// column, holding each teacher's predicted class index.
	VotesPredictions = "predictions"
)

// NewAggregate prepares the aggregation of votes computed elsewhere: the
// same mechanisms, budget, output and report as New, with the teachers'
// votes read from a file. public, when not nil, is the schema of a file
// whose columns are carried to the output row for row.
func NewAggregate(cfg Config, votes, public *arrow.Schema) (*Labeler, error) {
	if cfg.Label == "" {
		cfg.Label = "label"
	}
	if cfg.VotesFormat == VotesPredictions && cfg.Teachers == 0 && !(votes.NumFields() == 1 && votes.Field(0).Type.ID() == arrow.LIST) {
		cfg.Teachers = votes.NumFields()
	}
	if (cfg.VotesFormat == "" || cfg.VotesFormat == VotesCounts) && cfg.Teachers < 1 {
		return nil, paramError("teachers", ": a counts vote file needs the number of teachers that voted (each row's total may not exceed it)")
	}
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	if !needsTeachers(cfg.Mechanism) {
		return nil, paramError("mechanism", " %s learns from the sensitive rows themselves, not from votes: use pate label", cfg.Mechanism)
	}
	l := &Labeler{cfg: cfg, public: public, votes: votes}
	switch cfg.VotesFormat {
	case "", VotesCounts:
		l.cfg.VotesFormat = VotesCounts
		if votes.NumFields() < 2 {
			return nil, invalid("%s: %d column(s); a counts vote file has one integer column per class (at least two)", cfg.votesName(), votes.NumFields())
		}
		for _, f := range votes.Fields() {
			if !arrow.IsInteger(f.Type.ID()) {
				return nil, invalid("%s: column %q is %s; vote counts must be integers", cfg.votesName(), f.Name, f.Type)
			}
		}
		l.numClasses = votes.NumFields()
		if cfg.Teachers < 1 {
			return nil, paramError("teachers", ": a counts vote file needs the number of teachers that voted (each row's total may not exceed it)")
		}
	case VotesPredictions:
		if votes.NumFields() == 1 && votes.Field(0).Type.ID() == arrow.LIST {
			if !arrow.IsInteger(votes.Field(0).Type.(*arrow.ListType).Elem().ID()) {
				return nil, invalid("%s: list column %q must hold integer class indices", cfg.votesName(), votes.Field(0).Name)
			}
			l.listVotes = true
			if cfg.Teachers < 1 {
				return nil, paramError("teachers", ": a list column of predictions needs the number of teachers (every list must have that length)")
			}
		} else {
			for _, f := range votes.Fields() {
				if !arrow.IsInteger(f.Type.ID()) {
					return nil, invalid("%s: column %q is %s; predictions must be integer class indices (one column per teacher, or one list column)", cfg.votesName(), f.Name, f.Type)
				}
			}
			if cfg.Teachers > 0 && cfg.Teachers != votes.NumFields() {
				return nil, paramError("teachers", " %d, but %s has %d teacher columns", cfg.Teachers, cfg.votesName(), votes.NumFields())
			}
			l.cfg.Teachers = votes.NumFields()
		}
		l.numClasses = cfg.NumClasses
		if cfg.Classes != nil {
			l.numClasses = len(cfg.Classes)
		}
		if l.numClasses < 2 {
			return nil, paramError("num-classes", ": predictions need the number of classes (at least two), or %v", ParamName("classes"))
		}
	default:
		return nil, paramError("votes-format", " must be %s or %s, got %q", VotesCounts, VotesPredictions, cfg.VotesFormat)
	}
	if cfg.Classes != nil && len(cfg.Classes) != l.numClasses {
		return nil, paramError("classes", " names %d classes, but the votes have %d", len(cfg.Classes), l.numClasses)
	}
	labelType := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if cfg.Classes != nil {
		labelType = arrow.BinaryTypes.String
	}
	l.labelField = arrow.Field{Name: l.cfg.Label, Type: labelType, Nullable: true}

	var fields []arrow.Field
	if public != nil {
		if err := l.selectKept(public); err != nil {
			return nil, err
		}
		for _, i := range l.keep {
			fields = append(fields, public.Field(i))
		}
	}
	fields = append(fields, l.labelField, arrow.Field{Name: SourceColumn, Type: arrow.BinaryTypes.String})
	l.out = arrow.NewSchema(fields, nil)
	return l, nil
}

// aggregateClasses is the public class set of a vote file: the names given
// with --classes (in vote order), or the class indices.
func (l *Labeler) aggregateClasses() *classSet {
	cs := &classSet{typ: l.labelField.Type, index: map[string]int{}}
	for c := 0; c < l.numClasses; c++ {
		v := strconv.Itoa(c)
		if l.cfg.Classes != nil {
			v = l.cfg.Classes[c]
		}
		cs.values = append(cs.values, v)
		cs.index[v] = c
		cs.ints = append(cs.ints, int64(c))
		cs.uints = append(cs.uints, uint64(c))
	}
	return cs
}

// RunVotes aggregates the votes row by row and writes the labelled rows to
// out. With public not nil, its rows are carried to the output in lockstep
// with the votes; the two must have the same number of rows.
func (l *Labeler) RunVotes(ctx context.Context, votes, public RecordReader, out RecordWriter) (*Report, error) {
	td := &teacherData{classes: l.aggregateClasses(), classesSource: "the vote file (" + l.cfg.VotesFormat + ")"}
	rep, agg, filter, err := l.prepareMechanism(td)
	if err != nil {
		return nil, err
	}
	rep.Command = "aggregate"
	rep.Learner = "external (votes from " + l.cfg.VotesFormat + ")"
	rep.Teachers = l.cfg.Teachers
	st := &runState{l: l, agg: agg, filter: filter, classes: td.classes, maxQueries: l.cfg.MaxQueries,
		deltaConv: l.cfg.Delta - td.discoveryDelta,
		step:      timelineStep(l.cfg.PublicRows), released: make([]int64, l.numClasses)}
	src := votes
	if public != nil {
		cur := &voteCursor{l: l, r: votes}
		defer cur.release()
		st.vote = func(b *batch) error { return cur.take(b.first, int(b.rec.NumRows()), b.queryN, b.counts) }
		st.skip = func(b *batch) error { return cur.take(b.first, int(b.rec.NumRows()), 0, nil) }
		src = public
		if err := st.stream(ctx, nil, src, out); err != nil {
			return nil, err
		}
		if err := cur.exhausted(); err != nil {
			return nil, err
		}
	} else {
		st.vote = func(b *batch) error { return l.histograms(b.rec, 0, b.queryN, b.first, b.counts) }
		if err := st.stream(ctx, nil, src, out); err != nil {
			return nil, err
		}
	}
	l.finishReport(rep, st, agg, filter, td)
	return rep, nil
}

// histograms turns rows [off, off+n) of a vote batch into vote histograms
// in dst (n × classes), checking every row: no negative count, no total
// above the number of teachers, no class index out of range.
func (l *Labeler) histograms(rec arrow.Record, off, n int, firstRow int64, dst []int32) error {
	m, k := l.numClasses, l.cfg.Teachers
	clear(dst[:n*m])
	switch {
	case l.cfg.VotesFormat == VotesCounts:
		for j := 0; j < m; j++ {
			col := rec.Column(j)
			for i := 0; i < n; i++ {
				v, ok := intAt(col, off+i)
				if !ok || v < 0 || v > int64(k) {
					return l.badVote(firstRow+int64(i), rec.Schema().Field(j).Name, ok, "a count between 0 and the number of teachers")
				}
				dst[i*m+j] = int32(v)
			}
		}
		for i := 0; i < n; i++ {
			var total int64
			for _, c := range dst[i*m : (i+1)*m] {
				total += int64(c)
			}
			if total > int64(k) {
				return invalid("%s: row %d: more votes in all than the %d teachers (--teachers)", l.cfg.votesName(), firstRow+int64(i), k)
			}
		}
	case l.listVotes:
		list := rec.Column(0).(*array.List)
		for i := 0; i < n; i++ {
			row := off + i
			if list.IsNull(row) {
				return invalid("%s: row %d: the list of predictions is null", l.cfg.votesName(), firstRow+int64(i))
			}
			lo, hi := list.ValueOffsets(row)
			if hi-lo != int64(k) {
				return invalid("%s: row %d: the number of predictions is not --teachers %d (each teacher votes exactly once)", l.cfg.votesName(), firstRow+int64(i), k)
			}
			for p := lo; p < hi; p++ {
				c, ok := intAt(list.ListValues(), int(p))
				if !ok || c < 0 || c >= int64(m) {
					return l.badVote(firstRow+int64(i), rec.Schema().Field(0).Name, ok, fmt.Sprintf("a class index in [0, %d)", m))
				}
				dst[i*m+int(c)]++
			}
		}
	default:
		for t := 0; t < k; t++ {
			col := rec.Column(t)
			for i := 0; i < n; i++ {
				c, ok := intAt(col, off+i)
				if !ok || c < 0 || c >= int64(m) {
					return l.badVote(firstRow+int64(i), rec.Schema().Field(t).Name, ok, fmt.Sprintf("a class index in [0, %d)", m))
				}
				dst[i*m+int(c)]++
			}
		}
	}
	return nil
}

// badVote refuses a vote file that valid teachers cannot have written. The
// row is a public row; the value, a vote, is not quoted: votes are
// statistics of the sensitive data (invariant 4).
func (l *Labeler) badVote(row int64, col string, ok bool, want string) error {
	if !ok {
		return invalid("%s: row %d, column %q: null where %s is needed", l.cfg.votesName(), row, col, want)
	}
	return invalid("%s: row %d, column %q: a value that is not %s", l.cfg.votesName(), row, col, want)
}

func intAt(a arrow.Array, i int) (int64, bool) {
	if a.IsNull(i) {
		return 0, false
	}
	switch c := a.(type) {
	case *array.Int8:
		return int64(c.Value(i)), true
	case *array.Int16:
		return int64(c.Value(i)), true
	case *array.Int32:
		return int64(c.Value(i)), true
	case *array.Int64:
		return c.Value(i), true
	case *array.Uint8:
		return int64(c.Value(i)), true
	case *array.Uint16:
		return int64(c.Value(i)), true
	case *array.Uint32:
		return int64(c.Value(i)), true
	case *array.Uint64:
		if c.Value(i) > 1<<62 {
			return 1 << 62, true
		}
		return int64(c.Value(i)), true
	}
	return 0, false
}

// voteCursor reads vote rows in step with the public batches, whatever the
// batch boundaries of the two files.
type voteCursor struct {
	l   *Labeler
	r   RecordReader
	rec arrow.Record
	off int
	row int64
}

// take consumes n vote rows starting at public row first; the q first are
// turned into histograms in dst.
func (c *voteCursor) take(first int64, n, q int, dst []int32) error {
	m := c.l.numClasses
	done := 0
	for done < n {
		if c.rec == nil || c.off >= int(c.rec.NumRows()) {
			if c.rec != nil {
				c.rec.Release()
				c.rec = nil
			}
			rec, err := c.r.Read()
			if errors.Is(err, io.EOF) {
				return invalid("%s has %d rows, fewer than %s (row counts must match)", c.l.cfg.votesName(), c.row, c.l.cfg.pub())
			}
			if err != nil {
				return errorf(err, "%s", c.l.cfg.votesName())
			}
			c.rec, c.off = rec, 0
		}
		k := min(n-done, int(c.rec.NumRows())-c.off)
		if lo, hi := done, min(done+k, q); hi > lo {
			if err := c.l.histograms(c.rec, c.off, hi-lo, c.row, dst[lo*m:hi*m]); err != nil {
				return err
			}
		}
		c.off += k
		c.row += int64(k)
		done += k
	}
	return nil
}

// exhausted checks that the votes have no rows left once the public data
// ended.
func (c *voteCursor) exhausted() error {
	if c.rec != nil && c.off < int(c.rec.NumRows()) {
		return invalid("%s has more rows than %s (row counts must match)", c.l.cfg.votesName(), c.l.cfg.pub())
	}
	for {
		rec, err := c.r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errorf(err, "%s", c.l.cfg.votesName())
		}
		rows := rec.NumRows()
		rec.Release()
		if rows > 0 {
			return invalid("%s has more rows than %s (row counts must match)", c.l.cfg.votesName(), c.l.cfg.pub())
		}
	}
}

func (c *voteCursor) release() {
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	}
}

// ReadVoteCounts reads a whole counts vote file (one integer column per
// class, one row per query) into memory, for analyses that need every row
// at once (pate analyze). name is how errors name the file; every error
// wraps ErrInvalidInput except a read error of r itself.
func ReadVoteCounts(r RecordReader, name string) ([][]int64, error) {
	s := r.Schema()
	if s.NumFields() < 2 {
		return nil, invalid("%s: %d column(s); a vote file has one integer column per class (at least two)", name, s.NumFields())
	}
	for _, f := range s.Fields() {
		if !arrow.IsInteger(f.Type.ID()) {
			return nil, invalid("%s: column %q is %s; vote counts must be integers", name, f.Name, f.Type)
		}
	}
	var votes [][]int64
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, errorf(err, "%s", name)
		}
		base := len(votes)
		for i := 0; i < int(rec.NumRows()); i++ {
			votes = append(votes, make([]int64, rec.NumCols()))
		}
		for j, col := range rec.Columns() {
			for i := 0; i < col.Len(); i++ {
				v, ok := intAt(col, i)
				if !ok || v < 0 {
					rec.Release()
					if !ok {
						return nil, invalid("%s: row %d, column %q is null", name, base+i, s.Field(j).Name)
					}
					return nil, invalid("%s: row %d, column %q has a negative count %d", name, base+i, s.Field(j).Name, v)
				}
				votes[base+i][j] = v
			}
		}
		rec.Release()
	}
	if len(votes) == 0 {
		return nil, invalid("%s: no rows", name)
	}
	return votes, nil
}
