// Command pate-beam-train trains the teachers of a pate run on Apache Beam,
// where the sensitive data lives, and writes the teacher ensemble file that
// pate label --teachers-from polls. It runs on Beam's local runner (prism,
// the default) and, unchanged, on Dataflow, Flink or Spark:
//
//	pate-beam-train --public adult_public.parquet --private 'shards/*.parquet' \
//	    --label income --classes 0,1 --teachers 250 --output adult.teachers
//	pate label --teachers-from adult.teachers --public adult_public.parquet \
//	    --epsilon 1 --delta 1e-5 --dataset adult -o labeled.arrow
//	pate-beam-train --public gs://b/public.parquet --private 'gs://b/sensitive/*.parquet' \
//	    --label y --classes a,b,c --teachers 1000 --output gs://b/y.teachers \
//	    --runner dataflow --project P --region europe-west1 --staging_location gs://b/staging
//
// The classes must be declared: discovering them is a charged mechanism of
// pate label, not of training. The number of teachers is fixed here. The
// ensemble file is NOT private (its models saw the sensitive rows): keep it
// where the sensitive data is. With the same --seed, public file and
// shards, pate label --teachers-from releases the labels pate label
// --private SHARDS_FOLDER --teachers N --mechanism confident-gnmax does.
// Exit codes: 0 ok, 1 failure, 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs" // gs:// paths
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"  // s3:// paths
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/beam/teachertrain"
)

// version is written into the ensemble file (pate's version).
const version = "0.1.0"

var (
	public      = flag.String("public", "", "public data the feature encoder is fitted on, as pate label fits it: the file pate label will label (required)")
	private     = flag.String("private", "", "sensitive labelled shards: a glob, or a local folder, read in name order as pate label reads a folder (Parquet or Arrow IPC; required)")
	output      = flag.String("output", "", "the teacher ensemble file written (NOT private: keep it with the sensitive data; required)")
	labelCol    = flag.String("label", "", "label column of the sensitive data (required)")
	classes     = flag.String("classes", "", "the declared label values, comma-separated (required: discovering them privately is a charged mechanism of pate label)")
	teachers    = flag.Int("teachers", 0, "number of teachers (required; fixed here, not grown from a noisy count)")
	learner     = flag.String("learner", "logreg", "teacher learner: logreg, nb, tree, gbt or knn")
	features    = flag.String("features", "", "comma-separated feature columns (default: every sensitive column but the label and the privacy unit)")
	exclude     = flag.String("exclude", "", "comma-separated columns left out of the default features")
	privacyUnit = flag.String("privacy_unit", "", "column whose value identifies a person: all their rows go to one teacher (default: a row)")
	seed        = flag.String("seed", "", "seed of the partition key, as pate label --seed (tests, replicability; then give pate label the same seed, once)")
	batchSize   = flag.Int("batch_size", 16384, "rows per record batch")
)

func main() {
	flag.Parse()
	beam.Init() // a worker started by a portable runner takes over here
	os.Exit(run(context.Background()))
}

func run(ctx context.Context) int {
	o := teachertrain.Options{Public: *public, Private: *private, Output: *output, Label: *labelCol,
		Classes: split(*classes), Teachers: *teachers, Learner: *learner, Features: split(*features),
		Exclude: split(*exclude), PrivacyUnit: *privacyUnit, BatchSize: *batchSize, Version: version}
	if *seed != "" {
		v, err := strconv.ParseUint(*seed, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pate-beam-train: --seed must be a non-negative integer, got %q\n", *seed)
			return 2
		}
		o.Seed = &v
	}
	spec, shards, err := teachertrain.Prepare(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pate-beam-train: %s\n", label.ShowParams(err, func(p string) string { return "--" + strings.ReplaceAll(p, "-", "_") }))
		if errors.Is(err, teachertrain.ErrUsage) || errors.Is(err, label.ErrInvalidInput) || errors.Is(err, os.ErrNotExist) {
			return 2
		}
		return 1
	}
	p, s := beam.NewPipelineWithRoot()
	if err := teachertrain.Build(s, spec, shards, o); err != nil {
		fmt.Fprintf(os.Stderr, "pate-beam-train: %v\n", err)
		return 1
	}
	if err := beamx.Run(ctx, p); err != nil {
		fmt.Fprintf(os.Stderr, "pate-beam-train: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "pate-beam-train: wrote %d teachers to %s (NOT private: keep it with the sensitive data); "+
		"pate label --teachers-from %s polls them\n", spec.Teachers, *output, *output)
	return 0
}

// split reads a comma-separated list (nil when empty).
func split(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
