package arrowio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/ioerr"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Sentinel errors a caller can test with errors.Is.
var (
	// ErrFormat reports input whose format is unknown or whose bytes are
	// corrupt (including panics recovered from the Arrow and Parquet
	// decoders).
	ErrFormat = ioerr.ErrFormat
	// ErrNoColumn reports a projected column that the input does not have.
	ErrNoColumn = ioerr.ErrNoColumn
)

// Format is an input file format.
type Format int

// Input formats told apart by SniffFormat.
const (
	FormatParquet   Format = iota + 1 // Apache Parquet
	FormatIPCFile                     // Arrow IPC file ("Feather v2")
	FormatIPCStream                   // Arrow IPC stream
	FormatCSV                         // comma-separated values with a header row
)

// String returns a short lower-case name of the format.
func (f Format) String() string {
	switch f {
	case FormatParquet:
		return "parquet"
	case FormatIPCFile:
		return "arrow ipc file"
	case FormatIPCStream:
		return "arrow ipc stream"
	case FormatCSV:
		return "csv"
	default:
		return fmt.Sprintf("format(%d)", int(f))
	}
}

// sniffLen is how many leading bytes SniffFormat wants to see.
const sniffLen = 512

var (
	magicParquet = []byte("PAR1")
	magicArrow   = []byte("ARROW1")
)

// SniffFormat tells the format of an input from its first bytes (up to 512
// are looked at) and its name: Parquet by the magic "PAR1", an Arrow IPC
// file by "ARROW1", an Arrow IPC stream by its continuation marker
// 0xFFFFFFFF (or an old-style little-endian length prefix), and CSV when
// the name ends in ".csv" or the first line looks like text. Anything else is an
// error wrapping ErrFormat.
func SniffFormat(head []byte, name string) (Format, error) {
	switch {
	case len(head) == 0:
		return 0, fmt.Errorf("%s: empty input, expected parquet, arrow ipc or csv: %w", name, ErrFormat)
	case bytes.HasPrefix(head, magicParquet):
		return FormatParquet, nil
	case bytes.HasPrefix(head, magicArrow):
		return FormatIPCFile, nil
	case len(head) >= 8 && binary.LittleEndian.Uint32(head) == 0xFFFFFFFF:
		return FormatIPCStream, nil
	}
	// Text is judged on the first line alone: for CSV that is the header,
	// so whether a file opens as CSV does not depend on its rows (which
	// may be sensitive), and neither do the bytes an error quotes.
	first := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		first = head[:i+1]
	}
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".csv") || looksLikeText(first) {
		return FormatCSV, nil
	}
	if len(head) >= 8 {
		// Pre-0.15 streams start with the int32 length of the schema
		// message's flatbuffer, which is small and 8-byte aligned.
		n := int32(binary.LittleEndian.Uint32(head))
		if n > 0 && n < 1<<24 && n%8 == 0 {
			return FormatIPCStream, nil
		}
	}
	ext := filepath.Ext(name)
	return 0, fmt.Errorf("%s: unrecognised input (extension %q, first bytes % x), expected parquet (PAR1), arrow ipc file (ARROW1), arrow ipc stream (0xFFFFFFFF) or csv text: %w",
		name, ext, first[:min(len(first), 8)], ErrFormat)
}

// looksLikeText reports whether head is plausibly the start of a CSV file:
// valid UTF-8 (allowing a rune cut at the end), no NUL or other control
// bytes besides tab, CR and LF.
func looksLikeText(head []byte) bool {
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size <= 1 {
			// A multi-byte rune cut by the end of head is fine.
			return len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:])
		}
		i += size
	}
	return true
}
