package arrowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
// Inside a directory (given, or matched by a pattern) only the files of a
// recognised format are shards (see dataFile): a README.md or a
// schema.json beside the data is skipped, and ListFiles names it.
//
// Folders named key=value between the directory (or the last folder of
// the pattern without metacharacters) and a file are its hive partition
// keys; every shard must have the same keys, in the same order.
func ListShards(path string) ([]Shard, error) {
	shards, _, err := ListFiles(path)
	return shards, err
}

// ListFiles is ListShards that also returns the files of the directories
// it left out for their format (not the hidden ones), sorted by path.
func ListFiles(path string) (shards []Shard, skipped []string, err error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.IsDir():
		return []Shard{{Path: path}}, nil, nil
	case err == nil:
		shards, skipped, err := walkShards(path, path)
		if err != nil {
			return nil, nil, err
		}
		if len(shards) == 0 {
			if len(skipped) > 0 {
				return nil, nil, fmt.Errorf("%s: the directory holds no data file (%s: not Parquet, Arrow IPC or CSV): %w",
					path, strings.Join(skipped, ", "), ErrFormat)
			}
			return nil, nil, fmt.Errorf("%s: the directory holds no data file: %w", path, ErrFormat)
		}
		return shards, skipped, checkKeys(path, shards)
	case errors.Is(err, fs.ErrNotExist) && hasMeta(path):
		return globShards(path)
	}
	return nil, nil, err // *fs.PathError names the path
}

// dataExts are the names of the files a directory's listing takes without
// looking inside them.
var dataExts = []string{".parquet", ".pq", ".arrow", ".arrows", ".feather", ".ipc", ".csv", ".csv.gz"}

// dataFile tells whether a file found in a directory is a shard: its name
// ends in a data format's extension (dataExts) or has no extension (as
// Hadoop names its part-00000 files), or its first bytes are a Parquet,
// Arrow IPC or gzip magic. Anything else (README.md, _metadata-like JSON,
// notes.txt) is no shard: read as CSV, its lines would be taken for rows.
func dataFile(path string) bool {
	name := strings.ToLower(filepath.Base(path))
	if filepath.Ext(name) == "" || slices.ContainsFunc(dataExts, func(ext string) bool { return strings.HasSuffix(name, ext) }) {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return true // opening it as a shard says why it cannot be read
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if isGzip(head) || bytes.HasPrefix(head, magicParquet) || bytes.HasPrefix(head, magicArrow) {
		return true
	}
	return len(head) >= 8 && binary.LittleEndian.Uint32(head) == 0xFFFFFFFF
}

func hasMeta(path string) bool { return strings.ContainsAny(path, `*?[`) }

// globShards expands the pattern: a matching file is a shard whatever its
// format, the files inside a matching directory as ListFiles says.
func globShards(pattern string) ([]Shard, []string, error) {
	matches, err := glob(pattern)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: bad pattern: %w", pattern, err)
	}
	// The hive keys are read below the pattern's fixed part.
	base := pattern
	for hasMeta(base) {
		base = filepath.Dir(base)
	}
	var shards []Shard
	var skipped []string
	for _, m := range matches {
		if hidden(filepath.Base(m)) {
			continue
		}
		st, err := os.Stat(m)
		if err != nil {
			return nil, nil, err
		}
		if !st.IsDir() {
			shards = append(shards, Shard{Path: m, Keys: hiveKeys(base, m)})
			continue
		}
		inside, left, err := walkShards(base, m)
		if err != nil {
			return nil, nil, err
		}
		shards = append(shards, inside...)
		skipped = append(skipped, left...)
	}
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("%s: the pattern matches no data file: %w", pattern, fs.ErrNotExist)
	}
	slices.SortFunc(shards, func(a, b Shard) int { return strings.Compare(a.Path, b.Path) })
	shards = slices.CompactFunc(shards, func(a, b Shard) bool { return a.Path == b.Path })
	slices.Sort(skipped)
	return shards, slices.Compact(skipped), checkKeys(pattern, shards)
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

// walkShards lists the files inside dir, with their hive keys below base,
// and the files it skipped for their format.
func walkShards(base, dir string) ([]Shard, []string, error) {
	var shards []Shard
	var skipped []string
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
		if !dataFile(p) {
			skipped = append(skipped, p)
			return nil
		}
		shards = append(shards, Shard{Path: p, Keys: hiveKeys(base, p)})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(shards, func(a, b Shard) int { return strings.Compare(a.Path, b.Path) })
	return shards, skipped, nil
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
