package arrowio

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Shard is one file of an input that Open reads as one: a file of a
// directory, or a match of a glob pattern.
type Shard struct {
	// Path is the file's path.
	Path string
	// Keys are the hive partition keys of the folders between the
	// directory (or the pattern's fixed part) and the file, outermost
	// first: a folder year=2024 gives {year, 2024}.
	Keys []PartitionKey
}

// PartitionKey is one key=value folder of a hive-partitioned directory.
type PartitionKey struct {
	Name  string
	Value string
	Null  bool // the folder says __HIVE_DEFAULT_PARTITION__: no value
}

// hiveNull is the value Hive, Spark and DuckDB give a partition whose key
// is null.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// ListShards resolves an input path that is not standard input into the
// files Open reads, in the order it reads them:
//
//   - a file is itself;
//   - a directory is every file inside it, at any depth, sorted by path,
//     except those whose name (or a folder's name on the way) starts with
//     "." or "_" (such as _SUCCESS, _delta_log, .crc files);
//   - a path that does not exist but holds a glob metacharacter (*, ?, [)
//     is a pattern (filepath.Match syntax, plus a path element "**" for
//     any number of folders, as DuckDB, Polars and Spark read it),
//     expanded by pate: every matching file, and every file inside a
//     matching directory; hidden names are skipped as in a directory.
//
// Folders named key=value between the directory (or the last folder of
// the pattern without metacharacters) and a file are its hive partition
// keys; every shard must have the same keys, in the same order.
func ListShards(path string) ([]Shard, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.IsDir():
		return []Shard{{Path: path}}, nil
	case err == nil:
		shards, err := walkShards(path, path)
		if err != nil {
			return nil, err
		}
		if len(shards) == 0 {
			return nil, fmt.Errorf("%s: the directory holds no data file: %w", path, ErrFormat)
		}
		return shards, checkKeys(path, shards)
	case errors.Is(err, fs.ErrNotExist) && hasMeta(path):
		return globShards(path)
	}
	return nil, err // *fs.PathError names the path
}

func hasMeta(path string) bool { return strings.ContainsAny(path, `*?[`) }

// globShards expands the pattern.
func globShards(pattern string) ([]Shard, error) {
	matches, err := glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: bad pattern: %w", pattern, err)
	}
	// The hive keys are read below the pattern's fixed part.
	base := pattern
	for hasMeta(base) {
		base = filepath.Dir(base)
	}
	var shards []Shard
	for _, m := range matches {
		if hidden(filepath.Base(m)) {
			continue
		}
		st, err := os.Stat(m)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			shards = append(shards, Shard{Path: m, Keys: hiveKeys(base, m)})
			continue
		}
		inside, err := walkShards(base, m)
		if err != nil {
			return nil, err
		}
		shards = append(shards, inside...)
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("%s: the pattern matches no data file: %w", pattern, fs.ErrNotExist)
	}
	slices.SortFunc(shards, func(a, b Shard) int { return strings.Compare(a.Path, b.Path) })
	shards = slices.CompactFunc(shards, func(a, b Shard) bool { return a.Path == b.Path })
	return shards, checkKeys(pattern, shards)
}

// glob is filepath.Glob with "**" as a whole path element matching any
// number of folders (none included). Hidden names below the pattern's
// fixed part are not matched by "**".
func glob(pattern string) ([]string, error) {
	segs := strings.Split(pattern, string(filepath.Separator))
	deep := false
	for _, s := range segs {
		if strings.Contains(s, "**") {
			if s != "**" {
				return nil, fmt.Errorf("%w: ** must be a whole path element (dir/**/*.parquet)", filepath.ErrBadPattern)
			}
			deep = true
		} else if _, err := filepath.Match(s, ""); err != nil {
			return nil, err
		}
	}
	if !deep {
		return filepath.Glob(pattern)
	}
	i := 0
	for i < len(segs) && !hasMeta(segs[i]) {
		i++
	}
	root := strings.Join(segs[:i], string(filepath.Separator))
	if root == "" && i > 0 {
		root = string(filepath.Separator) // an absolute pattern from /
	}
	walkRoot := root
	if walkRoot == "" {
		walkRoot = "."
	}
	var out []string
	err := filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == walkRoot && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // no match
			}
			return err
		}
		if p == walkRoot {
			return nil
		}
		if hidden(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(walkRoot, p)
		if err != nil {
			return err
		}
		if matchElems(segs[i:], strings.Split(rel, string(filepath.Separator))) {
			if root == "" {
				p = rel
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// matchElems matches path elements against pattern elements, "**" taking
// any number of them.
func matchElems(pat, path []string) bool {
	if len(pat) == 0 {
		return len(path) == 0
	}
	if pat[0] == "**" {
		for k := 0; k <= len(path); k++ {
			if matchElems(pat[1:], path[k:]) {
				return true
			}
		}
		return false
	}
	if len(path) == 0 {
		return false
	}
	ok, _ := filepath.Match(pat[0], path[0])
	return ok && matchElems(pat[1:], path[1:])
}

// walkShards lists the files inside dir, with their hive keys below base.
func walkShards(base, dir string) ([]Shard, error) {
	var shards []Shard
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && hidden(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			// A symbolic link is followed to what it names.
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			if !st.Mode().IsRegular() {
				return nil
			}
		}
		shards = append(shards, Shard{Path: p, Keys: hiveKeys(base, p)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(shards, func(a, b Shard) int { return strings.Compare(a.Path, b.Path) })
	return shards, nil
}

// hidden tells the names a directory listing leaves out: hidden files and
// the markers and logs that Spark, Hadoop and Delta write beside the data.
func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

// hiveKeys reads the key=value folders of file's path below base.
func hiveKeys(base, file string) []PartitionKey {
	rel, err := filepath.Rel(base, filepath.Dir(file))
	if err != nil || rel == "." {
		return nil
	}
	var keys []PartitionKey
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			continue
		}
		if uk, err := url.PathUnescape(k); err == nil {
			k = uk
		}
		if v == hiveNull {
			keys = append(keys, PartitionKey{Name: k, Null: true})
			continue
		}
		if uv, err := url.PathUnescape(v); err == nil {
			v = uv
		}
		keys = append(keys, PartitionKey{Name: k, Value: v})
	}
	return keys
}

// checkKeys requires every shard to have the first one's partition keys.
func checkKeys(path string, shards []Shard) error {
	first := shards[0]
	for _, s := range shards[1:] {
		if !slices.EqualFunc(s.Keys, first.Keys, func(a, b PartitionKey) bool { return a.Name == b.Name }) {
			return fmt.Errorf("%s: shard %s has the partition keys %q, shard %s has %q: every shard must sit under the same key=value folders: %w",
				path, s.Path, keyNames(s.Keys), first.Path, keyNames(first.Keys), ErrFormat)
		}
	}
	seen := map[string]bool{}
	for _, k := range first.Keys {
		if seen[k.Name] {
			return fmt.Errorf("%s: partition key %q appears twice on the way to %s: %w", path, k.Name, first.Path, ErrFormat)
		}
		seen[k.Name] = true
	}
	return nil
}

func keyNames(keys []PartitionKey) []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return names
}
