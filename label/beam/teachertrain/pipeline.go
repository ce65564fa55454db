// Package teachertrain trains the teachers of a pate run on Apache Beam,
// where the sensitive data lives: it reads the sensitive shards (a glob or
// a folder, on any Beam file system), assigns each row to its teacher by
// the same keyed function of its privacy unit as pate label, trains each
// teacher on a worker from its rows in the order pate label would read
// them, and writes the teacher ensemble file that pate label
// --teachers-from polls. With the same seed, public data and shards, the
// teachers are those pate label trains on the shards' folder, and so are
// the labels.
//
// The ensemble is NOT private (its models saw the sensitive rows without
// noise): it stays with the data owner, as the data does. Nothing is
// released here and nothing is charged: the labels, and their cost, come
// from pate label. The classes must be declared (the private class
// discovery is a charged mechanism that belongs to the labelling run) and
// the number of teachers is fixed here.
package teachertrain

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/beam/internal/beamfs"
	"github.com/pate-tool/pate/learners"
)

func init() {
	register.DoFn3x1[context.Context, ShardRef, func(int, []byte), error](&mapShardFn{})
	register.Emitter2[int, []byte]()
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(TeacherModel), error](&trainTeacherFn{})
	register.Iter1[[]byte]()
	register.Emitter1[TeacherModel]()
	register.DoFn3x1[context.Context, int, func(*TeacherModel) bool, error](&writeEnsembleFn{})
	register.Iter1[TeacherModel]()
}

// Options configure Prepare and Build.
type Options struct {
	// Public is the public data the encoder is fitted on (the file pate
	// label will label, or one like it); Private the sensitive shards: a
	// glob, or a local folder.
	Public, Private string
	// Output is the teacher ensemble file written.
	Output string
	// Label is the label column; Classes its declared classes (required).
	Label   string
	Classes []string
	// Teachers is the number of teachers; Learner trains each.
	Teachers int
	Learner  string
	// Features, Exclude and PrivacyUnit as pate label takes them.
	Features, Exclude []string
	PrivacyUnit       string
	// Seed seeds the partition key (as pate label --seed does); nil draws
	// it from a cryptographically secure source.
	Seed *uint64
	// BatchSize is the rows per record batch read (0: 16384).
	BatchSize int
	// Version is the pate version written into the file.
	Version string
}

// ErrUsage marks a mistake in the options.
var ErrUsage = errors.New("usage")

// Prepare lists the sensitive shards in the order pate label reads them,
// and fits what every teacher is trained with (label.TeacherSpec) from the
// public data and the seed, as pate label does. It reads the schema of the
// first shard, no sensitive row.
func Prepare(ctx context.Context, o Options) (*label.TeacherSpec, []ShardRef, error) {
	if o.Label == "" || o.Public == "" || o.Private == "" || o.Output == "" {
		return nil, nil, fmt.Errorf("%w: the label, the public data, the sensitive shards and the output are required", ErrUsage)
	}
	if len(o.Classes) < 2 {
		return nil, nil, fmt.Errorf("%w: declare the classes (two or more): the private class discovery is a charged mechanism that belongs to pate label, not to training", ErrUsage)
	}
	if o.Teachers < 1 {
		return nil, nil, fmt.Errorf("%w: the number of teachers must be at least 1, got %d", ErrUsage, o.Teachers)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 16384
	}
	shards, err := listShards(ctx, o.Private)
	if err != nil {
		return nil, nil, err
	}
	mem := memory.DefaultAllocator
	sensSchema, err := func() (*arrowio.Reader, error) {
		local, cleanup, err := beamfs.LocalCopy(ctx, shards[0].Path)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		return openShard(local, shards[0].Path, o.BatchSize, mem)
	}()
	if err != nil {
		return nil, nil, err
	}
	sens := sensSchema.Schema()
	sensSchema.Close()
	for i := range shards {
		shards[i].Columns = columnNames(sens)
	}
	localPub, cleanup, err := beamfs.LocalCopy(ctx, o.Public)
	if err != nil {
		return nil, nil, fmt.Errorf("public data %s: %w", o.Public, err)
	}
	defer cleanup()
	pub, err := arrowio.Open(localPub, arrowio.ReadOptions{BatchSize: o.BatchSize, Allocator: mem, CountRows: true})
	if err != nil {
		return nil, nil, fmt.Errorf("public data %s: %w", o.Public, err)
	}
	defer pub.Close()
	cfg := label.Config{Label: o.Label, Classes: o.Classes, Features: o.Features, Exclude: o.Exclude,
		PrivacyUnit: o.PrivacyUnit, Teachers: o.Teachers, Learner: o.Learner, Epsilon: 1, Delta: 1e-6,
		PublicRows: pub.NumRows(), BatchSize: o.BatchSize, Seed: o.Seed, Allocator: mem, Version: o.Version,
		SensitiveName: o.Private, PublicName: o.Public}
	if cfg.Learner == "" {
		cfg.Learner = "logreg"
	}
	lab, err := label.New(cfg, sens, pub.Schema())
	if err != nil {
		return nil, nil, err
	}
	spec, err := lab.TeacherSpec(ctx, pub)
	if err != nil {
		return nil, nil, err
	}
	return spec, shards, nil
}

