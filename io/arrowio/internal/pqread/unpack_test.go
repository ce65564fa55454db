package pqread

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/bitutil"
)

// packLSB packs vals at bw bits each, LSB first, as Parquet's bit-packed
// runs do, with slack zero bytes after them.
func packLSB(vals []uint32, bw, slack int) []byte {
	b := make([]byte, (len(vals)*bw+7)/8+slack)
	for i, v := range vals {
		for j := range bw {
			if v>>j&1 == 1 {
				bit := i*bw + j
				b[bit/8] |= 1 << (bit % 8)
			}
		}
	}
	return b
}

// TestUnpack checks the bit unpacker against packLSB for every bit width,
// lengths around its groups of eight values and runs that end right after
// the last value's bits (no room for a whole-word load) or well past it.
func TestUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for bw := 0; bw <= 32; bw++ {
		mask := uint64(1)<<bw - 1
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200, 2048} {
			for _, slack := range []int{0, 3, 8, 40} {
				vals := make([]uint32, n)
				for i := range vals {
					vals[i] = uint32(rng.Uint64() & mask)
				}
				run := packLSB(vals, bw, slack)
				var most uint32
				for _, v := range vals {
					most = max(most, v)
				}
				if most == math.MaxUint32 {
					continue // no limit above it
				}
				name := fmt.Sprintf("bw=%d/n=%d/slack=%d", bw, n, slack)
				out := make([]uint32, n)
				if !unpack(run, bw, mask, out, most+1) {
					t.Fatalf("%s: refused with limit %d", name, most+1)
				}
				for i := range vals {
					if out[i] != vals[i] {
						t.Fatalf("%s: value %d is %d, want %d", name, i, out[i], vals[i])
					}
				}
				if n > 0 && most > 0 && unpack(run, bw, mask, out, most) {
					t.Fatalf("%s: accepted a value of %d with limit %d", name, most, most)
				}
			}
		}
	}
}

// BenchmarkUnpack measures the bit unpacker at the widths of dictionary
// indices: 11 bits for arrow-rs's 2,048-row groups of distinct values,
// 16 and 17 for dictionaries of some tens of thousands of values.
func BenchmarkUnpack(b *testing.B) {
	for _, bw := range []int{1, 5, 11, 16, 17, 24} {
		b.Run(fmt.Sprintf("bw=%d", bw), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			mask := uint64(1)<<bw - 1
			vals := make([]uint32, 4096)
			for i := range vals {
				vals[i] = uint32(rng.Uint64() & mask)
			}
			run := packLSB(vals, bw, 0)
			out := make([]uint32, len(vals))
			b.SetBytes(int64(len(vals) * 4))
			for b.Loop() {
				if !unpack(run, bw, mask, out, uint32(mask)+1) {
					b.Fatal("refused")
				}
			}
		})
	}
}

// TestHybridGather checks the one-pass decoder of dictionary indices
// (the generated kernel of each width, then value by value) against
// hybrid followed by a lookup, on bit-packed and repeated runs of every
// width, and that an index past the dictionary is refused whether it is
// bit-packed, repeated or in a group's tail.
func TestHybridGather(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for bw := 1; bw <= 32; bw++ {
		// Dictionaries that fill the width, or not; past 12 bits, small
		// ones written at a wider width than they need (writers may).
		sizes := []int{1000, 5000}
		if bw <= 12 {
			sizes = []int{1 << (bw - 1), 1<<bw - 1, 1 << bw}
		}
		for _, dictN := range sizes {
			if dictN == 0 {
				continue
			}
			dict := make([]uint64, dictN)
			for i := range dict {
				dict[i] = rng.Uint64()
			}
			for _, n := range []int{1, 8, 13, 300, 2048} {
				vals := make([]uint32, n)
				for i := range vals {
					vals[i] = uint32(rng.IntN(dictN))
				}
				// A bit-packed run of the first values (whole groups of
				// eight, the last padded), then a repeated run of the rest.
				packedN := n / 2
				groups := (packedN + 7) / 8
				for i := packedN; i < min(groups*8, n); i++ {
					vals[i] = 0 // the padding of the last group
				}
				var enc []byte
				padded := append(slices.Clone(vals[:packedN]), make([]uint32, groups*8-packedN)...)
				if groups > 0 {
					enc = binary.AppendUvarint(enc, uint64(groups)<<1|1)
					enc = append(enc, packLSB(padded, bw, 0)...)
				}
				rest := n - groups*8
				if rest > 0 {
					for i := groups * 8; i < n; i++ {
						vals[i] = vals[n-1]
					}
					enc = binary.AppendUvarint(enc, uint64(rest)<<1)
					v := vals[n-1]
					for range (bw + 7) / 8 {
						enc = append(enc, byte(v))
						v >>= 8
					}
				} else {
					vals = padded[:n]
				}
				name := fmt.Sprintf("bw=%d/dict=%d/n=%d", bw, dictN, n)
				want := make([]uint32, n)
				if !hybrid(enc, bw, want, uint32(dictN)) {
					t.Fatalf("%s: hybrid refused", name)
				}
				got := make([]uint64, n)
				if !hybridGather(enc, bw, got, dict) {
					t.Fatalf("%s: refused", name)
				}
				for i := range got {
					if got[i] != dict[want[i]] || want[i] != vals[i] {
						t.Fatalf("%s: row %d is %x, want dict[%d] = %x", name, i, got[i], vals[i], dict[vals[i]])
					}
				}
				// The same runs against a dictionary one value shorter
				// than the largest index they hold.
				most := slices.Max(vals)
				if most > 0 && hybridGather(enc, bw, got, dict[:most]) {
					t.Fatalf("%s: index %d accepted with a dictionary of %d", name, most, most)
				}
			}
		}
	}
}

