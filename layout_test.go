package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// maxCommandLines is the most lines a cmd_<verb>.go may hold: one
// command's flags, their checks, the call into the library and what it
// prints. A command that needs more has a part that belongs in a file of
// its own (what it prints, a mode that spends budget) or in a library
// package.
const maxCommandLines = 250

// TestCommandFilesShort holds every cmd_*.go to maxCommandLines.
func TestCommandFilesShort(t *testing.T) {
	files, err := filepath.Glob("cmd_*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cmd_*.go: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > maxCommandLines {
			t.Errorf("%s has %d lines, more than %d", f, n, maxCommandLines)
		}
	}
}
