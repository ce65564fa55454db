package learners

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// bruteNearest is the index of the row of c nearest to r (squared
// Euclidean; equal distances: the lower index).
func bruteNearest(c *Matrix, r []float32) int32 {
	best, bd := int32(0), float32(0)
	for j := 0; j < c.Rows; j++ {
		var d float32
		for k, v := range r {
			e := v - c.Row(j)[k]
			d += e * e
		}
		if j == 0 || d < bd {
			best, bd = int32(j), d
		}
	}
	return best
}

// TestFitCellCentres: the centres are deterministic for a seed, one per
// distinct row when there are fewer than asked, never duplicated, and
// the bad inputs are errors.
func TestFitCellCentres(t *testing.T) {
	x, _ := blobs(2000, 4, 5, 3)
	dup := NewMatrix(60, 2) // three distinct rows, 20 copies each
	for i := 0; i < dup.Rows; i++ {
		dup.Row(i)[0], dup.Row(i)[1] = float32(i%3), float32(-(i % 3))
	}
	tests := []struct {
		name string
		x    *Matrix
		m    int
		want int // centres returned
	}{
		{"blobs, 40 centres", x, 40, 40},
		{"blobs, one centre", x, 1, 1},
		{"three distinct rows, 10 asked", dup, 10, 3},
		{"three distinct rows, 3 asked", dup, 3, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c1, err := FitCellCentres(tc.x, tc.m, 10, 7)
			if err != nil {
				t.Fatal(err)
			}
			c2, err := FitCellCentres(tc.x, tc.m, 10, 7)
			if err != nil {
				t.Fatal(err)
			}
			if c1.Rows != tc.want || c1.Cols != tc.x.Cols {
				t.Fatalf("%d×%d centres, want %d×%d", c1.Rows, c1.Cols, tc.want, tc.x.Cols)
			}
			if !slices.Equal(c1.Data, c2.Data) {
				t.Error("two fits with the same seed differ")
			}
			for i := 0; i < c1.Rows; i++ {
				for j := 0; j < i; j++ {
					if slices.Equal(c1.Row(i), c1.Row(j)) {
						t.Errorf("centres %d and %d are the same point", j, i)
					}
				}
			}
		})
	}
	nan := &Matrix{Rows: 2, Cols: 1, Data: []float32{1, float32(nanF())}}
	for _, bad := range []struct {
		name string
		x    *Matrix
		m    int
	}{{"no rows", NewMatrix(0, 3), 2}, {"no centres", x, 0}, {"a NaN", nan, 1}, {"nil", nil, 1}} {
		if _, err := FitCellCentres(bad.x, bad.m, 5, 1); err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
}

func nanF() float64 { z := 0.0; return z / z }

// TestAssignCells: the nearest centre of every row, as a brute-force scan
// finds it, ties (a row halfway between two centres) to the lower index.
func TestAssignCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, shape := range []struct{ rows, centres, dim int }{{500, 7, 3}, {300, 300, 16}, {100, 1, 5}} {
		x, c := NewMatrix(shape.rows, shape.dim), NewMatrix(shape.centres, shape.dim)
		for i := range x.Data {
			x.Data[i] = float32(rng.IntN(5)) // small integers: many exact ties
		}
		for i := range c.Data {
			c.Data[i] = float32(rng.IntN(5))
		}
		got := make([]int32, x.Rows)
		if err := AssignCells(c, x, got); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < x.Rows; i++ {
			if want := bruteNearest(c, x.Row(i)); got[i] != want {
				t.Fatalf("%v: row %d in cell %d, want %d", shape, i, got[i], want)
			}
		}
	}
	if err := AssignCells(NewMatrix(0, 2), NewMatrix(3, 2), make([]int32, 3)); err == nil {
		t.Error("no centres: no error")
	}
}