// ShardRef is one sensitive shard and its place in the order pate label
// reads the shards in.
type ShardRef struct {
	Index int
	Path  string
	// Columns are the first shard's columns, in order: a row is identified
	// by its values in that order (as pate label's reader gives them), so
	// a shard whose columns differ is refused.
	Columns []string
}

func columnNames(s *arrow.Schema) []string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return names
}

// listShards lists the sensitive shards as pate label's reader orders
// them: a local folder or glob through pate's own lister, a glob on
// another file system sorted by name.
func listShards(ctx context.Context, input string) ([]ShardRef, error) {
	var paths []string
	if beamfs.IsLocal(input) {
		shards, err := arrowio.ListShards(input)
		if err != nil {
			return nil, fmt.Errorf("sensitive shards %s: %w", input, err)
		}
		for _, sh := range shards {
			if len(sh.Keys) > 0 {
				return nil, fmt.Errorf("%w: sensitive shards %s: key=value folders (hive partitions) are not supported here; give the shards' files", ErrUsage, input)
			}
			paths = append(paths, sh.Path)
		}
	} else {
		var err error
		if paths, err = beamfs.List(ctx, input); err != nil {
			return nil, fmt.Errorf("sensitive shards %s: %w", input, err)
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: sensitive shards %s: no file matches", ErrUsage, input)
	}
	refs := make([]ShardRef, len(paths))
	for i, p := range paths {
		refs[i] = ShardRef{Index: i, Path: p}
	}
	return refs, nil
}

// openShard opens one local shard (name is how errors call it). A CSV
// shard is refused: its types would be inferred from sensitive rows.
func openShard(local, name string, batch int, mem memory.Allocator) (*arrowio.Reader, error) {
	r, err := arrowio.Open(local, arrowio.ReadOptions{BatchSize: batch, Allocator: mem, NoSpill: true})
	if err != nil {
		return nil, fmt.Errorf("sensitive shard %s: %w", name, err)
	}
	if r.Format() == arrowio.FormatCSV {
		r.Close()
		return nil, fmt.Errorf("%w: sensitive shard %s is CSV: its column types would be read from the sensitive rows; convert the shards to Parquet or Arrow IPC", ErrUsage, name)
	}
	return r, nil
}

// Build adds the pipeline to s: read and map the shards, group the rows by
// teacher, train each teacher, write the ensemble file.
func Build(s beam.Scope, spec *label.TeacherSpec, shards []ShardRef, o Options) error {
	js, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("teacher spec: %w", err)
	}
	batch := o.BatchSize
	if batch <= 0 {
		batch = 16384
	}
	s = s.Scope("pate.teachertrain")
	refs := beam.Reshuffle(s, beam.CreateList(s, shards)) // spread the shards over the workers
	rows := beam.ParDo(s, &mapShardFn{Spec: string(js), BatchSize: batch}, refs)
	models := beam.ParDo(s, &trainTeacherFn{Spec: string(js)}, beam.GroupByKey(s, rows))
	beam.ParDo0(s, &writeEnsembleFn{Spec: string(js), Output: o.Output, Version: o.Version},
		beam.GroupByKey(s, beam.AddFixedKey(s, models)))
	return nil
}

// A row on its way to its teacher: the shard's index and the row's index
// in it (u64 each: the order pate label reads the rows in), its class
// index (u32) and its encoded row (float32 each).
const rowHeader = 8 + 8 + 4

// mapShardFn reads one shard and emits each training row keyed by its
// teacher.
type mapShardFn struct {
	Spec      string `json:"spec"`
	BatchSize int    `json:"batch_size"`

	spec *label.TeacherSpec
}

func (f *mapShardFn) Setup() error {
	var err error
	f.spec, err = label.ParseTeacherSpec([]byte(f.Spec))
	return err
}

