package shardlabel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label/beam/internal/beamfs"
	"github.com/pate-tool/pate/label/predict"
)

func init() {
	register.DoFn3x1[context.Context, fileio.FileMetadata, func(Shard), error](&labelShardFn{})
	register.Emitter1[Shard]()
	register.DoFn3x1[context.Context, int, func(*Shard) bool, error](&writeManifestFn{})
	register.Iter1[Shard]()
}

// Options configure Build.
type Options struct {
	// Labeler is the labeler file (pate label --save-labeler), on any Beam
	// file system.
	Labeler string
	// Input is a glob of the public shards, or a local folder (all its
	// files).
	Input string
	// OutDir is the folder of the outputs: one Arrow IPC file per shard,
	// named after it (shard names must differ).
	OutDir string
	// Manifest is the file the manifest is written to (JSON lines, one
	// Shard per line, sorted by shard); "" writes none.
	Manifest string
	// BatchSize is the rows per record batch (0: 16384).
	BatchSize int
	// Workers is the goroutines that label one shard's batches side by
	// side (0: GOMAXPROCS).
	Workers int
	// Keep lists the public columns copied to the outputs (nil: all).
	Keep []string
	// Zstd compresses the outputs.
	Zstd bool
}

// Shard is one line of the manifest: an input shard, its labelled output,
// and the labeler that made it.
type Shard struct {
	Shard   string `json:"shard"`
	Rows    int64  `json:"rows"`
	Output  string `json:"output"`
	Labeler string `json:"labeler_sha256"`
}

// Pattern turns a local folder into the glob of its files; anything else
// is returned as it is.
func Pattern(input string) string {
	if st, err := os.Stat(input); err == nil && st.IsDir() {
		return filepath.Join(input, "*")
	}
	return input
}

// Build adds the pipeline to s: match the shards, label each, write the
// manifest. It returns the PCollection of Shards.
func Build(s beam.Scope, o Options) beam.PCollection {
	s = s.Scope("pate.shardlabel")
	files := fileio.MatchFiles(s, Pattern(o.Input), fileio.MatchEmptyDisallow())
	// Spread the shards over the workers: the match is one bundle.
	files = beam.Reshuffle(s, files)
	shards := beam.ParDo(s, &labelShardFn{Labeler: o.Labeler, OutDir: o.OutDir, BatchSize: o.BatchSize,
		Workers: o.Workers, Keep: o.Keep, Zstd: o.Zstd}, files)
	if o.Manifest != "" {
		beam.ParDo0(s, &writeManifestFn{Path: o.Manifest}, beam.GroupByKey(s, beam.AddFixedKey(s, shards)))
	}
	return shards
}

// labelShardFn labels one shard per element.
type labelShardFn struct {
	Labeler   string   `json:"labeler"`
	OutDir    string   `json:"out_dir"`
	BatchSize int      `json:"batch_size"`
	Workers   int      `json:"workers"`
	Keep      []string `json:"keep"`
	Zstd      bool     `json:"zstd"`

	lab *predict.Labeler
}

// Setup loads the labeler once per DoFn instance.
func (f *labelShardFn) Setup(ctx context.Context) error {
	b, err := beamfs.ReadFile(ctx, f.Labeler)
	if err != nil {
		return fmt.Errorf("labeler %s: %w", f.Labeler, err)
	}
	if f.lab, err = predict.Read(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("labeler %s: %w", f.Labeler, err)
	}
	return nil
}

// ProcessElement labels the shard m and emits its manifest line. A retry
// rewrites the same output (written to a temporary file and renamed).
func (f *labelShardFn) ProcessElement(ctx context.Context, m fileio.FileMetadata, emit func(Shard)) error {
	in, cleanupIn, err := beamfs.LocalCopy(ctx, m.Path)
	if err != nil {
		return err
	}
	defer cleanupIn()
	base := path.Base(filepath.ToSlash(m.Path))
	name := strings.TrimSuffix(base, path.Ext(base)) + ".arrow"
	out := beamfs.Join(f.OutDir, name)
	local, finish, err := beamfs.LocalTarget(ctx, out)
	if err != nil {
		return err
	}
	rows, err := LabelFile(ctx, f.lab, in, local, Options{BatchSize: f.BatchSize, Workers: f.Workers, Keep: f.Keep, Zstd: f.Zstd})
	if err == nil {
		err = finish()
	} else {
		_ = os.Remove(local)
	}
	if err != nil {
		return fmt.Errorf("shard %s: %w", m.Path, err)
	}
	emit(Shard{Shard: m.Path, Rows: rows, Output: out, Labeler: f.lab.Hash()})
	return nil
}

// LabelFile labels the local file in into the local Arrow IPC file out
// with lab, as pate predict does, and returns the rows written.
func LabelFile(ctx context.Context, lab *predict.Labeler, in, out string, o Options) (int64, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 16384
	}
	mem := memory.DefaultAllocator
	pub, err := arrowio.Open(in, arrowio.ReadOptions{BatchSize: o.BatchSize, Allocator: mem})
	if err != nil {
		return 0, err
	}
	defer pub.Close()
	plan, err := lab.Plan(pub.Schema(), o.Keep)
	if err != nil {
		return 0, err
	}
	md := lab.OutputMetadata()
	w, err := arrowio.Create(out, arrow.NewSchema(plan.OutputSchema().Fields(), &md), arrowio.WriteOptions{
		Format: arrowio.WriteFile, Zstd: o.Zstd, Allocator: mem,
	})
	if err != nil {
		return 0, err
	}
	rows, err := predict.Run(ctx, plan, pub, w, o.Workers, mem)
	if err != nil {
		w.Abort()
		return 0, err
	}
	return rows, w.Commit(nil)
}

// writeManifestFn writes every Shard, sorted, as JSON lines.
type writeManifestFn struct {
	Path string `json:"path"`
}

func (f *writeManifestFn) ProcessElement(ctx context.Context, _ int, shards func(*Shard) bool) error {
	var all []Shard
	var s Shard
	for shards(&s) {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Shard < all[j].Shard })
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i := range all {
		if err := enc.Encode(&all[i]); err != nil {
			return err
		}
	}
	return beamfs.WriteFile(ctx, f.Path, b.Bytes())
}
