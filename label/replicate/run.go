package replicate

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/noise"
)

// Via is how a replication shares the seed of its replicable runs.
const Via = "derived from --seed by pate replicate (a diagnostic, not a release)"

// Options describe a replication.
type Options struct {
	// Config is the labelling every run makes; each run sets its seed,
	// its replicable rounding and PublicRows.
	Config label.Config
	// Sensitive holds every sensitive row; Name names it in errors.
	Sensitive arrow.Record
	Name      string
	// OpenPublic opens the public data afresh: it is read once per run.
	OpenPublic      func() (Public, error)
	Splits, Repeats int
	Seed            uint64
	// Replicable adds the runs with replicable rounding of grid Width.
	Replicable bool
	Width      float64
	// Truth holds the true label of every public row ("" unknown), or nil.
	Truth     []string
	TruthName string // the truth column's name
}

// Public is the public data of one run: a record stream that knows its
// row count, closed when the run is done.
type Public interface {
	label.RecordReader
	NumRows() int64
	Close() error
}

// Run labels the public rows with every part of every split of the
// sensitive rows and measures how often two parts disagree. The result is
// NOT PRIVATE until Release.
func Run(ctx context.Context, opt Options) (*Result, error) {
	mem := memory.DefaultAllocator
	splits := opt.Splits
	res := &Result{Private: false, Note: NotPrivate, Splits: splits, Repeats: opt.Repeats}
	if opt.Replicable {
		res.Replicable = &ReplicableArms{Width: opt.Width, Seed: Via}
	}
	arms := res.arms()
	base := opt.Seed
	for r := 0; r < opt.Repeats; r++ {
		parts := splitParts(label.SplitUnits(opt.Sensitive, splits, noise.NewSeededSource(base, uint64(1000+r))), splits)
		labels := make([][][]string, len(arms)) // arm, part, row
		for i := range labels {
			labels[i] = make([][]string, splits)
		}
		for p := range parts {
			if len(parts[p]) == 0 {
				return nil, fmt.Errorf("%w: repeat %d: part %d of %s is empty", label.ErrInvalidInput, r, p, opt.Name)
			}
			sub, err := takeRows(mem, opt.Sensitive, parts[p])
			if err != nil {
				return nil, err
			}
			for i := range arms {
				seed := base + uint64(r)*1_000_003 // shared by the parts
				if i%2 == 1 {
					seed += uint64(p+1) * 7919 // independent
				}
				var rep *label.Replicable
				if i >= 2 {
					rep = &label.Replicable{Key: key(seed), Width: opt.Width, Via: Via}
				}
				if labels[i][p], err = labelOnce(ctx, opt, sub, seed, rep); err != nil {
					break
				}
			}
			sub.Release()
			if err != nil {
				return nil, fmt.Errorf("repeat %d, part %d: %w", r, p, err)
			}
		}
		res.PublicRows = len(labels[0][0])
		res.Queried = queriedRows(opt.Config.MaxQueries, res.PublicRows)
		if opt.Truth != nil && len(opt.Truth) != res.PublicRows {
			return nil, &ParamError{Param: "truth", Value: opt.TruthName,
				Detail: fmt.Sprintf("%d values for %d public rows", len(opt.Truth), res.PublicRows)}
		}
		for i, arm := range arms {
			for a := 0; a < splits; a++ {
				arm.utility(labels[i][a], opt.Truth, res.Queried)
				for b := a + 1; b < splits; b++ {
					arm.compare(labels[i][a][:res.Queried], labels[i][b][:res.Queried])
				}
			}
		}
	}
	for _, arm := range arms {
		arm.finish()
	}
	return res, nil
}

// key is the shared key of a replicable run.
func key(seed uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("pate replicate key "), seed)
}

// labelOnce labels the public file with the sensitive rows of sub.
func labelOnce(ctx context.Context, opt Options, sub arrow.Record, seed uint64, rep *label.Replicable) ([]string, error) {
	mem := memory.DefaultAllocator
	pub, err := opt.OpenPublic()
	if err != nil {
		return nil, &ParamError{Param: "public", Err: err}
	}
	defer pub.Close()
	cfg := opt.Config
	cfg.PublicRows = pub.NumRows()
	cfg.Seed = &seed
	cfg.Replicable = rep
	cfg.BatchSize = 16384
	cfg.Allocator = mem
	lab, err := label.New(cfg, sub.Schema(), pub.Schema())
	if err != nil {
		return nil, err
	}
	out := &labelsOf{}
	if _, err := lab.Run(ctx, &oneRecord{rec: sub}, pub, out); err != nil {
		return nil, err
	}
	return out.out, nil
}

// splitParts groups row indices by their part.
func splitParts(part []int, k int) [][]int {
	parts := make([][]int, k)
	for i, p := range part {
		parts[p] = append(parts[p], i)
	}
	return parts
}

// takeRows copies the given rows of whole into one record.
func takeRows(mem memory.Allocator, whole arrow.Record, rows []int) (arrow.Record, error) {
	b := array.NewRecordBuilder(mem, whole.Schema())
	defer b.Release()
	for j := 0; j < int(whole.NumCols()); j++ {
		col := whole.Column(j)
		fb := b.Field(j)
		for _, r := range rows {
			if err := appendValue(fb, col, r); err != nil {
				return nil, fmt.Errorf("column %q: %w", whole.Schema().Field(j).Name, err)
			}
		}
	}
	return b.NewRecord(), nil
}

func appendValue(b array.Builder, a arrow.Array, i int) error {
	if a.IsNull(i) {
		b.AppendNull()
		return nil
	}
	switch col := a.(type) {
	case *array.Int64:
		b.(*array.Int64Builder).Append(col.Value(i))
	case *array.Int32:
		b.(*array.Int32Builder).Append(col.Value(i))
	case *array.Float64:
		b.(*array.Float64Builder).Append(col.Value(i))
	case *array.Float32:
		b.(*array.Float32Builder).Append(col.Value(i))
	case *array.String:
		b.(*array.StringBuilder).Append(col.Value(i))
	case *array.Boolean:
		b.(*array.BooleanBuilder).Append(col.Value(i))
	default:
		return fmt.Errorf("type %s is not supported by pate replicate", a.DataType())
	}
	return nil
}

// oneRecord serves a single record.
type oneRecord struct {
	rec  arrow.Record
	done bool
}

func (o *oneRecord) Schema() *arrow.Schema { return o.rec.Schema() }
func (o *oneRecord) Read() (arrow.Record, error) {
	if o.done {
		return nil, io.EOF
	}
	o.done = true
	o.rec.Retain()
	return o.rec, nil
}

// labelsOf collects the released label of every row as text ("" when the
// row abstained).
type labelsOf struct{ out []string }

func (l *labelsOf) Write(rec arrow.Record) error {
	n := int(rec.NumCols())
	lab, src := rec.Column(n-2), rec.Column(n-1).(*array.String)
	for i := 0; i < int(rec.NumRows()); i++ {
		v := ""
		if src.Value(i) != label.SourceAbstained && !lab.IsNull(i) {
			v = lab.ValueStr(i)
		}
		l.out = append(l.out, v)
	}
	return nil
}
