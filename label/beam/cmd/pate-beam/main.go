// Command pate-beam labels sharded public data with a saved pate labeler on
// Apache Beam: one labelled Arrow IPC file per input shard, and a manifest.
// It runs on Beam's local runner (prism, the default) and, unchanged, on
// Dataflow, Flink or Spark through Beam's portable runners:
//
//	pate-beam --labeler adult.labeler --input 'shards/*.parquet' --output_dir labelled \
//	    --manifest labelled/manifest.jsonl
//	pate-beam --labeler gs://b/adult.labeler --input 'gs://b/shards/*.parquet' \
//	    --output_dir gs://b/labelled --manifest gs://b/labelled/manifest.jsonl \
//	    --runner dataflow --project P --region europe-west1 --staging_location gs://b/staging
//	pate-beam ... --runner flink --endpoint localhost:8099 --environment_type LOOPBACK
//
// The labeler comes from pate label --save-labeler, run once, centrally,
// with the ledger: applying it is post-processing, so the workers read no
// sensitive data and spend no budget. Exit codes: 0 ok, 1 failure, 2 bad
// usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs" // gs:// paths
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"  // s3:// paths
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/pate-tool/pate/label/beam/shardlabel"
)

var (
	labeler   = flag.String("labeler", "", "labeler file written by pate label --save-labeler (required)")
	input     = flag.String("input", "", "public shards: a glob, or a local folder (required)")
	outputDir = flag.String("output_dir", "", "folder of the labelled shards (required)")
	manifest  = flag.String("manifest", "", "manifest file (JSON lines: shard, rows, output, labeler_sha256); default OUTPUT_DIR/manifest.jsonl")
	batchSize = flag.Int("batch_size", 16384, "rows per record batch")
	workers   = flag.Int("label_workers", 0, "goroutines labelling one shard's batches (0: the number of CPUs)")
	keep      = flag.String("keep", "", "comma-separated public columns copied to the outputs (default: all)")
	zstd      = flag.Bool("zstd", false, "compress the outputs with zstd")
)

func main() {
	flag.Parse()
	beam.Init() // a worker started by a portable runner takes over here
	if *labeler == "" || *input == "" || *outputDir == "" {
		fmt.Fprintln(os.Stderr, "pate-beam: --labeler, --input and --output_dir are required")
		os.Exit(2)
	}
	if *manifest == "" {
		*manifest = strings.TrimSuffix(*outputDir, "/") + "/manifest.jsonl"
	}
	o := shardlabel.Options{Labeler: *labeler, Input: *input, OutDir: *outputDir, Manifest: *manifest,
		BatchSize: *batchSize, Workers: *workers, Zstd: *zstd}
	if *keep != "" {
		o.Keep = strings.Split(*keep, ",")
	}
	p, s := beam.NewPipelineWithRoot()
	shardlabel.Build(s, o)
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Fprintf(os.Stderr, "pate-beam: %v\n", err)
		os.Exit(1)
	}
}
