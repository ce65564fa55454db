package ledger

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/zeebo/xxh3"

	"github.com/pate-tool/pate/label/internal/listtext"
)

// listColumn builds a list column of typ from rows (nil: a null list) of
// elements (nil: a null element), each converted to typ's element type.
func listColumn(t *testing.T, mem memory.Allocator, typ arrow.DataType, rows [][]any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, typ)
	defer b.Release()
	lb := b.(array.ListLikeBuilder)
	for _, row := range rows {
		if row == nil {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for _, v := range row {
			if v == nil {
				lb.ValueBuilder().AppendNull()
				continue
			}
			f := v.(float64)
			switch vb := lb.ValueBuilder().(type) {
			case *array.Float32Builder:
				vb.Append(float32(f))
			case *array.Float64Builder:
				vb.Append(f)
			case *array.Int64Builder:
				vb.Append(int64(f))
			case *array.Int8Builder:
				vb.Append(int8(f))
			case *array.Uint64Builder:
				vb.Append(uint64(f))
			default:
				t.Fatalf("no element builder for %s", typ)
			}
		}
	}
	return b.NewArray()
}

// hashColumn returns the lanes putColumn gives each value of c.
func hashColumn(c arrow.Array) []lanes {
	rows := make([]lanes, c.Len())
	for i := range rows {
		rows[i] = lanes{p1, p3}
	}
	putColumn(rows, c)
	return rows
}

// hashTexts returns the lanes putText gives each cell (as a CSV's cells
// are hashed).
func hashTexts(cells []string) []lanes {
	rows := make([]lanes, len(cells))
	for i, s := range cells {
		rows[i] = lanes{p1, p3}
		putText(&rows[i], s)
	}
	return rows
}

// TestListIdentityAcrossEncodings: a list of numbers is one value whatever
// holds it: a float32 list, a float64 list of the float32s' shortest
// decimals, an integer list of whole numbers, fixed-size or not, and the
// text of any of them in a CSV cell, as Arrow or DuckDB writes it. Zeros,
// subnormals, numbers past 2^24, NaN, ±Inf, null elements, empty and null
// lists included, and a float32 whose text rounds twice to its neighbour.
func TestListIdentityAcrossEncodings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f32, f64 := arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64
	// Each row's values as float32s; the float64 list holds their
	// shortest decimals.
	rows32 := [][]float32{
		{0.1, 0.25, -3.5e-7, 12.375},
		{1, -2, 0, float32(math.Copysign(0, -1))},
		{1e-40, -1.17549435e-38, 3e9, 16777216, 16777218},
		{math.Float32frombits(0x15ae43fd)}, // its text, read as a float64, rounds to the next float32
		{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 3.4028235e38},
		{},
	}
	var rows, rows64 [][]any
	var texts, duck []string
	for _, r := range rows32 {
		var a, b []any
		var ts, ds []string
		for _, x := range r {
			a = append(a, float64(x))
			b = append(b, listtext.Float64(x))
			ts = append(ts, string(strconv.AppendFloat(nil, float64(x), 'g', -1, 32)))
			ds = append(ds, strconv.FormatFloat(listtext.Float64(x), 'g', -1, 64))
		}
		if a == nil {
			a, b = []any{}, []any{}
		}
		rows, rows64 = append(rows, a), append(rows64, b)
		texts = append(texts, "["+strings.Join(ts, ",")+"]")
		duck = append(duck, "["+strings.Join(ds, ", ")+"]")
	}
	rows = append(rows, []any{0.5, nil}, nil)
	rows64 = append(rows64, []any{0.5, nil}, nil)
	texts = append(texts, "[0.5,null]", "")
	duck = append(duck, "[ 0.5 , NULL ]", "")

	build := func(typ arrow.DataType, rows [][]any) []lanes {
		c := listColumn(t, mem, typ, rows)
		defer c.Release()
		return hashColumn(c)
	}
	want := build(arrow.ListOf(f32), rows)
	for _, tc := range []struct {
		name string
		got  []lanes
	}{
		{"float64 list of the shortest decimals", build(arrow.ListOf(f64), rows64)},
		{"large list of float32", build(arrow.LargeListOf(f32), rows)},
		{"Arrow's text in a CSV", hashTexts(texts)},
		{"DuckDB's text in a CSV", hashTexts(duck)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for r := range want {
				if tc.got[r] != want[r] {
					t.Errorf("row %d (%s): not the float32 list's value", r, texts[r])
				}
			}
		})
	}

	// Whole numbers: an integer list, fixed-size lists, and float lists
	// agree.
	whole := [][]any{{1.0, 2.0, -3.0}, {0.0, 100.0, 7.0}}
	wantWhole := build(arrow.ListOf(arrow.PrimitiveTypes.Int64), whole)
	for _, typ := range []arrow.DataType{
		arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int8),
		arrow.FixedSizeListOf(3, f32),
		arrow.ListOf(f64),
	} {
		got := build(typ, whole)
		for r := range got {
			if got[r] != wantWhole[r] {
				t.Errorf("%s row %d: not the int64 list's value", typ, r)
			}
		}
	}
	for r, got := range hashTexts([]string{"[1, 2.0, -3]", "[0,1e2,7]"}) {
		if got != wantWhole[r] {
			t.Errorf("text row %d: not the int64 list's value", r)
		}
	}
}

