package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShellExpandedGlob: several paths after an input flag are a glob the
// shell expanded, told in one line before urfave/cli misreads the rest.
func TestShellExpandedGlob(t *testing.T) {
	tests := []struct {
		name string
		args string
		want string // "" : no error
	}{
		{"one path", "pate label --public a.csv --private s.csv -o o --delta 1e-5", ""},
		{"quoted pattern", "pate label --public d/*.csv --private s.csv -o o", ""},
		{"expanded", "pate label --public d/a.csv d/b.csv d/c.csv --private s.csv -o o", "--public got 3 paths (d/a.csv, d/b.csv, ...): the shell expanded a glob pattern; quote it so that pate expands it (--public 'd/*.csv'), or give the directory"},
		{"expanded, last", "pate label -o o --private s/a.parquet s/b.parquet", "--private got 2 paths"},
		{"inline value", "pate label --private=s/a.csv s/b.csv -o o", "--private got 2 paths"},
		{"single dash", "pate label -public a.csv b.csv", "--public got 2 paths"},
		{"other flag then argument", "pate label --public a.csv --quiet extra.parquet", ""},
		{"after --", "pate label -- --public a.csv b.csv", ""},
		{"flag without value", "pate label --public", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := shellExpandedGlob(strings.Fields(tc.args))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			case err != nil && exitCode(err) != exitUsage:
				t.Fatalf("exit code %d, want %d", exitCode(err), exitUsage)
			}
		})
	}
}

// TestFileIdentityAcrossLayouts: the ledger identity of the same rows does
// not depend on how they are stored: one CSV, gzip-compressed, split in
// shards, or a hive layout whose folder holds the key column.
func TestFileIdentityAcrossLayouts(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	whole := "x,k,y\n1.5,a,0\n2,a,1\n3,b,1\n,b,0\n"
	write("whole.csv", []byte(whole))
	write("whole.gz", gz([]byte(whole)))
	write("shards/part-0.csv", []byte("x,k,y\n1.5,a,0\n2,a,1\n"))
	write("shards/part-1.csv.gz", gz([]byte("y,x,k\n1,3,b\n0,,b\n")))
	write("hive/k=a/0.csv", []byte("x,y\n1.5,0\n2,1\n"))
	write("hive/k=b/0.csv", []byte("x,y\n3,1\n,0\n"))
	write("other.csv", []byte("x,k,y\n1.5,a,0\n2,a,1\n3,b,1\n"))
	want, err := fileIdentity(filepath.Join(dir, "whole.csv"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		same bool
	}{
		{"whole.gz", true},
		{"shards", true},
		{"shards/part-*", true},
		{"hive", true},
		{"other.csv", false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got, err := fileIdentity(filepath.Join(dir, filepath.FromSlash(tc.path)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tc.same {
				t.Errorf("identity equal to the single file's: %v, want %v", got == want, tc.same)
			}
		})
	}
	// Standard input, gzip-compressed.
	got, err := fileIdentity("-", bytes.NewReader(gz([]byte(whole))))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Error("gzip-compressed stdin: another identity")
	}
}

// TestFileIdentityEmbeddingsAcrossFormats: DuckDB's Parquet and CSV copies
// of the same rows, with a FLOAT[4] embedding (a list in Parquet, its text
// "[0.137, 0.14285715, -1e-07, NULL]" in the CSV), are one dataset to the
// ledger; a CSV with one element one float32 step away is another.
func TestFileIdentityEmbeddingsAcrossFormats(t *testing.T) {
	want, err := fileIdentity("testdata/types/duckdb_emb_same.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fileIdentity("testdata/types/duckdb_emb_same.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Error("the CSV copy of the Parquet file's rows has another identity")
	}
	text, err := os.ReadFile("testdata/types/duckdb_emb_same.csv")
	if err != nil {
		t.Fatal(err)
	}
	const one, next = "[0.137, 0.14285715,", "[0.137, 0.14285716,"
	if !bytes.Contains(text, []byte(one)) {
		t.Fatalf("the fixture has no %q", one)
	}
	other := filepath.Join(t.TempDir(), "other.csv")
	if err := os.WriteFile(other, bytes.Replace(text, []byte(one), []byte(next), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := fileIdentity(other, nil); err != nil || got == want {
		t.Errorf("one element changed: same identity %v (%v)", got == want, err)
	}
}
