package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
)

// The flag groups that several commands share, and the readers of list flags.

// budgetFlags are the flags of the mechanism, its noise and its budget,
// shared by the commands that release labels.
func budgetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mechanism", Value: label.MechanismConfidentGNMax, Usage: "aggregation: confident-gnmax, gnmax, lnmax; " +
			"svt (sparse vector over the teachers' distance to instability: stable queries are free), " +
			"private-learner (one ε-DP decision stump, exponential mechanism; needs --classes), " +
			"stable-em (ε-private prediction per query, Dagan & Feldman; needs --classes), " +
			"dp-logreg (one DP logistic regression trained on the rows labels every row; needs --classes)"},
		&cli.Int64Flag{Name: "max-queries", Usage: "put at most the first N public rows to the teachers (0: all)"},
		&cli.Float64Flag{Name: "epsilon", Usage: "privacy budget ε; the noise is planned from it and the run stops at it"},
		&cli.Float64Flag{Name: "delta", Usage: "privacy parameter δ (well below 1/number of privacy units)", Required: true},
		&cli.StringFlag{Name: "sigma", Usage: "GNMax noise σ (exact decimal)"},
		&cli.Int64Flag{Name: "threshold", Usage: "Confident-GNMax threshold T on the top vote (default 0.8 × teachers)"},
		&cli.StringFlag{Name: "sigma1", Usage: "Confident-GNMax threshold noise σ1"},
		&cli.StringFlag{Name: "sigma2", Usage: "Confident-GNMax argmax noise σ2"},
		&cli.StringFlag{Name: "laplace-scale", Usage: "LNMax noise scale b"},
		&cli.Float64Flag{Name: "answered-fraction", Value: label.DefaultAnsweredFraction, Usage: "Confident-GNMax planning: expected fraction of queries answered"},
		&cli.Float64Flag{Name: "sigma-ratio", Value: label.DefaultSigmaRatio, Usage: "Confident-GNMax planning: σ1 / σ2"},
		// The pure-ε mechanisms (private-learner, stable-em) and svt.
		&cli.IntFlag{Name: "bins", Usage: "private-learner: stump thresholds at this many public quantiles per feature (default 32)"},
		&cli.StringFlag{Name: "em-epsilon", Usage: "private-learner, stable-em: ε of the exponential mechanism (default: planned from --epsilon)"},
		&cli.StringFlag{Name: "subset-rate", Usage: "stable-em: probability q that a sensitive row joins the random subset S1 (default: planned)"},
		&cli.StringFlag{Name: "gamma", Usage: "stable-em: probability γ of answering a uniformly random label (default 0.5)"},
		&cli.StringFlag{Name: "svt-epsilon0", Usage: "svt: ε of one sparse-vector instance (default: planned from --svt-cutoff)"},
		&cli.Int64Flag{Name: "svt-cutoff", Usage: "svt: plan for this many instances: the run stops at the N-th unstable query (default 1)"},
		&cli.Int64Flag{Name: "svt-threshold", Usage: "svt: threshold w on the distance to instability (default: the smallest that keeps the stable-release failure below δ/2)"},
	}
}

// mechanismParams reads the explicit noise flags of budgetFlags.
func mechanismParams(c *cli.Context) label.MechanismParams {
	return label.MechanismParams{
		Sigma: c.String("sigma"), Threshold: c.Int64("threshold"),
		Sigma1: c.String("sigma1"), Sigma2: c.String("sigma2"), LaplaceScale: c.String("laplace-scale"),
		Bins: c.Int("bins"), EMEpsilon: c.String("em-epsilon"), SubsetRate: c.String("subset-rate"), Gamma: c.String("gamma"),
		SVTEpsilon0: c.String("svt-epsilon0"), SVTCutoff: c.Int64("svt-cutoff"), SVTThreshold: c.Int64("svt-threshold"),
	}
}

// zstdUsage is the help of --zstd.
const zstdUsage = "compress the output with zstd (Parquet output: zstd instead of snappy; DuckDB and Polars read both). " +
	"Arrow IPC readers without the codec cannot open a zstd IPC output: apache-arrow JS has none, nor Arrow before 1.0 " +
	"(for them write Parquet or leave --zstd off)"

