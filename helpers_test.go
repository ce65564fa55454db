package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio"
)

// pate runs the command line and returns its exit code, stdout and
// stderr. It runs the test binary as pate (see TestMain), a process of its
// own: urfave/cli keeps its help and version flags in package variables
// that every run writes, so two runs in one process race, and the tests
// run in parallel.
func pate(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(pateBinary(t), withOwnLedger(t, args)...)
	cmd.Stdin = strings.NewReader("")
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), out.String(), errb.String()
	default:
		t.Fatalf("pate %s: %v", strings.Join(args, " "), err)
		return 0, "", ""
	}
}

// withOwnLedger gives a command that writes to the privacy ledger, called
// without --ledger or --no-ledger, a fresh ledger of its own (--ledger
// right after the command's name): the tests reuse seeds, which one ledger
// refuses, and they run in parallel, so they cannot take turns setting
// $PATE_LEDGER.
func withOwnLedger(t *testing.T, args []string) []string {
	if len(args) == 0 {
		return args
	}
	switch args[0] {
	case "label", "aggregate", "replicate", "analyze":
	default:
		return args
	}
	for _, a := range args {
		if a == "--ledger" || a == "--no-ledger" || strings.HasPrefix(a, "--ledger=") || strings.HasPrefix(a, "--no-ledger=") {
			return args
		}
	}
	return append([]string{args[0], "--ledger", t.TempDir()}, args[1:]...)
}

// readAll reads every batch of an Arrow/Parquet file into memory.
func readAll(t *testing.T, path string, mem memory.Allocator) (*arrow.Schema, []arrow.Record) {
	t.Helper()
	r, err := arrowio.Open(path, arrowio.ReadOptions{BatchSize: 1 << 16, Allocator: mem})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	var recs []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		recs = append(recs, rec)
	}
	return r.Schema(), recs
}

func int64Column(t *testing.T, recs []arrow.Record, name string) []int64 {
	t.Helper()
	var out []int64
	for _, rec := range recs {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %q", name)
		}
		col := rec.Column(idx[0]).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				out = append(out, -1)
			} else {
				out = append(out, col.Value(i))
			}
		}
	}
	return out
}

func stringColumn(t *testing.T, recs []arrow.Record, name string) []string {
	t.Helper()
	var out []string
	for _, rec := range recs {
		col := rec.Column(rec.Schema().FieldIndices(name)[0]).(*array.String)
		for i := 0; i < col.Len(); i++ {
			out = append(out, col.Value(i))
		}
	}
	return out
}

func release(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}
