package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entries lists the names in dir, so a test sees any temporary file left
// behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func TestFile(t *testing.T) {
	tests := []struct {
		name string
		old  string // content already at the destination; "" = none
		run  func(path string) error
		// want is the destination's content afterwards ("" = absent);
		// wantErr what the run's error must match (nil = no error).
		want    string
		wantErr error
	}{
		{"write a new file", "", func(p string) error { return WriteFile(p, []byte("new"), 0o640) }, "new", nil},
		{"replace a file", "old", func(p string) error { return WriteFile(p, []byte("new"), 0o640) }, "new", nil},
		{"abort leaves the old file", "old", func(p string) error {
			f, err := Create(p, 0o640)
			if err != nil {
				return err
			}
			f.Write([]byte("half"))
			return f.Abort()
		}, "old", nil},
		{"abort leaves no file", "", func(p string) error {
			f, err := Create(p, 0o640)
			if err != nil {
				return err
			}
			return f.Abort()
		}, "", nil},
		{"abort after commit does nothing", "", func(p string) error {
			f, err := Create(p, 0o640)
			if err != nil {
				return err
			}
			f.Write([]byte("kept"))
			if err := f.Commit(); err != nil {
				return err
			}
			return f.Abort()
		}, "kept", nil},
		{"commit-new creates", "", func(p string) error {
			f, err := Create(p, 0o640)
			if err != nil {
				return err
			}
			f.Write([]byte("first"))
			return f.CommitNew()
		}, "first", nil},
		{"commit-new keeps the existing file", "first", func(p string) error {
			f, err := Create(p, 0o640)
			if err != nil {
				return err
			}
			f.Write([]byte("second"))
			return f.CommitNew()
		}, "first", os.ErrExist},
		{"patch in place before commit", "", func(p string) error {
			f, err := Create(p, 0o640)
			if err != nil {
				return err
			}
			f.Write([]byte("xxxx"))
			f.WriteAt([]byte("ab"), 1)
			return f.Commit()
		}, "xabx", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.bin")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := tc.run(path)
			if tc.wantErr == nil && err != nil {
				t.Fatalf("error %v", err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want one matching %v", err, tc.wantErr)
			}
			b, rerr := os.ReadFile(path)
			switch {
			case tc.want == "" && !errors.Is(rerr, os.ErrNotExist):
				t.Errorf("destination exists (%q, %v), want none", b, rerr)
			case tc.want != "" && string(b) != tc.want:
				t.Errorf("destination holds %q (%v), want %q", b, rerr, tc.want)
			}
			if tc.want != "" && tc.old == "" && tc.wantErr == nil {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o640 {
					t.Errorf("mode %v, want 0640", fi.Mode().Perm())
				}
			}
			names := entries(t, dir)
			if want := map[bool]int{true: 1, false: 0}[tc.want != ""]; len(names) != want {
				t.Errorf("folder holds %v, want only the destination (no temporary file left)", names)
			}
		})
	}
}

func TestCommitFailureLeavesNothing(t *testing.T) {
	tests := []struct {
		name  string
		setup func(dir string) string // returns the destination
	}{
		{"destination is a non-empty folder", func(dir string) string {
			p := filepath.Join(dir, "taken")
			if err := os.MkdirAll(filepath.Join(p, "inner"), 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(dir)
			f, err := Create(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("x"))
			if err := f.Commit(); err == nil {
				t.Fatal("commit over a non-empty folder succeeded")
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("folder holds %v, want the folder alone (temporary file removed)", names)
			}
			if err := f.Commit(); err == nil {
				t.Error("a second commit succeeded")
			}
		})
	}
}

// TestCreateInMissingFolder: the error matches os.ErrNotExist and names
// the folder, never the temporary file's name, which means nothing to the
// user.
func TestCreateInMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	_, err := Create(filepath.Join(dir, "out.arrow"), 0o644)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v, want one matching os.ErrNotExist", err)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || strings.Contains(msg, ".tmp-") {
		t.Errorf("error %q: want the folder %s named and no temporary name", msg, dir)
	}
}