// TestListIdentityDistinct: lists that are not the same values are told
// apart: another order, another length, a null element for a number, a
// null list for an empty one, a float64 that is a float32's exact value
// but not its shortest decimal, a list for a scalar, and a text that is
// not all numbers hashes as text.
func TestListIdentityDistinct(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f32, f64 := arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64
	one := func(typ arrow.DataType, row []any) lanes {
		rows := [][]any{row}
		if row == nil {
			rows = [][]any{nil}
		}
		c := listColumn(t, mem, typ, rows)
		defer c.Release()
		return hashColumn(c)[0]
	}
	base := one(arrow.ListOf(f32), []any{0.1, 2.0})
	for _, tc := range []struct {
		name string
		got  lanes
	}{
		{"another order", one(arrow.ListOf(f32), []any{2.0, 0.1})},
		{"one element more", one(arrow.ListOf(f32), []any{0.1, 2.0, 0.0})},
		{"a null element more", one(arrow.ListOf(f32), []any{0.1, 2.0, nil})},
		{"a null for the whole number", one(arrow.ListOf(f32), []any{0.1, nil})},
		{"the float32's exact value as float64", one(arrow.ListOf(f64), []any{float64(float32(0.1)), 2.0})},
		{"a neighbouring float32", one(arrow.ListOf(f32), []any{float64(math.Nextafter32(0.1, 1)), 2.0})},
		{"the float64 0.1 a float32 rounds to 0.1 from", one(arrow.ListOf(f64), []any{0.1 + 1e-12, 2.0})},
		{"a text that is not all numbers", hashTexts([]string{"[0.1, two]"})[0]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got == base {
				t.Fatal("the same lanes as [0.1, 2]")
			}
		})
	}
	if one(arrow.ListOf(f32), []any{}) == one(arrow.ListOf(f32), nil) {
		t.Error("an empty list and a null list have the same lanes")
	}
	scalar := lanes{p1, p3}
	putInt(&scalar, 5)
	if one(arrow.ListOf(arrow.PrimitiveTypes.Int64), []any{5.0}) == scalar {
		t.Error("[5] has the lanes of 5")
	}
	// A text that is not all numbers is its text.
	asText, want := lanes{p1, p3}, lanes{p1, p3}
	putText(&asText, "[0.1, two]")
	h := xxh3.HashString128("[0.1, two]")
	want.put(tagText, h.Lo, h.Hi)
	if asText != want {
		t.Error("[0.1, two] is not hashed as its text")
	}
}

