package pagecodec

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/gzip"
)

// readGzipStream reads all of src through a GzipReader, step bytes at a
// time.
func readGzipStream(src []byte, step int) ([]byte, error) {
	z, ok := NewGzipReader(bytes.NewReader(src))
	if !ok {
		return nil, errors.New("not a gzip stream")
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

// goGzipMember reads the first gzip member of src with a fresh reader
// (Multistream off).
func goGzipMember(src []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	z.Multistream(false)
	return io.ReadAll(io.LimitReader(z, 1<<24))
}

// TestGzipReader streams gzip pages through a pooled inflater in reads of
// several sizes, each case twice (the second time with an inflater the
// pool kept): what a fresh reader reads (one member) or an error where it
// fails.
func TestGzipReader(t *testing.T) {
	page := readFixture(t, "page.bin")
	gz := arrowCodec(t, compress.Codecs.Gzip)
	cli := readFixture(t, "page.bin.gz")
	tests := []struct {
		name    string
		src     []byte
		wantErr bool
	}{
		{"gzip -9", cli, false},
		{"Go member", gz.Encode(nil, page), false},
		{"two members: the first", readFixture(t, "two.gz"), false},
		{"empty member", gz.Encode(nil, nil), false},
		{"trailing bytes", cat(cli, []byte("junk")), false},
		{"empty input", nil, true},
		{"zlib stream", zlibStream(t, page), true},
		{"truncated", cli[:len(cli)-10], true},
		{"header only", cli[:10], true},
		{"corrupt body", flip(cli, len(cli)/2), true},
		{"corrupt crc", flip(cli, -6), true},
		{"corrupt length", flip(cli, -2), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, werr := goGzipMember(tc.src)
			if (werr != nil) != tc.wantErr {
				t.Fatalf("the Go decoder: %v", werr)
			}
			for _, step := range []int{1, 7, 4096, 1 << 16, 1, 1 << 16} {
				got, err := readGzipStream(tc.src, step)
				if tc.wantErr {
					if err == nil {
						t.Fatalf("step %d: read %d bytes, no error", step, len(got))
					}
					continue
				}
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("step %d: read %d bytes, a fresh reader %d (%v)", step, len(got), len(want), err)
				}
			}
		})
	}
}

// FuzzGzipReader streams arbitrary input through a pooled inflater (one
// that may have read corrupt input before): whatever it reads without
// error, a fresh reader reads alike, and the other way round.
func FuzzGzipReader(f *testing.F) {
	gz := arrowCodec(f, compress.Codecs.Gzip)
	seedPages(f, func(p []byte) []byte { return gz.Encode(nil, p) })
	f.Add(readFixture(f, "two.gz"), uint16(100))
	f.Fuzz(func(t *testing.T, src []byte, step uint16) {
		got, err := readGzipStream(src, int(step%4096)+1)
		want, werr := goGzipMember(src)
		if (err == nil) != (werr == nil) {
			t.Fatalf("pooled: %v; fresh: %v", err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("pooled read %d bytes, fresh %d", len(got), len(want))
		}
	})
}
