package main

import (
	"fmt"

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
	sens, err := arrowio.Open(path, arrowio.ReadOptions{Allocator: mem, CSVTypes: types})
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