// TestCellModelPredict: a row is labelled by the argmax of the summed
// histograms of its nearest cells, worked by hand on three centres of a
// line: 0, 10 and 20, classes a, b, c.
func TestCellModelPredict(t *testing.T) {
	centres := &Matrix{Rows: 3, Cols: 1, Data: []float32{0, 10, 20}}
	table := []int64{
		5, 0, 1, // cell 0: a
		0, 3, -4, // cell 1: b (a negative noisy count)
		0, 0, 9, // cell 2: c
	}
	x := &Matrix{Rows: 4, Cols: 1, Data: []float32{1, 9, 19, 6}}
	tests := []struct {
		nearest int
		want    []int32
	}{
		{1, []int32{0, 1, 2, 1}},
		// 1 → cells 0, 1: (5, 3, −3) a; 9 → 1, 0 (0 is at 9, 2 at 11): a;
		// 19 → 2, 1: (0, 3, 5) c; 6 → 1, 0: a.
		{2, []int32{0, 0, 2, 0}},
		// every cell: (5, 3, 6): c for all.
		{3, []int32{2, 2, 2, 2}},
		{9, []int32{2, 2, 2, 2}}, // clamped to the 3 centres
	}
	for _, tc := range tests {
		m, err := NewCellModel(centres, table, 3, tc.nearest)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int32, x.Rows)
		m.Predict(x, got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("nearest %d: %v, want %v", tc.nearest, got, tc.want)
		}
	}
	if _, err := NewCellModel(centres, table[:8], 3, 1); err == nil {
		t.Error("a table of the wrong size: no error")
	}
}

