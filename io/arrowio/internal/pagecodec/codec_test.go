package pagecodec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/zlib"
)

// arrowCodec is Arrow's own codec for id.
func arrowCodec(t testing.TB, id compress.Compression) compress.Codec {
	c, err := compress.GetCodec(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pageCodec is this package's decoder of id's pages.
func pageCodec(t testing.TB, id compress.Compression) compress.Codec {
	c, err := Codec(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readFixture(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode is c.Decode into a fresh dst of the given length and capacity,
// with a panic returned, not raised.
func decode(c compress.Codec, n, capacity int, src []byte) (out []byte, panicked any) {
	defer func() { panicked = recover() }()
	var dst []byte
	if capacity >= 0 {
		dst = make([]byte, n, capacity)
	}
	return c.Decode(dst, src), nil
}

func zlibStream(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// skippable is a zstd skippable frame carrying b.
func skippable(b []byte) []byte {
	out := binary.LittleEndian.AppendUint32(nil, 0x184D2A50)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
	return append(out, b...)
}

func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	if i < 0 {
		i += len(b)
	}
	b[i] ^= 0x55
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestCodecDecode decodes pages with this package's codecs and with
// Arrow's: the same bytes, or a panic from both, for every page, including
// empty, multi-member, truncated, corrupt and wrongly sized ones; and a
// zlib stream in a gzip page, which Arrow's Go codec refuses, is read as
// Arrow C++ reads it.
func TestCodecDecode(t *testing.T) {
	page := readFixture(t, "page.bin")
	n := len(page)
	gz, zs, br := arrowCodec(t, compress.Codecs.Gzip), arrowCodec(t, compress.Codecs.Zstd), arrowCodec(t, compress.Codecs.Brotli)
	goGz := gz.Encode(nil, page)
	goZs := zs.Encode(nil, page)
	goBr := br.Encode(nil, page)
	third := n / 3
	threeGz := cat(gz.Encode(nil, page[:third]), gz.Encode(nil, page[third:2*third]), gz.Encode(nil, page[2*third:]))
	cliGz, twoGz := readFixture(t, "page.bin.gz"), readFixture(t, "two.gz")
	cliZs, noCheckZs := readFixture(t, "page.bin.zst"), readFixture(t, "page.nocheck.zst")
	zl := zlibStream(t, page)

	const (
		same    = iota // this package's codec returns what Arrow's returns, or both panic
		cPage          // same, and the page itself
		panics         // both panic
		zlibOK         // the page (Arrow's Go codec panics)
		refused        // this package's codec panics: the block states more than the page
	)
	tests := []struct {
		name      string
		id        compress.Compression
		src       []byte
		n, cap    int // dst; cap -1 for a nil dst
		want      int
		wantEmpty bool
	}{
		{"gzip, Go", compress.Codecs.Gzip, goGz, n, n, cPage, false},
		{"gzip, gzip -9", compress.Codecs.Gzip, cliGz, n, n, cPage, false},
		{"gzip, two members", compress.Codecs.Gzip, twoGz, n, n, cPage, false},
		{"gzip, three Go members", compress.Codecs.Gzip, threeGz, n, n, cPage, false},
		{"gzip, zlib stream", compress.Codecs.Gzip, zl, n, n, zlibOK, false},
		{"gzip, empty page", compress.Codecs.Gzip, gz.Encode(nil, nil), 0, 0, same, true},
		{"gzip, empty page, nil dst", compress.Codecs.Gzip, gz.Encode(nil, nil), 0, -1, same, true},
		{"gzip, page longer than stated", compress.Codecs.Gzip, goGz, n - 1, n - 1, same, false},
		{"gzip, page shorter than stated", compress.Codecs.Gzip, goGz, n + 1, n + 1, panics, false},
		{"gzip, truncated", compress.Codecs.Gzip, goGz[:len(goGz)-10], n, n, panics, false},
		{"gzip, truncated header", compress.Codecs.Gzip, goGz[:5], n, n, panics, false},
		{"gzip, corrupt body", compress.Codecs.Gzip, flip(cliGz, len(cliGz)/2), n, n, same, false},
		{"gzip, corrupt crc", compress.Codecs.Gzip, flip(cliGz, -6), n, n, same, false},
		{"gzip, trailing bytes", compress.Codecs.Gzip, cat(goGz, []byte("junk")), n, n, same, false},
		{"gzip, no input", compress.Codecs.Gzip, nil, n, n, panics, false},
		{"gzip, zlib stream too short", compress.Codecs.Gzip, zl, n + 1, n + 1, panics, false},
		{"gzip, corrupt zlib stream", compress.Codecs.Gzip, flip(zl, -2), n, n, panics, false},

		{"zstd, Go", compress.Codecs.Zstd, goZs, n, n, cPage, false},
		{"zstd, zstd -19", compress.Codecs.Zstd, cliZs, n, n, cPage, false},
		{"zstd, no checksum", compress.Codecs.Zstd, noCheckZs, n, n, cPage, false},
		{"zstd, two frames", compress.Codecs.Zstd, cat(zs.Encode(nil, page[:third]), zs.Encode(nil, page[third:])), n, n, cPage, false},
		{"zstd, skippable frame", compress.Codecs.Zstd, cat(skippable([]byte("meta")), cliZs), n, n, cPage, false},
		{"zstd, empty page", compress.Codecs.Zstd, zs.Encode(nil, nil), 0, 0, same, true},
		{"zstd, empty page, nil dst", compress.Codecs.Zstd, zs.Encode(nil, nil), 0, -1, same, true},
		{"zstd, spare capacity", compress.Codecs.Zstd, cliZs, n, 2 * n, same, false},
		{"zstd, page longer than dst", compress.Codecs.Zstd, cliZs, n - 1, n - 1, refused, false},
		{"zstd, page shorter than dst", compress.Codecs.Zstd, cliZs, n + 1, n + 1, same, false},
		{"zstd, truncated", compress.Codecs.Zstd, cliZs[:len(cliZs)-10], n, n, panics, false},
		{"zstd, corrupt body", compress.Codecs.Zstd, flip(cliZs, len(cliZs)/2), n, n, same, false},
		{"zstd, corrupt checksum", compress.Codecs.Zstd, flip(cliZs, -1), n, n, panics, false},
		{"zstd, trailing bytes", compress.Codecs.Zstd, cat(cliZs, []byte("junk")), n, n, same, false},

		{"brotli, Go", compress.Codecs.Brotli, goBr, n, n, cPage, false},
		{"brotli, empty page", compress.Codecs.Brotli, br.Encode(nil, nil), 0, 0, same, true},
		{"brotli, page longer than dst", compress.Codecs.Brotli, goBr, n - 1, n - 1, same, false},
		{"brotli, page shorter than dst", compress.Codecs.Brotli, goBr, n + 1, n + 1, same, false},
		{"brotli, truncated", compress.Codecs.Brotli, goBr[:len(goBr)/2], n, n, same, false},
		{"brotli, corrupt", compress.Codecs.Brotli, flip(goBr, len(goBr)/3), n, n, same, false},
		{"brotli, trailing bytes", compress.Codecs.Brotli, cat(goBr, []byte("junk")), n, n, same, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := arrowCodec(t, tc.id)
			w := pageCodec(t, tc.id)
			got, gotPanic := decode(w, tc.n, tc.cap, tc.src)
			want, wantPanic := decode(orig, tc.n, tc.cap, tc.src)
			switch tc.want {
			case zlibOK:
				if gotPanic != nil || !bytes.Equal(got, page) {
					t.Fatalf("zlib page not decoded (panic %v)", gotPanic)
				}
				return
			case panics:
				if gotPanic == nil || wantPanic == nil {
					t.Fatalf("corrupt page decoded: wrapped panic %v, Arrow's %v", gotPanic, wantPanic)
				}
				return
			case refused:
				if gotPanic == nil {
					t.Fatalf("a block longer than its page decoded (%d bytes)", len(got))
				}
				return
			case cPage:
				if !bytes.Equal(got, page) {
					t.Fatalf("decoded %d bytes, not the page (panic %v)", len(got), gotPanic)
				}
			}
			if (gotPanic == nil) != (wantPanic == nil) {
				t.Fatalf("wrapped panic %v, Arrow's %v", gotPanic, wantPanic)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("wrapped decoded %d bytes, Arrow's %d, or different bytes", len(got), len(want))
			}
			if tc.wantEmpty && (gotPanic != nil || len(got) != 0) {
				t.Fatalf("empty page: %d bytes, panic %v", len(got), gotPanic)
			}
		})
	}
}

// TestCodecRefusesLongBlocks: a zstd frame or a snappy block that states
// more bytes than its page (here 34 GB, as a fuzzed file's did: Arrow's Go
// decoders allocate what is stated before decoding, and the process died),
// and zstd frames that state nothing but decode to far more than their
// page, are refused with a panic, as Arrow's codecs refuse corrupt input,
// with nothing large allocated.
func TestCodecRefusesLongBlocks(t *testing.T) {
	const stated = 34766585856
	// A single-segment zstd frame header stating an 8-byte content size,
	// then a raw block header.
	frame := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	frame = append(frame, 0xe0) // FHD: 8-byte content size, single segment
	frame = binary.LittleEndian.AppendUint64(frame, stated)
	frame = append(frame, 0x01, 0x00, 0x00, 'x')
	block := binary.AppendUvarint(nil, stated)
	block = append(block, 0x00, 'x')
	// A frame that does not state its size, of 1,000 blocks of one
	// repeated byte (128 KB each from 4 bytes): 128 MB from 4 KB.
	bomb := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	bomb = append(bomb, 0x00, 0x50) // FHD: no size stated; a 1 MB window
	for i := range 1000 {
		h := uint32(128<<10)<<3 | 1<<1 // an RLE block of 128 KB
		if i == 999 {
			h |= 1 // the last
		}
		bomb = append(bomb, byte(h), byte(h>>8), byte(h>>16), 'x')
	}
	for _, tc := range []struct {
		id  compress.Compression
		src []byte
	}{{compress.Codecs.Zstd, frame}, {compress.Codecs.Snappy, block}, {compress.Codecs.Zstd, bomb}} {
		if m, ok := ZstdContentSize(frame); !ok || m != stated {
			t.Fatalf("frame header states %d (%v)", m, ok)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, p := decode(pageCodec(t, tc.id), 95, 95, tc.src)
		runtime.ReadMemStats(&after)
		if p == nil {
			t.Errorf("%v: a block stating %d bytes decoded into a page of 95", tc.id, stated)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
			t.Errorf("%v: refusing it allocated %d MB", tc.id, d>>20)
		}
	}
}

// TestCodecKeepsOthers: codecs without a decoder here are Arrow's, and
// every method but Decode stays Arrow's.
func TestCodecKeepsOthers(t *testing.T) {
	for _, id := range []compress.Compression{compress.Codecs.Uncompressed} {
		if pageCodec(t, id) != arrowCodec(t, id) {
			t.Errorf("%v: not Arrow's codec", id)
		}
	}
	page := readFixture(t, "page.bin")
	for _, id := range []compress.Compression{compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Brotli} {
		orig := arrowCodec(t, id)
		w := pageCodec(t, id)
		if got, want := w.CompressBound(int64(len(page))), orig.CompressBound(int64(len(page))); got != want {
			t.Errorf("%v: CompressBound %d, Arrow's %d", id, got, want)
		}
		var buf bytes.Buffer
		wr := w.NewWriter(&buf)
		if _, err := wr.Write(page); err != nil {
			t.Fatal(err)
		}
		if err := wr.Close(); err != nil {
			t.Fatal(err)
		}
		r := w.NewReader(bytes.NewReader(buf.Bytes()))
		back, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(back, page) {
			t.Errorf("%v: stream round trip: %d bytes, %v", id, len(back), err)
		}
		r.Close()
		if got := w.Decode(make([]byte, len(page)), w.Encode(nil, page)); !bytes.Equal(got, page) {
			t.Errorf("%v: block round trip", id)
		}
	}
}

// randomPage is n float64s, standard normal, as .ci/bench/gen.go writes
// them: a page of the speed benchmark's layouts.
func randomPage(n int) []byte {
	rng := rand.New(rand.NewPCG(15, 1))
	b := make([]byte, 0, 8*n)
	for range n {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(rng.NormFloat64()))
	}
	return b
}

// benchPage compresses page as the writers of the benchmark's layouts
// do (DuckDB: 0.957 of the size for gzip and zstd): Arrow's Go encoders
// store such pages uncompressed at their default levels, which would
// time a copy. The gzip page is Go's at level 9 (Huffman-coded, 0.957);
// the zstd page is the zstd command's at its default level when it is on
// the PATH (the Go encoder stores it: skipped without).
func benchPage(b *testing.B, id compress.Compression, c compress.Codec, page []byte) []byte {
	switch id {
	case compress.Codecs.Gzip:
		return c.EncodeLevel(nil, page, 9)
	case compress.Codecs.Zstd:
		if _, err := exec.LookPath("zstd"); err != nil {
			b.Skip("no zstd command to compress the page as libzstd does")
		}
		cmd := exec.Command("zstd", "-q", "-c")
		cmd.Stdin = bytes.NewReader(page)
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	return c.Encode(nil, page)
}

// BenchmarkDecode decodes one 1 MiB page of random float64s with this
// package's codecs (pooled decoders) and with Arrow's.
func BenchmarkDecode(b *testing.B) {
	page := randomPage(1 << 17)
	for _, id := range []compress.Compression{compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Brotli} {
		orig := arrowCodec(b, id)
		for _, impl := range []struct {
			name string
			c    compress.Codec
		}{{"arrow", orig}, {"pagecodec", pageCodec(b, id)}} {
			b.Run(id.String()+"/"+impl.name, func(b *testing.B) {
				src := benchPage(b, id, orig, page)
				if len(src) >= len(page) {
					b.Fatalf("page stored, not compressed (%d bytes)", len(src))
				}
				dst := make([]byte, len(page))
				b.SetBytes(int64(len(page)))
				for b.Loop() {
					if out := impl.c.Decode(dst, src); len(out) != len(page) {
						b.Fatal("short page")
					}
				}
			})
		}
	}
}

// TestConcurrentDecode decodes from many goroutines at once: the pooled
// decoder states are never shared between calls.
func TestConcurrentDecode(t *testing.T) {
	page := readFixture(t, "page.bin")
	type job struct {
		id  compress.Compression
		src []byte
	}
	var jobs []job
	for _, id := range []compress.Compression{compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Brotli} {
		jobs = append(jobs, job{id, arrowCodec(t, id).Encode(nil, page)})
	}
	jobs = append(jobs, job{compress.Codecs.Gzip, readFixture(t, "two.gz")}, job{compress.Codecs.Gzip, zlibStream(t, page)},
		job{compress.Codecs.Zstd, readFixture(t, "page.bin.zst")})
	errs := make(chan string, 16)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]byte, len(page))
			for i := range 30 {
				j := jobs[(g+i)%len(jobs)]
				clear(dst)
				if out := pageCodec(t, j.id).Decode(dst, j.src); !bytes.Equal(out, page) {
					errs <- fmt.Sprintf("%v: goroutine %d, decode %d: not the page", j.id, g, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestZstdContentSize checks the frame header parser against frames the
// codec writes, and that it refuses what is no frame header.
func TestZstdContentSize(t *testing.T) {
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 255, 256, 300, 65535, 65536 + 256, 1 << 20} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i * i >> 3)
		}
		frame := codec.Encode(nil, src)
		got, ok := ZstdContentSize(frame)
		if ok && got != uint64(n) {
			t.Errorf("%d bytes: header says %d", n, got)
		}
		if !ok && n >= 256 {
			t.Errorf("%d bytes: no content size found", n)
		}
		for cut := range min(len(frame), 12) {
			if got, ok := ZstdContentSize(frame[:cut]); ok && got != uint64(n) {
				t.Errorf("%d bytes cut to %d: header says %d", n, cut, got)
			}
		}
	}
	for _, b := range [][]byte{nil, {0x28, 0xb5, 0x2f}, {1, 2, 3, 4, 5, 6, 7, 8}, {0x28, 0xb5, 0x2f, 0xfd, 0x08, 0, 0, 0}} {
		if _, ok := ZstdContentSize(b); ok {
			t.Errorf("% x: content size found in no frame header", b)
		}
	}
}
