package pqread

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/golang/snappy"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// TestParquetByteStreamSplitByRanges reads DuckDB's one-row-group v2
// files (BYTE_STREAM_SPLIT doubles, one with nulls, and floats; snappy
// and stored; pages of several 64 KB fragments) in segments that cut the
// pages: their streams are read a range at a time, not spilled, unless
// the budget has no room for them, when they are streamed into the spill
// file. Segments of 777 rows start mid-fragment in every byte stream.
func TestParquetByteStreamSplitByRanges(t *testing.T) {
	for _, file := range []string{"duckdb_v2_one_group.parquet", "duckdb_v2_one_group_stored.parquet"} {
		for _, tc := range []struct {
			name    string
			budget  int64
			workers int
		}{
			{"by-ranges", 64 << 20, 1},
			{"by-ranges/2-workers", 64 << 20, 2},
			{"spilled", 0, 2},
			// Fragments of 4,099 bytes, which DuckDB's copies and tags
			// cross: its snappy pages are decoded whole (and spilled).
			{"not-by-ranges", 64 << 20, 2},
			{"not-by-ranges/spilled", 0, 2},
		} {
			t.Run(file+"/"+tc.name, func(t *testing.T) {
				tune := streamSmall(DefaultTuning(), 777)
				sdir := spillSmall(t, tune, tc.budget, 0, true)
				byRanges := !strings.HasPrefix(tc.name, "not-by-ranges") || strings.Contains(file, "stored")
				if strings.HasPrefix(tc.name, "not-by-ranges") {
					tune.SnappyFragment = 4099
				}
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				st := new(Stats)
				recs := readAllOf(t, filepath.Join("../../testdata", "writers", file),
					ReadOptions{Allocator: mem, BatchSize: 1000, Columns: []string{"x0", "x1", "f"}, Workers: tc.workers, Stats: st, Tuning: tune}, file)
				checkDuckDBRows(t, recs, 20000)
				pqtest.ReleaseAll(recs)
				mem.AssertSize(t, 0)
				want := int64(3)
				if !byRanges {
					want = 0
				}
				if got := st.PageStreams.Load(); got != want {
					t.Errorf("%d pages read by ranges, want %d", got, want)
				}
				// Pages not read by ranges overhang the segments and go to
				// the spill file (Tuning.MaxFreeLeft is 0), as do all with no budget.
				if did, want := st.SpilledPages.Load() != 0, tc.budget == 0 || !byRanges; did != want {
					t.Errorf("pages spilled: %v, want %v", did, want)
				}
				if st.LiveStreams.Load() != 0 {
					t.Errorf("%d page streams live after Close", st.LiveStreams.Load())
				}
				dirEmpty(t, sdir, "after Close")
			})
		}
	}
}

// snappyBlock builds a snappy block of size decoded bytes from tags.
func snappyBlock(size int, tags ...[]byte) []byte {
	b := binary.AppendUvarint(nil, uint64(size))
	for _, t := range tags {
		b = append(b, t...)
	}
	return b
}

// literal is a snappy literal tag with its bytes.
func literal(p []byte) []byte {
	n := len(p) - 1
	switch {
	case n < 60:
		return append([]byte{byte(n << 2)}, p...)
	case n < 1<<8:
		return append([]byte{60 << 2, byte(n)}, p...)
	default:
		return append([]byte{61 << 2, byte(n), byte(n >> 8)}, p...)
	}
}

// copy2 is a snappy copy tag with a 2-byte offset (n <= 64).
func copy2(off, n int) []byte {
	return []byte{byte((n-1)<<2 | 2), byte(off), byte(off >> 8)}
}