// BenchmarkDictValues measures decoding a page of dictionary indices to
// float64 values: in one pass (hybridGather), and as the indices first,
// then the lookup, as pages with nulls are (also with nulls).
func BenchmarkDictValues(b *testing.B) {
	for _, bw := range []int{5, 11, 16} {
		rng := rand.New(rand.NewPCG(1, 2))
		dict := make([]uint64, 1<<bw)
		vals := make([]uint32, 4096)
		for i := range vals {
			vals[i] = uint32(rng.IntN(len(dict)))
		}
		enc := binary.AppendUvarint(nil, uint64(len(vals)/8)<<1|1)
		enc = append(enc, packLSB(vals, bw, 0)...)
		dst := make([]uint64, len(vals))
		b.Run(fmt.Sprintf("onepass/bw=%d", bw), func(b *testing.B) {
			b.SetBytes(int64(len(dst) * 8))
			for b.Loop() {
				if !hybridGather(enc, bw, dst, dict) {
					b.Fatal("refused")
				}
			}
		})
		b.Run(fmt.Sprintf("twopass/bw=%d", bw), func(b *testing.B) {
			idx := make([]uint32, len(vals))
			b.SetBytes(int64(len(dst) * 8))
			for b.Loop() {
				if !hybrid(enc, bw, idx, uint32(len(dict))) {
					b.Fatal("refused")
				}
				gather(dst, dict, idx, nil, 0)
			}
		})
		// A page with a null in every 64 rows: the same indices, spread
		// over 4,096+64 rows.
		valid := make([]byte, (len(vals)+len(vals)/63+8)/8)
		rows := 0
		for k := 0; k < len(vals); rows++ {
			if rows%64 != 63 {
				bitutil.SetBit(valid, rows)
				k++
			}
		}
		withNulls := make([]uint64, rows)
		b.Run(fmt.Sprintf("nulls/bw=%d", bw), func(b *testing.B) {
			idx := make([]uint32, len(vals))
			b.SetBytes(int64(len(withNulls) * 8))
			for b.Loop() {
				if !hybrid(enc, bw, idx, uint32(len(dict))) {
					b.Fatal("refused")
				}
				gather(withNulls, dict, idx, valid, 0)
			}
		})
	}
}

// TestGatherNulls checks the lookup of a page with nulls against a row
// by row reference: validity bytes all set, all clear and mixed, pages
// starting at rows that are not a multiple of eight, lengths with tails.
func TestGatherNulls(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dict := make([]uint64, 300)
	for i := range dict {
		dict[i] = rng.Uint64() | 1 // never zero, as a null's slot is
	}
	for _, row := range []int64{0, 3, 8, 13} {
		for _, n := range []int{1, 7, 8, 9, 64, 200, 1001} {
			for _, density := range []int{0, 1, 5, 9, 10} { // tenths of valid rows, runs of them
				valid := make([]byte, (int(row)+n+7)/8)
				var idx []uint32
				for i := 0; i < n; i++ {
					// Runs of 16 rows share their validity half the time.
					on := rng.IntN(10) < density
					if (i/16)%2 == 0 {
						on = density >= 5
					}
					if on {
						bitutil.SetBit(valid, int(row)+i)
						idx = append(idx, uint32(rng.IntN(len(dict))))
					}
				}
				got := make([]uint64, n)
				for i := range got {
					got[i] = 42 // stale values the lookup must overwrite
				}
				gather(got, dict, idx, valid, row)
				j := 0
				for i := range got {
					want := uint64(0)
					if bitutil.BitIsSet(valid, int(row)+i) {
						want = dict[idx[j]]
						j++
					}
					if got[i] != want {
						t.Fatalf("row %d, %d rows, density %d: slot %d is %x, want %x", row, n, density, i, got[i], want)
					}
				}
			}
		}
	}
}

// TestGeneratedKernelsCurrent runs gen_unpack.go and checks that
// unpack_gen.go is what it writes (go generate ./io/arrowio/internal/pqread
// rewrites it).
func TestGeneratedKernelsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the generator with go run")
	}
	gen, err := filepath.Abs("gen_unpack.go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "run", gen)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("go run gen_unpack.go: %v: %s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(dir, "unpack_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("unpack_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("unpack_gen.go is not what gen_unpack.go writes: run go generate ./io/arrowio/internal/pqread")
	}
}
