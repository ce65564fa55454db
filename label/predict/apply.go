package predict

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/learners"
)

// Metadata keys an output of a labeler carries besides the saving run's.
const (
	// MetaLabeler is the labeler's hash.
	MetaLabeler = "pate.labeler"
	// MetaCommand is the command that made the output ("predict").
	MetaCommand = "pate.command"
)

// constantStrings returns a string array of n copies of s.
func constantStrings(mem memory.Allocator, s string, n int) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	b.ReserveData(n * len(s))
	for i := 0; i < n; i++ {
		b.Append(s)
	}
	return b.NewArray()
}

// Plan is how a labeler labels the batches of one public schema: the
// output schema and the public columns kept. It is immutable.
type Plan struct {
	l      *Labeler
	keep   []int
	out    *arrow.Schema
	labels *label.ClassColumn
}

// Plan checks public against the labeler's encoder and chooses the output
// columns: keep (nil: every public column), then the label column, then
// label.SourceColumn, as pate label writes them.
func (l *Labeler) Plan(public *arrow.Schema, keep []string) (*Plan, error) {
	if err := l.man.Encoder.CheckSchema(public); err != nil {
		return nil, err
	}
	p := &Plan{l: l}
	taken := []string{l.label.Name, label.SourceColumn}
	if keep == nil {
		for i, f := range public.Fields() {
			if slices.Contains(taken, f.Name) {
				return nil, fmt.Errorf("predict: the public data has a column named %q, which the output's label or source takes; leave it out with --keep", f.Name)
			}
			p.keep = append(p.keep, i)
		}
	} else {
		for _, name := range keep {
			idx := public.FieldIndices(name)
			if len(idx) != 1 {
				return nil, fmt.Errorf("predict: --keep %q: the public data has %d columns of that name", name, len(idx))
			}
			if slices.Contains(taken, name) || slices.Contains(p.keep, idx[0]) {
				return nil, fmt.Errorf("predict: --keep %q: that name is taken or given twice", name)
			}
			p.keep = append(p.keep, idx[0])
		}
	}
	fields := make([]arrow.Field, 0, len(p.keep)+2)
	for _, i := range p.keep {
		fields = append(fields, public.Field(i))
	}
	fields = append(fields, l.label, arrow.Field{Name: label.SourceColumn, Type: arrow.BinaryTypes.String})
	p.out = arrow.NewSchema(fields, nil)
	var err error
	if p.labels, err = label.NewClassColumn(l.label.Type, l.man.Classes); err != nil {
		return nil, err
	}
	return p, nil
}

// OutputSchema is the schema of the labelled batches, without metadata.
func (p *Plan) OutputSchema() *arrow.Schema { return p.out }

// OutputMetadata is the metadata of an output of the labeler: the saving
// run's (its version, mechanism, ε, δ and report), with the report naming
// the labeler, plus the labeler's hash and the command.
func (l *Labeler) OutputMetadata() arrow.Metadata {
	md := make(map[string]string, len(l.man.Output)+2)
	for k, v := range l.man.Output {
		md[k] = v
	}
	md[MetaLabeler] = l.hash
	md[MetaCommand] = "predict"
	if rep, ok := md["pate.report"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(rep), &m) == nil && m != nil {
			info, _ := json.Marshal(map[string]any{
				"sha256": l.hash, "source": l.man.Model.Source, "learner": l.man.Model.Learner,
				"note": "labels made by applying the saved labeler: post-processing of the run this report describes, no further privacy cost",
			})
			m["labeler"] = info
			if b, err := json.Marshal(m); err == nil {
				md["pate.report"] = string(b)
			}
		}
	}
	return arrow.MetadataFrom(md)
}

// Applier labels record batches with a Plan. It holds scratch buffers: use
// one per goroutine.
type Applier struct {
	p    *Plan
	mem  memory.Allocator
	x    *learners.Matrix
	pred []int32
}

// NewApplier returns an Applier that allocates output columns from mem.
func (p *Plan) NewApplier(mem memory.Allocator) *Applier {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Applier{p: p, mem: mem, x: learners.NewMatrix(0, p.l.man.Encoder.Dim())}
}

// Label returns the labelled batch of rec: its kept columns, the predicted
// label and the source. The caller releases it.
func (a *Applier) Label(rec arrow.Record) (arrow.Record, error) {
	l := a.p.l
	if err := l.man.Encoder.Encode(rec, a.x); err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	a.pred = slices.Grow(a.pred[:0], n)[:n]
	if n > 0 {
		l.model.Predict(a.x, a.pred)
	}
	la := a.p.labels.Build(a.mem, a.pred)
	defer la.Release()
	sa := constantStrings(a.mem, l.man.Model.Source, n)
	defer sa.Release()
	cols := make([]arrow.Array, 0, len(a.p.keep)+2)
	for _, i := range a.p.keep {
		cols = append(cols, rec.Column(i))
	}
	cols = append(cols, la, sa)
	return array.NewRecord(a.p.out, cols, int64(n)), nil
}