// TestListElementForms: for sampled float32 bit patterns of every
// exponent (and, unless -short, every whole float32 below 2^24), a float32
// element, the float64 its shortest text reads as, and that text in a
// list's text mix in the same value; the inline not-whole case of
// putLists32 agrees with putNum32.
func TestListElementForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	check := func(u uint32) {
		x := math.Float32frombits(u)
		var a, b, c lanes
		putNum32(&a, x)
		putNum64(&b, listtext.Float64(x))
		if a != b {
			t.Fatalf("bits %#08x: a float32 and the float64 of its shortest text differ", u)
		}
		if !math.IsNaN(float64(x)) {
			v, err := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
			if err != nil {
				t.Fatal(err)
			}
			putNum64(&c, v)
			if a != c {
				t.Fatalf("bits %#08x: a float32 and its parsed text differ", u)
			}
		}
	}
	for exp := uint32(0); exp <= 0xff; exp++ {
		for j := 0; j < 400; j++ {
			check(rng.Uint32()&(1<<31|1<<23-1) | exp<<23)
		}
	}
	if testing.Short() {
		return
	}
	for n := -(1 << 24); n <= 1<<24; n++ {
		x := float32(n)
		if y := listtext.Float64(x); y != float64(n) {
			t.Fatalf("the whole float32 %d reads as %v", n, y)
		}
	}
	// putLists32's inline case against putNum32, on a column.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var rows [][]any
	for r := 0; r < 200; r++ {
		var row []any
		for j := 0; j < 64; j++ {
			row = append(row, float64(math.Float32frombits(rng.Uint32())))
		}
		rows = append(rows, row)
	}
	c := listColumn(t, mem, arrow.FixedSizeListOf(64, arrow.PrimitiveTypes.Float32), rows)
	defer c.Release()
	got := hashColumn(c)
	for r, row := range rows {
		l := lanes{p1, p3}
		l.put(tagList, 64, 64)
		for _, v := range row {
			putNum32(&l, float32(v.(float64)))
		}
		if got[r] != l {
			t.Fatalf("row %d: putLists32 and putNum32 differ", r)
		}
	}
}

// TestPutLists32 hashes float32 list columns, four rows at a time where
// they allow it, and checks every row against putNum32 element by element:
// random bit patterns (whole numbers, NaN and ±Inf among them), a variable
// list with null rows and rows of other lengths among runs of equal ones,
// and one with null elements.
func TestPutLists32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	row := func(n int, elem func() any) []any {
		r := make([]any, n)
		for j := range r {
			r[j] = elem()
		}
		return r
	}
	bitsElem := func() any { return float64(math.Float32frombits(rng.Uint32())) }
	small := func() any { return float64(float32(rng.NormFloat64())) }
	cases := []struct {
		name string
		typ  arrow.DataType
		rows func(r int) []any
	}{
		{"fixed-size, random bits", arrow.FixedSizeListOf(64, arrow.PrimitiveTypes.Float32), func(int) []any { return row(64, bitsElem) }},
		{"fixed-size, embeddings", arrow.FixedSizeListOf(48, arrow.PrimitiveTypes.Float32), func(int) []any { return row(48, small) }},
		{"list, nulls and lengths", arrow.ListOf(arrow.PrimitiveTypes.Float32), func(r int) []any {
			switch {
			case r%11 == 3:
				return nil
			case r%13 == 5:
				return row(r%7, small)
			}
			return row(40, small)
		}},
		{"list, null elements", arrow.ListOf(arrow.PrimitiveTypes.Float32), func(r int) []any {
			x := row(40, small)
			if r%9 == 0 {
				x[r%40] = nil
			}
			return x
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var rows [][]any
			for r := range 203 {
				rows = append(rows, tc.rows(r))
			}
			c := listColumn(t, mem, tc.typ, rows)
			defer c.Release()
			got := hashColumn(c)
			for r, row := range rows {
				l := lanes{p1, p3}
				if row == nil {
					l.put(tagNull, 0, 0)
				} else {
					l.put(tagList, uint64(len(row)), uint64(len(row)))
					for _, v := range row {
						if v == nil {
							l.put(tagNull, 0, 0)
							continue
						}
						putNum32(&l, float32(v.(float64)))
					}
				}
				if got[r] != l {
					t.Fatalf("row %d: putLists32 and putNum32 differ", r)
				}
			}
		})
	}
}