// TestSnappyFragments checks the walk of a snappy block's tags: where its
// 64 KB fragments start, and the blocks it refuses (which are then
// decoded whole); and that the ranges read from the fragments are the
// block's bytes.
func TestSnappyFragments(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fr := int(DefaultTuning().SnappyFragment)
	text := make([]byte, 3*fr+1234) // copies and literals
	for i := range text {
		text[i] = "abcdefgh"[i%8]
		if rng.IntN(9) == 0 {
			text[i] = byte(rng.Uint32())
		}
	}
	noise := make([]byte, 2*fr+17) // one literal a fragment
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	full := bytes.Repeat([]byte{7}, fr)
	cases := []struct {
		name  string
		block []byte
		size  int
		ok    bool
		frags int // fragments, if ok
	}{
		{"go encoder, copies", snappy.Encode(nil, text), len(text), true, 4},
		{"go encoder, literals", snappy.Encode(nil, noise), len(noise), true, 3},
		{"one byte", snappy.Encode(nil, []byte{1}), 1, true, 1},
		{"a fragment, then a copy within the next", snappyBlock(fr+8, literal(full), literal([]byte("abcd")), copy2(4, 4)), fr + 8, true, 2},
		{"copy back past its fragment", snappyBlock(fr+8, literal(full), copy2(16, 8)), fr + 8, false, 0},
		{"literal across fragments", snappyBlock(fr+8, literal(full[:fr-4]), literal(full[:12])), fr + 8, false, 0},
		{"copy across fragments", snappyBlock(fr+8, literal(full[:fr-4]), copy2(4, 12)), fr + 8, false, 0},
		{"copy of offset 0", snappyBlock(8, literal([]byte("ab")), copy2(0, 6)), 8, false, 0},
		{"copy before the start", snappyBlock(8, literal([]byte("ab")), copy2(3, 6)), 8, false, 0},
		{"length says more", snappyBlock(9, literal([]byte("12345678"))), 9, false, 0},
		{"length says less", snappyBlock(7, literal([]byte("12345678"))), 7, false, 0},
		{"trailing bytes", append(snappyBlock(8, literal([]byte("12345678"))), 0), 8, false, 0},
		{"truncated literal", snappyBlock(8, literal([]byte("12345678"))[:5]), 8, false, 0},
		{"size asked differs", snappy.Encode(nil, text), len(text) - 1, false, 0},
		{"empty", snappy.Encode(nil, nil), 0, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(append([]byte("lead"), tc.block...))
			frags, ok := snappyFragments(r, 4, int64(len(tc.block)), int64(tc.size), int64(fr))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if len(frags) != tc.frags+1 || frags[len(frags)-1] != int64(len(tc.block)) {
				t.Fatalf("fragments %v, want %d and the end", frags, tc.frags)
			}
			want, err := snappy.Decode(nil, tc.block)
			if err != nil {
				t.Fatal(err)
			}
			p := &rangePage{r: r, at: 4, csize: int64(len(tc.block)), size: int64(tc.size), frags: frags, frag: int64(fr)}
			var pd plainDecoder
			for range 200 {
				off := rng.IntN(tc.size)
				n := rng.IntN(min(tc.size-off, 3*fr/2) + 1)
				got := make([]byte, n)
				if !p.read(&pd, got, int64(off)) {
					t.Fatalf("read of %d bytes at %d failed", n, off)
				}
				if !bytes.Equal(got, want[off:off+n]) {
					t.Fatalf("read of %d bytes at %d differs from the block's", n, off)
				}
			}
			if p.read(&pd, make([]byte, 2), int64(tc.size-1)) {
				t.Error("a read past the end succeeded")
			}
		})
	}
}