// TestSmoothCells: a row takes the argmax of the summed scores the cells
// give its k nearest public rows. On a line of 20 rows, one cell at each, the
// cells say a below 10 and b from 10, and a lone b at 4: with k = 3 the row
// at 4 is outvoted back to a (3, 4, 5), and a row at 10.2 is b (10, 11, 9).
func TestSmoothCells(t *testing.T) {
	pub := NewMatrix(20, 1)
	for i := range pub.Data {
		pub.Data[i] = float32(i)
	}
	table := make([]int64, 2*20) // a cell at each row: a below 10, b from 10, and b at 4
	for i := 0; i < 20; i++ {
		if i < 10 && i != 4 {
			table[2*i] = 9
		} else {
			table[2*i+1] = 9
		}
	}
	cells, err := NewCellModel(pub, table, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := SmoothCells(cells, pub, 3, 1000)
	if err != nil {
		t.Fatal(err)
	}
	x := &Matrix{Rows: 3, Cols: 1, Data: []float32{4, 10.2, 0}}
	before, after := make([]int32, 3), make([]int32, 3)
	cells.Predict(x, before)
	m.Predict(x, after)
	if !slices.Equal(before, []int32{1, 1, 0}) || !slices.Equal(after, []int32{0, 1, 0}) {
		t.Errorf("cells %v, smoothed %v; want [1 1 0] and [0 1 0]", before, after)
	}
	if _, err := SmoothCells(cells, NewMatrix(0, 1), 3, 10); err == nil {
		t.Error("no public rows: no error")
	}
}

// cellFixture is a cell model on blobs and rows to predict.
func cellFixture(t testing.TB) (Model, *Matrix) {
	x, y := blobs(3000, 6, 4, 5)
	c, err := FitCellCentres(x, 50, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	cells := make([]int32, x.Rows)
	if err := AssignCells(c, x, cells); err != nil {
		t.Fatal(err)
	}
	table := make([]int64, c.Rows*4)
	for i, j := range cells {
		table[int(j)*4+int(y[i])]++
	}
	m, err := NewCellModel(c, table, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m, x
}

// TestCellModelConcurrent: Predict of a cell model, plain or smoothed,
// from several goroutines gives what one call gives (go test -race -run Cell ./learners).
func TestCellModelConcurrent(t *testing.T) {
	cells, x := cellFixture(t)
	smooth, err := SmoothCells(cells, x, 10, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Model{cells, smooth} {
		want := make([]int32, x.Rows)
		m.Predict(x, want)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lo := g * 500
				part := &Matrix{Rows: 1000, Cols: x.Cols, Data: x.Data[lo*x.Cols : (lo+1000)*x.Cols]}
				got := make([]int32, part.Rows)
				m.Predict(part, got)
				if !slices.Equal(got, want[lo:lo+1000]) {
					t.Errorf("%T: goroutine %d predicts differently", m, g)
				}
			}()
		}
		wg.Wait()
	}
}

// TestSmoothCellsSeen: the smoothed model's labels are the search's
// whether a row was met before (in the same batch or an earlier one) or
// not, and when the memory of rows met is full.
func TestSmoothCellsSeen(t *testing.T) {
	cells, x := cellFixture(t)
	rows := func(idx ...int) *Matrix {
		out := NewMatrix(0, x.Cols)
		for _, i := range idx {
			out.Data = append(out.Data, x.Row(i)...)
			out.Rows++
		}
		return out
	}
	seq := func(lo, hi, rep int) []int {
		var out []int
		for r := 0; r < rep; r++ {
			for i := lo; i < hi; i++ {
				out = append(out, i)
			}
		}
		return out
	}
	tests := []struct {
		name    string
		full    bool // the memory is full before the first batch
		batches [][]int
	}{
		{"new rows", false, [][]int{seq(0, 600, 1), seq(600, 1200, 1)}},
		{"repeats within and across batches", false, [][]int{seq(0, 300, 3), seq(0, 600, 2), seq(200, 400, 1)}},
		{"one row", false, [][]int{{7}, {7}, {8, 7}}},
		{"full", true, [][]int{seq(0, 300, 2), seq(0, 300, 1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := SmoothCells(cells, x, 10, 1000)
			if err != nil {
				t.Fatal(err)
			}
			sm := m.(*smoothModel)
			if tc.full {
				sm.seen.used = predCacheBytes
			}
			for b, idx := range tc.batches {
				q := rows(idx...)
				got, want := make([]int32, q.Rows), make([]int32, q.Rows)
				sm.Predict(q, got)
				sm.predict(q, want)
				if !slices.Equal(got, want) {
					t.Fatalf("batch %d: %v, the search's %v", b, got, want)
				}
			}
			if tc.full && len(sm.seen.class) != 0 {
				t.Errorf("a full memory took %d rows", len(sm.seen.class))
			}
		})
	}
	t.Run("a hash another row holds", func(t *testing.T) {
		m, err := SmoothCells(cells, x, 10, 1000)
		if err != nil {
			t.Fatal(err)
		}
		sm := m.(*smoothModel)
		a, b := rows(1), rows(2)
		got := make([]int32, 1)
		sm.Predict(a, got)
		// Row 2's hash now names row 1: a collision, which must read as a
		// miss.
		sm.seen.slot[maphash.Bytes(sm.seen.seed, rowBytes(b.Row(0)))] = 0
		if miss := sm.seen.lookup(b, got); len(miss) != 1 {
			t.Fatal("another row's entry answered for row 2")
		}
		want := make([]int32, 1)
		sm.Predict(b, got)
		sm.predict(b, want)
		if got[0] != want[0] {
			t.Errorf("row 2: %d, the search's %d", got[0], want[0])
		}
	})
}

// TestCellModelRoundTrip: a stored cell model, plain or smoothed,
// predicts what it did; every cut, a trailing byte, another shape, k 0 and
// a non-finite point are ErrModelFormat.
func TestCellModelRoundTrip(t *testing.T) {
	cells, x := cellFixture(t)
	smooth, err := SmoothCells(cells, x, 10, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m    Model
		kind string
	}{{cells, ModelCells}, {smooth, ModelCellsSmoothed}} {
		t.Run(tc.kind, func(t *testing.T) {
			kind, b, err := EncodeModel(tc.m)
			if err != nil || kind != tc.kind {
				t.Fatalf("EncodeModel: %q, %v", kind, err)
			}
			m2, err := DecodeModel(kind, b, 4, x.Cols)
			if err != nil {
				t.Fatal(err)
			}
			p1, p2 := make([]int32, x.Rows), make([]int32, x.Rows)
			tc.m.Predict(x, p1)
			m2.Predict(x, p2)
			if !slices.Equal(p1, p2) {
				t.Fatal("the stored model predicts differently")
			}
			for n := 0; n < len(b); n += 1 + len(b)/50 {
				if _, err := DecodeModel(kind, b[:n], 4, x.Cols); !errors.Is(err, ErrModelFormat) {
					t.Fatalf("cut at %d of %d bytes: %v", n, len(b), err)
				}
			}
			bad := map[string]func([]byte) ([]byte, int, int){
				"trailing byte": func(b []byte) ([]byte, int, int) { return append(b, 0), 4, x.Cols },
				"wrong dim":     func(b []byte) ([]byte, int, int) { return b, 4, x.Cols + 1 },
				"wrong classes": func(b []byte) ([]byte, int, int) { return b, 3, x.Cols },
				"k 0": func(b []byte) ([]byte, int, int) {
					c := slices.Clone(b)
					c[8], c[9], c[10], c[11] = 0, 0, 0, 0
					return c, 4, x.Cols
				},
				"a NaN point": func(b []byte) ([]byte, int, int) {
					c := slices.Clone(b)
					c[16], c[17], c[18], c[19] = 0, 0, 0xc0, 0x7f
					return c, 4, x.Cols
				},
			}
			for name, edit := range bad {
				data, classes, dim := edit(b)
				if _, err := DecodeModel(kind, data, classes, dim); !errors.Is(err, ErrModelFormat) {
					t.Errorf("%s: %v, want ErrModelFormat", name, err)
				}
			}
		})
	}
}

// FuzzDecodeModel: stored model bytes of any kind decode to a model or to
// ErrModelFormat, never a panic; a decoded model predicts without one.
func FuzzDecodeModel(f *testing.F) {
	m, x := cellFixture(f)
	_, b, err := EncodeModel(m)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ModelCells, b, 4, x.Cols)
	f.Add(ModelCells, b[:40], 4, x.Cols)
	f.Add(ModelKNN, b, 4, x.Cols)
	f.Add(ModelCellsSmoothed, b, 4, x.Cols)
	f.Fuzz(func(t *testing.T, kind string, data []byte, classes, dim int) {
		if dim > 64 || classes > 64 {
			return
		}
		m, err := DecodeModel(kind, data, classes, dim)
		if err != nil {
			if !errors.Is(err, ErrModelFormat) {
				t.Fatalf("%v does not wrap ErrModelFormat", err)
			}
			return
		}
		q := NewMatrix(3, dim)
		m.Predict(q, make([]int32, 3))
	})
}

// BenchmarkFitCellCentres: the centres of the shapes a run meets (letter:
// 6,667 public rows of 16 features, 700 cells; a wide one-hot encoding).
func BenchmarkFitCellCentres(b *testing.B) {
	for _, s := range []struct {
		name         string
		rows, dim, m int
	}{{"20k×16,m=700", 20000, 16, 700}, {"20k×100,m=1500", 20000, 100, 1500}} {
		x, _ := blobs(s.rows, s.dim, 10, 1)
		b.Run(s.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := FitCellCentres(x, s.m, 10, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCellsPredict: labelling public rows of 64 features as a run on
// a large public file does, per row: the cells' own prediction (nearest 3
// of 2,048 centres) and the smoothed one (nearest 10 of 10,000 scored
// public rows, the labelling pass of cell-histogram).
func BenchmarkCellsPredict(b *testing.B) {
	const dim, cells, classes, rows = 64, 2048, 2, 4096
	pub, _ := blobs(10000, dim, 10, 2)
	centres, err := FitCellCentres(pub, cells, 2, 1)
	if err != nil {
		b.Fatal(err)
	}
	table := make([]int64, centres.Rows*classes)
	for i := range table {
		table[i] = int64(i % 7)
	}
	m, err := NewCellModel(centres, table, classes, 3)
	if err != nil {
		b.Fatal(err)
	}
	sm, err := SmoothCells(m, pub, 10, 10000)
	if err != nil {
		b.Fatal(err)
	}
	x, _ := blobs(rows, dim, 10, 3)
	out := make([]int32, rows)
	for _, c := range []struct {
		name  string
		model Model
	}{{"cells", m}, {"smoothed", sm}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				c.model.Predict(x, out)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*rows), "µs/row")
		})
	}
}

// TestPredCacheBound: the memory of rows takes rows until its bound, then
// none, and its slice of rows is not reserved far past the bound (append
// grows a large slice by about a quarter); the rows it took are answered
// with their classes.
func TestPredCacheBound(t *testing.T) {
	for _, dim := range []int{1, 16, 64} {
		t.Run(fmt.Sprintf("width %d", dim), func(t *testing.T) {
			var c predCache
			per := 4*dim + predCacheEntry
			most := predCacheBytes/per + 1
			x := NewMatrix(4096, dim)
			pred := make([]int32, x.Rows)
			next := 0
			for batch := 0; next < most+2*x.Rows; batch++ {
				for i := 0; i < x.Rows; i++ {
					x.Row(i)[0] = float32(next) // distinct rows
					pred[i] = int32(next % 7)
					next++
				}
				c.store(x, pred)
			}
			if len(c.class) != most {
				t.Errorf("took %d rows, want %d", len(c.class), most)
			}
			if got, limit := cap(c.rows), most*dim+most*dim/4+1024; got > limit {
				t.Errorf("reserved %d values for %d rows of %d", got, most, dim)
			}
			probe := NewMatrix(2, dim)
			probe.Row(0)[0], probe.Row(1)[0] = 5, float32(next-1) // taken; not taken
			out := make([]int32, 2)
			if miss := c.lookup(probe, out); len(miss) != 1 || miss[0] != 1 || out[0] != 5 {
				t.Errorf("missed %v, answered %d; want row 1 missed and class 5", miss, out[0])
			}
		})
	}
}