// BenchmarkListIdentity hashes 20,000 embeddings of 384 float32s (the
// ledger's identity of a sensitive embedding dataset, per row).
func BenchmarkListIdentity(b *testing.B) {
	const rows, dim = 20000, 384
	rng := rand.New(rand.NewPCG(1, 2))
	vb := array.NewFloat32Builder(memory.NewGoAllocator())
	defer vb.Release()
	for range rows * dim {
		vb.Append(float32(rng.NormFloat64()))
	}
	vals := vb.NewArray()
	defer vals.Release()
	data := array.NewData(arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), rows, []*memory.Buffer{nil}, []arrow.ArrayData{vals.Data()}, 0, 0)
	defer data.Release()
	c := array.MakeFromData(data)
	defer c.Release()
	b.SetBytes(rows * dim * 4)
	for b.Loop() {
		hashColumn(c)
	}
}

// FuzzListText: a CSV cell in brackets never panics the hash; when it is
// read as a list of numbers, the same numbers written another way (each
// by strconv, joined with ", ") are the same list.
func FuzzListText(f *testing.F) {
	for _, s := range []string{"[]", "[0.1, 2]", "[NaN,+Inf,-0]", "[ 1e-45 , NULL ]", "[1,,2]", "[0x1p-2]", "[1e400]", "[[1]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
			s = "[" + s + "]"
		}
		var l lanes
		if !putListText(&l, s) {
			return
		}
		var parts []string
		if inner := strings.TrimSpace(s[1 : len(s)-1]); inner != "" {
			for e := range strings.SplitSeq(inner, ",") {
				e = strings.TrimSpace(e)
				if strings.EqualFold(e, "null") {
					parts = append(parts, "null")
					continue
				}
				y, err := strconv.ParseFloat(e, 64)
				if err != nil {
					t.Fatalf("%q accepted with the element %q", s, e)
				}
				parts = append(parts, strconv.FormatFloat(y, 'g', -1, 64))
			}
		}
		var again lanes
		if !putListText(&again, "["+strings.Join(parts, ", ")+"]") || again != l {
			t.Fatalf("%q and its numbers rewritten differ", s)
		}
	})
}

// TestListIdentityPinned pins the identity of an embedding dataset (a
// fixed-size float32 list with whole, large, NaN and infinite elements
// among normal ones; a variable one with null rows, null elements and rows
// of other lengths): a ledger's accounts are keyed by it, so a faster hash
// of the same rows must give the same identity.
func TestListIdentityPinned(t *testing.T) {
	const want = "081dff5ff2b82c01fc3125369025eb2a7580582801766920fa7c49aaef6923cf"
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float64{0, 1, -3, 1 << 25, math.NaN(), math.Inf(-1), 0.5}
	var fixed, varied [][]any
	for r := range 101 {
		row := make([]any, 24)
		for j := range row {
			row[j] = float64(float32(rng.NormFloat64()))
			if (r+j)%17 == 0 {
				row[j] = special[(r+j)%len(special)]
			}
		}
		fixed = append(fixed, row)
		switch {
		case r%10 == 4:
			varied = append(varied, nil)
		case r%6 == 1:
			varied = append(varied, []any{nil, 2.5, float64(r)})
		default:
			varied = append(varied, row[:8+r%3])
		}
	}
	a := listColumn(t, mem, arrow.FixedSizeListOf(24, arrow.PrimitiveTypes.Float32), fixed)
	defer a.Release()
	b := listColumn(t, mem, arrow.ListOf(arrow.PrimitiveTypes.Float32), varied)
	defer b.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: a.DataType(), Nullable: true}, {Name: "v", Type: b.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(sc, []arrow.Array{a, b}, 101)
	defer rec.Release()
	var h ContentHash
	if err := h.Add(rec); err != nil {
		t.Fatal(err)
	}
	if got := h.ID(); got != want {
		t.Errorf("identity %s, want %s", got, want)
	}
}
