package pagecodec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// readZstdStream reads all of src through a ZstdReader, step bytes at a
// time.
func readZstdStream(src []byte, step int) ([]byte, error) {
	z, ok := NewZstdReader(bytes.NewReader(src))
	if !ok {
		return nil, errors.New("no decoder set up on the stream")
	}
	defer z.Close()
	var out []byte
	buf := make([]byte, step)
	for {
		n, err := z.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// bigWindowFrame is a frame of b (one raw block, at most 128 KiB) whose
// header asks for a window of 1<<log bytes.
func bigWindowFrame(b []byte, log int) []byte {
	out := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	out = append(out, 0x00, byte(log-10)<<3) // no content size, window descriptor
	h := uint32(len(b))<<3 | 1               // last block, raw
	out = append(out, byte(h), byte(h>>8), byte(h>>16))
	return append(out, b...)
}

// streamWindowLog is MaxStreamWindow's log2.
const streamWindowLog = 23

// TestZstdReader streams zstd pages through a pooled decoder in reads of
// several sizes, each case twice (the second time with a decoder the pool
// kept): the page for one frame, several, a skippable one, an empty
// stream; an error for a truncated, corrupt or too-large-window stream.
func TestZstdReader(t *testing.T) {
	if MaxStreamWindow != 1<<streamWindowLog {
		t.Fatalf("MaxStreamWindow %d, not 1<<%d", MaxStreamWindow, streamWindowLog)
	}
	page := readFixture(t, "page.bin")
	zs := arrowCodec(t, compress.Codecs.Zstd)
	cli := readFixture(t, "page.bin.zst")
	third := len(page) / 3
	tests := []struct {
		name    string
		src     []byte
		want    []byte
		wantErr bool
	}{
		{"zstd -19", cli, page, false},
		{"no checksum", readFixture(t, "page.nocheck.zst"), page, false},
		{"Go frame", zs.Encode(nil, page), page, false},
		{"two frames", cat(zs.Encode(nil, page[:third]), zs.Encode(nil, page[third:])), page, false},
		{"skippable frame", cat(skippable([]byte("meta")), cli), page, false},
		{"empty stream", nil, nil, false},
		{"empty frame", zs.Encode(nil, nil), nil, false},
		{"truncated", cli[:len(cli)-10], nil, true},
		{"cut at a frame's header", cli[:3], nil, true},
		{"corrupt", flip(cli, len(cli)/2), nil, true},
		{"trailing bytes", cat(cli, []byte("junk")), nil, true},
		{"window at the limit", bigWindowFrame(page, streamWindowLog), page, false},
		{"window over the limit", bigWindowFrame(page, streamWindowLog+4), nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, step := range []int{1, 7, 4096, 1 << 16, 1, 1 << 16} {
				got, err := readZstdStream(tc.src, step)
				if tc.wantErr {
					if err == nil {
						t.Fatalf("step %d: read %d bytes, no error", step, len(got))
					}
					continue
				}
				if err != nil || !bytes.Equal(got, tc.want) {
					t.Fatalf("step %d: read %d bytes, want %d (%v)", step, len(got), len(tc.want), err)
				}
			}
		})
	}
}

// TestDecodeZstdInto decodes zstd pages straight into a buffer of their
// decoded length, through bufio.Readers of several sizes: the bytes the
// Go decoder gives for one frame (with and without its content size and
// checksum), several, a skippable one; false for a truncated, corrupt,
// trailing-bytes or too-large-window stream, and for a buffer longer or
// shorter than the stream decodes to.
func TestDecodeZstdInto(t *testing.T) {
	page := readFixture(t, "page.bin")
	zs := arrowCodec(t, compress.Codecs.Zstd)
	cli := readFixture(t, "page.bin.zst")
	third := len(page) / 3
	tests := []struct {
		name string
		src  []byte
		n    int  // the buffer's length
		ok   bool // and page[:n] decoded into it
	}{
		{"zstd -19", cli, len(page), true},
		{"no checksum", readFixture(t, "page.nocheck.zst"), len(page), true},
		{"Go frame", zs.Encode(nil, page), len(page), true},
		{"no content size", bigWindowFrame(page, 20), len(page), true},
		{"two frames", cat(zs.Encode(nil, page[:third]), zs.Encode(nil, page[third:])), len(page), true},
		{"skippable frame", cat(skippable([]byte("meta")), cli), len(page), true},
		{"window at the limit", bigWindowFrame(page, streamWindowLog), len(page), true},
		{"buffer too short", cli, len(page) - 1, false},
		{"buffer too long", cli, len(page) + 1, false},
		{"empty", zs.Encode(nil, nil), 0, false},
		{"truncated", cli[:len(cli)-10], len(page), false},
		{"corrupt", flip(cli, len(cli)/2), len(page), false},
		{"trailing bytes", cat(cli, []byte("junk")), len(page), false},
		{"window over the limit", bigWindowFrame(page, streamWindowLog+4), len(page), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{16, 4096, 1 << 16} {
				dst := make([]byte, tc.n)
				ok := DecodeZstdInto(bufio.NewReaderSize(bytes.NewReader(tc.src), size), dst)
				if ok != tc.ok {
					t.Fatalf("buffer %d: ok %v, want %v", size, ok, tc.ok)
				}
				if ok && !bytes.Equal(dst, page[:tc.n]) {
					t.Fatalf("buffer %d: decoded bytes differ", size)
				}
			}
		})
	}
}

// zstdStreamSeeds seeds a fuzz target of (zstd stream, uint16) with
// zstd pages and returns the fresh decoder its bytes are checked against.
func zstdStreamSeeds(f *testing.F) *zstd.Decoder {
	zs := arrowCodec(f, compress.Codecs.Zstd)
	seedPages(f, func(p []byte) []byte { return zs.Encode(nil, p) })
	f.Add(readFixture(f, "page.bin.zst"), uint16(100))
	ref, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<24))
	if err != nil {
		f.Fatal(err)
	}
	return ref
}

// FuzzZstdReader streams arbitrary input through a pooled decoder (one
// that may have read corrupt input before): whatever it reads without
// error, a fresh decoder's DecodeAll reads alike (where it reads it at
// all).
func FuzzZstdReader(f *testing.F) {
	ref := zstdStreamSeeds(f)
	defer ref.Close()
	f.Fuzz(func(t *testing.T, src []byte, step uint16) {
		got, err := readZstdStream(src, int(step%4096)+1)
		if err != nil || len(got) > 1<<24 {
			return
		}
		want, err := ref.DecodeAll(src, nil)
		if err != nil {
			return // its memory limit, or a frame only the stream reads
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("stream read %d bytes, DecodeAll %d", len(got), len(want))
		}
	})
}

// FuzzDecodeZstdInto decodes arbitrary input into a buffer of the length
// a fresh decoder's DecodeAll gives it: whatever decodes, decodes to its
// bytes; a buffer one byte shorter never takes it.
func FuzzDecodeZstdInto(f *testing.F) {
	ref := zstdStreamSeeds(f)
	defer ref.Close()
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		want, err := ref.DecodeAll(src, nil)
		if err != nil || len(want) == 0 {
			return
		}
		br := func() *bufio.Reader { return bufio.NewReaderSize(bytes.NewReader(src), int(size%4096)+16) }
		got := make([]byte, len(want))
		if DecodeZstdInto(br(), got) && !bytes.Equal(got, want) {
			t.Fatalf("decoded %d bytes unlike the Go decoder", len(got))
		}
		if DecodeZstdInto(br(), got[:len(got)-1]) {
			t.Fatalf("%d bytes decoded into %d", len(want), len(got)-1)
		}
	})
}
