// Package beamfs reads and writes whole files on any Beam file system
// (gs://, s3://, local paths), and gives pate's readers, which need random
// access, local copies of remote files.
package beamfs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths
)

// IsLocal tells whether p is a path of the local file system.
func IsLocal(p string) bool { return !strings.Contains(p, "://") }

// Join joins a folder and a file name, on the folder's file system.
func Join(dir, name string) string {
	if IsLocal(dir) {
		return filepath.Join(dir, name)
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}

// LocalCopy returns a local path holding the file p: p itself when it is
// local, else a temporary copy (pate's readers need random access).
func LocalCopy(ctx context.Context, p string) (string, func(), error) {
	if IsLocal(p) {
		return p, func() {}, nil
	}
	fs, err := filesystem.New(ctx, p)
	if err != nil {
		return "", nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, p)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	tmp, err := os.CreateTemp("", "pate-shard-*"+path.Ext(p))
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.Remove(tmp.Name()) }
	_, err = io.Copy(tmp, r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("copying %s: %w", p, err)
	}
	return tmp.Name(), cleanup, nil
}

// LocalTarget returns a local path to write the output p to, and the
// function that puts it in place (a copy to p's file system when p is not
// local).
func LocalTarget(ctx context.Context, p string) (string, func() error, error) {
	if IsLocal(p) {
		return p, func() error { return nil }, nil
	}
	tmp, err := os.CreateTemp("", "pate-out-*.arrow")
	if err != nil {
		return "", nil, err
	}
	tmp.Close()
	return tmp.Name(), func() error {
		defer os.Remove(tmp.Name())
		b, err := os.ReadFile(tmp.Name())
		if err != nil {
			return err
		}
		return WriteFile(ctx, p, b)
	}, nil
}

// ReadFile reads the whole file p.
func ReadFile(ctx context.Context, p string) ([]byte, error) {
	if IsLocal(p) {
		return os.ReadFile(p)
	}
	fs, err := filesystem.New(ctx, p)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return filesystem.Read(ctx, fs, p)
}

// WriteFile writes b to the file p (a local file through a temporary name,
// renamed into place).
func WriteFile(ctx context.Context, p string, b []byte) error {
	if IsLocal(p) {
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, p)
	}
	fs, err := filesystem.New(ctx, p)
	if err != nil {
		return err
	}
	defer fs.Close()
	return filesystem.Write(ctx, fs, p, b)
}

// List returns the files that match the glob pattern on its file system,
// sorted.
func List(ctx context.Context, pattern string) ([]string, error) {
	fs, err := filesystem.New(ctx, pattern)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	files, err := fs.List(ctx, pattern)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}