// FuzzSnappyFragments: any bytes the walk of a snappy block's fragments
// takes are a valid block, whose ranges read as snappy decodes them; a
// block it takes that snappy refuses fails to read. Nothing panics.
func FuzzSnappyFragments(f *testing.F) {
	fr := int(DefaultTuning().SnappyFragment)
	for _, s := range []string{"a", "abcabcabcabcabcabc", strings.Repeat("0123456789", 20000), strings.Repeat("x", 3*fr+5)} {
		f.Add(snappy.Encode(nil, []byte(s)), uint32(3), uint32(100))
	}
	f.Add(snappyBlock(fr+8, literal(bytes.Repeat([]byte{1}, fr)), copy2(8, 8)), uint32(fr-3), uint32(9))
	f.Fuzz(func(t *testing.T, block []byte, off, n uint32) {
		m, k := binary.Uvarint(block)
		if k <= 0 || m > 1<<20 {
			return
		}
		r := bytes.NewReader(block)
		frags, ok := snappyFragments(r, 0, int64(len(block)), int64(m), int64(fr))
		if !ok {
			return
		}
		want, err := snappy.Decode(nil, block)
		p := &rangePage{r: r, csize: int64(len(block)), size: int64(m), frags: frags, frag: int64(fr)}
		var pd plainDecoder
		all := make([]byte, m)
		if got := p.read(&pd, all, 0); got != (err == nil) {
			t.Fatalf("read whole: %v, snappy: %v", got, err)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(all, want) {
			t.Fatal("the block read whole differs from snappy's")
		}
		o := int64(off) % int64(m)
		part := make([]byte, min(int64(n), int64(m)-o))
		if !p.read(&pd, part, o) || !bytes.Equal(part, want[o:o+int64(len(part))]) {
			t.Fatalf("the range of %d bytes at %d reads wrong", len(part), o)
		}
	})
}

// TestParquetByteStreamSplitByRangesCorrupt garbles bytes of the chunks
// of the one-row-group v2 files read by ranges (headers, levels, snappy
// tags, values): a read fails with ErrFormat or returns every row, and
// never panics, hangs or leaks.
func TestParquetByteStreamSplitByRangesCorrupt(t *testing.T) {
	for _, file := range []string{"duckdb_v2_one_group.parquet", "duckdb_v2_one_group_stored.parquet"} {
		t.Run(file, func(t *testing.T) {
			tune := streamSmall(DefaultTuning(), 777)
			spillSmall(t, tune, 64<<20, 0, true)
			garbleChunks(t, filepath.Join("../../testdata", "writers", file), 20000, 120, 211,
				ReadOptions{BatchSize: 1000, Columns: []string{"x0", "x1", "f"}, Workers: 2, Tuning: tune})
		})
	}
}

// TestListCursorByteStreamSplit reads DuckDB's v2 list columns of
// distinct floats (BYTE_STREAM_SPLIT, snappy and stored, one row group):
// a FLOAT[8] (a LIST), a FLOAT[] of 1 to 5 elements and one with null elements,
// decoded whole and by the list cursor, whose pages are then read by
// ranges. Every element is checked against what DuckDB wrote.
func TestListCursorByteStreamSplit(t *testing.T) {
	elem := func(i, j int) float32 { return float32(float64((i*7919+j*104729)%1000003) / 1024) }
	for _, file := range []string{"duckdb_emb_bss.parquet", "duckdb_emb_bss_stored.parquet"} {
		for _, byRanges := range []bool{false, true} {
			name := file + "/whole"
			tune := DefaultTuning()
			if byRanges {
				name = file + "/by-ranges"
				tune.ListStreamBytes, tune.MaxColumnwiseRows, tune.SegmentRows, tune.MaxFreeLeft = 0, 400, 777, 0
			}
			t.Run(name, func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				recs, err, st := readParquetStats(t, filepath.Join("../../testdata", "writers", file), true, mem, []string{"e32", "l32", "nl32"}, tune)
				if err != nil {
					t.Fatal(err)
				}
				i := 0
				for _, rec := range recs {
					e32 := rec.Column(0).(*array.List) // DuckDB's FLOAT[8] is a Parquet LIST
					l32 := rec.Column(1).(*array.List)
					nl32 := rec.Column(2).(*array.List)
					ev := e32.ListValues().(*array.Float32)
					lv := l32.ListValues().(*array.Float32)
					nv := nl32.ListValues().(*array.Float32)
					for r := 0; r < int(rec.NumRows()); r, i = r+1, i+1 {
						if lo, hi := e32.ValueOffsets(r); lo != int64(r*8) || hi != lo+8 {
							t.Fatalf("row %d: e32 at %d..%d", i, lo, hi)
						}
						for j := range 8 {
							if got := ev.Value(r*8 + j); got != elem(i, j) {
								t.Fatalf("row %d: e32[%d] = %v, want %v", i, j, got, elem(i, j))
							}
						}
						lo, hi := l32.ValueOffsets(r)
						if hi-lo != int64(1+i%5) {
							t.Fatalf("row %d: l32 has %d elements, want %d", i, hi-lo, 1+i%5)
						}
						for j := range hi - lo {
							if got := lv.Value(int(lo + j)); got != elem(i, int(j)) {
								t.Fatalf("row %d: l32[%d] = %v, want %v", i, j, got, elem(i, int(j)))
							}
						}
						lo, hi = nl32.ValueOffsets(r)
						if hi-lo != 3 {
							t.Fatalf("row %d: nl32 has %d elements, want 3", i, hi-lo)
						}
						for j := range 3 {
							k := int(lo) + j
							if null := (i+j)%13 == 0; nv.IsNull(k) != null || !null && nv.Value(k) != elem(i, j) {
								t.Fatalf("row %d: nl32[%d] = %v (null %v), want %v (null %v)", i, j, nv.Value(k), nv.IsNull(k), elem(i, j), null)
							}
						}
					}
				}
				pqtest.ReleaseAll(recs)
				mem.AssertSize(t, 0)
				if i != 4000 {
					t.Fatalf("read %d rows, want 4000", i)
				}
				if got := st.ListCursors.Load(); byRanges != (got == 3) {
					t.Errorf("%d chunks decoded by the cursor", got)
				}
				if got := st.PageStreams.Load(); byRanges != (got >= 3) {
					t.Errorf("%d pages read by ranges", got)
				}
			})
		}
	}
}
