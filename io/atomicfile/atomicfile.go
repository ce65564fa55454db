// Package atomicfile writes files so that a reader, or a crash, sees either
// the previous file or the whole new one, never a part: the bytes go to a
// temporary file in the destination's folder, which is synced, closed and
// renamed over the destination, and the folder is synced so that the rename
// survives a crash.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written under a temporary name beside its
// destination. Write to it (it is an *os.File, so ReadAt and WriteAt work
// too), then Commit to put it in place or Abort to discard it.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts a file for path with permissions perm. The temporary file
// is hidden (a leading dot) and named after path, so a leftover one says
// whose it was.
func Create(path string, perm os.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		// The temporary name means nothing to the caller: name the folder.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: "create a file in", Path: filepath.Clean(dir), Err: pe.Err}
		}
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Path is the destination.
func (f *File) Path() string { return f.path }

// Commit syncs and closes the file, renames it over its destination and
// syncs the folder. On an error before the rename the temporary file is
// removed and the destination left as it was.
func (f *File) Commit() error {
	return f.commit(os.Rename)
}

// CommitNew is Commit for a file that must not replace one already at its
// destination (one that concurrent writers create once and then share): it
// links the file into place instead of renaming it, and when the
// destination exists it leaves it alone and returns an error matching
// os.ErrExist. The temporary name is removed either way.
func (f *File) CommitNew() error {
	return f.commit(func(tmp, path string) error {
		err := os.Link(tmp, path)
		if rerr := os.Remove(tmp); err == nil && rerr != nil {
			err = rerr
		}
		return err
	})
}

func (f *File) commit(place func(tmp, path string) error) error {
	if f.done {
		return errors.New("atomicfile: committed or aborted already")
	}
	f.done = true
	name := f.Name()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(name, f.path)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	return SyncDir(filepath.Dir(f.path))
}

// Abort closes and removes the temporary file, leaving the destination as
// it was. After Commit or another Abort it does nothing.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	f.Close()
	if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// WriteFile writes b to path atomically with permissions perm.
func WriteFile(path string, b []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// SyncDir syncs a folder, so that the names created, renamed or removed in
// it survive a crash. Systems that cannot sync a folder (os.ErrInvalid) are
// let be.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("syncing folder %s: %w", dir, err)
	}
	return nil
}