// foreignOutputExts are the extensions of formats pate does not write: an
// output so named is refused rather than filled with another format.
var foreignOutputExts = []string{".csv", ".tsv", ".txt", ".json", ".jsonl", ".ndjson", ".gz", ".zst"}

// outputFlags reads --format and --seed. Without --format the output's
// name chooses: .parquet (or .pq) writes Parquet, .arrows an Arrow IPC
// stream, any other name an Arrow IPC file; the path - always writes a
// stream. A --format that contradicts the name's extension is refused, so
// that a file is never named for a format it does not hold.
func outputFlags(c *cli.Context) (arrowio.WriteFormat, *uint64, error) {
	out := c.String("output")
	format, known := arrowio.WriteFormatFor(out, arrowio.WriteFile)
	if out == "-" {
		format, known = arrowio.WriteStream, false
	}
	if ext := strings.ToLower(filepath.Ext(out)); slices.Contains(foreignOutputExts, ext) {
		return 0, nil, usagef("-o %s: pate writes Parquet (.parquet) or Arrow IPC (.arrow, .arrows), not %s: name the output for the format it will hold", out, strings.TrimPrefix(ext, "."))
	}
	if c.IsSet("format") {
		var want arrowio.WriteFormat
		switch c.String("format") {
		case "file", "arrow":
			want = arrowio.WriteFile
		case "stream":
			want = arrowio.WriteStream
		case "parquet":
			want = arrowio.WriteParquetFile
		default:
			return 0, nil, usagef("--format must be file, stream or parquet, got %q", c.String("format"))
		}
		switch {
		case out == "-" && want == arrowio.WriteParquetFile:
			return 0, nil, usagef("--format parquet needs a file for -o: Parquet's footer is written last, so standard output gets an Arrow IPC stream")
		case out == "-":
		case known && want != format:
			return 0, nil, usagef("--format %s contradicts the name of -o %s (a %s file): rename the output or drop --format", c.String("format"), out, format)
		default:
			format = want
		}
	}
	var seed *uint64
	if s := c.String("seed"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, nil, usagef("--seed must be a non-negative integer, got %q", s)
		}
		seed = &v
	}
	return format, seed, nil
}

// replicableFlags reads --replicable and its seed file.
func replicableFlags(c *cli.Context) (*label.Replicable, error) {
	if !c.Bool("replicable") {
		if c.IsSet("shared-seed-file") || c.IsSet("replicable-width") {
			return nil, usagef("--shared-seed-file and --replicable-width need --replicable")
		}
		return nil, nil
	}
	path := c.String("shared-seed-file")
	if path == "" {
		return nil, usagef("--replicable needs --shared-seed-file (the secret seed shared between curators)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--shared-seed-file: %v", err)
	}
	key := bytes.TrimSpace(b)
	if len(key) < 16 {
		return nil, usagef("--shared-seed-file %s: the seed has %d bytes, fewer than 16 (make one with: head -c 32 /dev/urandom | base64)", path, len(key))
	}
	if w := c.Float64("replicable-width"); !(w > 0 && w <= 1e6) {
		return nil, usagef("--replicable-width must be in (0, 1e6], got %g", w)
	}
	return &label.Replicable{Key: key, Width: c.Float64("replicable-width"), Via: "--shared-seed-file, a file shared between curators"}, nil
}

func inputName(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}

func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// ledgerFlags are the ledger flags of every command that spends budget.
func ledgerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ledger", Usage: "privacy ledger directory (default $PATE_LEDGER, else $XDG_DATA_HOME/pate/ledger, else ~/.local/share/pate/ledger)"},
		&cli.BoolFlag{Name: "no-ledger", Usage: "do not record the run in the privacy ledger"},
		&cli.StringFlag{Name: "dataset", Usage: "name the sensitive dataset in the ledger: runs with the same name compose, whatever their files (default: the dataset is its rows, whatever their order, format or label columns)"},
		&cli.Float64Flag{Name: "lifetime-epsilon", Usage: "refuse the run (exit 3) if its maximum spend would take the dataset's composed total in the ledger past this ε (at the summed δ of its runs)"},
	}
}

func ledgerDir(c *cli.Context) (string, error) {
	if d := c.String("ledger"); d != "" {
		return d, nil
	}
	return ledger.DefaultDir()
}
