package io

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHostilePageHeader reads the 473-byte file FuzzReadParquet found, whose
// first page header sent Arrow's Thrift decoder into a loop that allocated
// gigabytes and never returned. The page-header check must refuse it, as a
// format error naming the row group and column, at once.
func TestHostilePageHeader(t *testing.T) {
	raw, err := os.ReadFile("testdata/fuzz/FuzzReadParquet/hostile_page_header_thrift")
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	q := s[strings.Index(s, "[]byte(")+len("[]byte(") : strings.LastIndex(s, ")")]
	data, err := strconv.Unquote(q)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hostile.parquet")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		r, err := Open(path, ReadOptions{})
		if err != nil {
			done <- err
			return
		}
		defer r.Close()
		for {
			rec, err := r.Read()
			if err != nil {
				done <- err
				return
			}
			rec.Release()
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "row group 0") || !strings.Contains(err.Error(), "page header") {
			t.Fatalf("got %v, want a format error naming the row group and the page header", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("reading the hostile file did not return")
	}
}
