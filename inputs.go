package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/replicate"
)

// Inputs that the commands read whole (not streamed), named by their flags.

// readColumnText reads one column of a file as text ("" for nulls).
func readColumnText(mem memory.Allocator, path, col string) ([]string, error) {
	r, err := arrowio.Open(path, arrowio.ReadOptions{Allocator: mem})
	if err != nil {
		return nil, fmt.Errorf("--public: %w", err)
	}
	defer r.Close()
	idx := r.Schema().FieldIndices(col)
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: --truth %q: %s has no such column (or has it twice)", label.ErrInvalidInput, col, path)
	}
	out, err := replicate.ColumnText(r, idx[0])
	if err != nil {
		return nil, fmt.Errorf("--public: %w", err)
	}
	return out, nil
}

// schemaOf opens a file only for its schema.
func schemaOf(mem memory.Allocator, path string) (*arrow.Schema, error) {
	r, err := arrowio.Open(path, arrowio.ReadOptions{Allocator: mem})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Schema(), nil
}

// readWhole reads a file into one record (its batches concatenated).
func readWhole(mem memory.Allocator, path string, types map[string]arrow.DataType) (arrow.Record, error) {
	sens, err := arrowio.Open(path, arrowio.ReadOptions{Allocator: mem, CSVTypes: types, NoSpill: true})
	if err != nil {
		return nil, fmt.Errorf("--private: %w", err)
	}
	defer sens.Close()
	rec, err := replicate.ReadAll(mem, sens)
	if err != nil {
		return nil, fmt.Errorf("--private: %w", err)
	}
	return rec, nil
}

// readVotes reads a vote-count file: every column an integer count, one row
// per query.
func readVotes(path string, e *env) ([][]int64, error) {
	r, err := arrowio.Open(path, arrowio.ReadOptions{BatchSize: 65536, Allocator: memory.DefaultAllocator, Stdin: e.stdin})
	if err != nil {
		return nil, fmt.Errorf("--votes: %w", err)
	}
	defer r.Close()
	return label.ReadVoteCounts(r, "--votes "+path)
}

// inputFlags are the flags that name an input which may be a glob pattern.
var inputFlags = []string{"public", "private"}

// shellExpandedGlob recognises an unquoted glob pattern that the shell
// expanded into several paths after an input flag: urfave/cli would stop
// at the second path, take every later flag for an argument and complain
// of missing required flags that were given.
func shellExpandedGlob(args []string) error {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		name, value, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !slices.Contains(inputFlags, name) {
			continue
		}
		first := i + 1 // the first path
		if !inline {
			if first >= len(args) {
				return nil
			}
			value = args[first]
		} else {
			first = i
		}
		extra := 0
		for j := first + 1; j < len(args) && !strings.HasPrefix(args[j], "-"); j++ {
			extra++
		}
		if extra == 0 {
			continue
		}
		pattern := filepath.Join(filepath.Dir(value), "*"+filepath.Ext(value))
		return usagef("--%s got %d paths (%s, %s, ...): the shell expanded a glob pattern; quote it so that pate expands it (--%s '%s'), or give the directory",
			name, extra+1, value, args[first+1], name, pattern)
	}
	return nil
}

// warnSkipped says which files of an input directory flag named were left
// out for their format (a README.md beside the shards), unless quiet.
func warnSkipped(e *env, quiet bool, flag string, r *arrowio.Reader) {
	if skipped := r.SkippedFiles(); len(skipped) > 0 && !quiet {
		fmt.Fprintf(e.stderr, "pate: warning: --%s: skipped %s, not Parquet, Arrow IPC or CSV\n", flag, strings.Join(skipped, ", "))
	}
}