func (f *mapShardFn) ProcessElement(ctx context.Context, sh ShardRef, emit func(int, []byte)) error {
	local, cleanup, err := beamfs.LocalCopy(ctx, sh.Path)
	if err != nil {
		return err
	}
	defer cleanup()
	r, err := openShard(local, sh.Path, f.BatchSize, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	defer r.Close()
	if got := columnNames(r.Schema()); !slices.Equal(got, sh.Columns) {
		return fmt.Errorf("sensitive shard %s: its columns (%s) are not the first shard's (%s), in the same order",
			sh.Path, strings.Join(got, ", "), strings.Join(sh.Columns, ", "))
	}
	m := f.spec.NewMapper()
	first := 0 // the index in the shard of the batch's first row
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sensitive shard %s: %w", sh.Path, err)
		}
		err = m.Map(rec, func(i, teacher int, class int32, x []float32) error {
			b := make([]byte, rowHeader, rowHeader+4*len(x))
			binary.LittleEndian.PutUint64(b, uint64(sh.Index))
			binary.LittleEndian.PutUint64(b[8:], uint64(first+i))
			binary.LittleEndian.PutUint32(b[16:], uint32(class))
			for _, v := range x {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
			emit(teacher, b)
			return nil
		})
		first += int(rec.NumRows())
		rec.Release()
		if err != nil {
			return fmt.Errorf("sensitive shard %s: %w", sh.Path, err)
		}
	}
}

// TeacherModel is one trained teacher in label.MarshalTeacher's form.
type TeacherModel struct {
	Teacher int
	Model   []byte
}

// trainTeacherFn trains one teacher from its rows, sorted into the order
// pate label reads them in.
type trainTeacherFn struct {
	Spec string `json:"spec"`

	spec *label.TeacherSpec
}

func (f *trainTeacherFn) Setup() error {
	var err error
	f.spec, err = label.ParseTeacherSpec([]byte(f.Spec))
	return err
}

func (f *trainTeacherFn) ProcessElement(ctx context.Context, t int, rows func(*[]byte) bool, emit func(TeacherModel)) error {
	dim := f.spec.Encoder.Dim()
	var all [][]byte
	var b []byte
	for rows(&b) {
		if len(b) != rowHeader+4*dim {
			return fmt.Errorf("teacher %d: a row of %d bytes, want %d", t, len(b), rowHeader+4*dim)
		}
		all = append(all, b)
	}
	slices.SortFunc(all, func(a, b []byte) int { return bytes.Compare(orderKey(a), orderKey(b)) })
	x := learners.NewMatrix(len(all), dim)
	y := make([]int32, len(all))
	for i, r := range all {
		y[i] = int32(binary.LittleEndian.Uint32(r[16:]))
		row := x.Row(i)
		for j := range row {
			row[j] = math.Float32frombits(binary.LittleEndian.Uint32(r[rowHeader+4*j:]))
		}
	}
	m, err := f.spec.Train(x, y)
	if err != nil {
		return fmt.Errorf("teacher %d: %w", t, err)
	}
	mb, err := label.MarshalTeacher(m)
	if err != nil {
		return fmt.Errorf("teacher %d: %w", t, err)
	}
	emit(TeacherModel{Teacher: t, Model: mb})
	return nil
}

// orderKey is a row's (shard, row) as bytes that sort in that order.
func orderKey(r []byte) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:], binary.LittleEndian.Uint64(r))
	binary.BigEndian.PutUint64(k[8:], binary.LittleEndian.Uint64(r[8:]))
	return k[:]
}

// writeEnsembleFn gathers the teachers and writes the ensemble file; a
// teacher that received no rows votes the first class, as in pate label.
type writeEnsembleFn struct {
	Spec    string `json:"spec"`
	Output  string `json:"output"`
	Version string `json:"version"`
}

func (f *writeEnsembleFn) ProcessElement(ctx context.Context, _ int, models func(*TeacherModel) bool) error {
	spec, err := label.ParseTeacherSpec([]byte(f.Spec))
	if err != nil {
		return err
	}
	all := make([]learners.Model, spec.Teachers)
	var tm TeacherModel
	for models(&tm) {
		if tm.Teacher < 0 || tm.Teacher >= len(all) || all[tm.Teacher] != nil {
			return fmt.Errorf("teacher %d: out of range or trained twice", tm.Teacher)
		}
		if all[tm.Teacher], err = spec.DecodeTeacher(tm.Model); err != nil {
			return fmt.Errorf("teacher %d: %w", tm.Teacher, err)
		}
	}
	for t, m := range all {
		if m == nil {
			if all[t], err = spec.Train(learners.NewMatrix(0, spec.Encoder.Dim()), nil); err != nil {
				return err
			}
		}
	}
	file, err := spec.Ensemble(all, f.Version)
	if err != nil {
		return err
	}
	if beamfs.IsLocal(f.Output) {
		return file.Save(f.Output)
	}
	return beamfs.WriteFile(ctx, f.Output, file.Bytes())
}
