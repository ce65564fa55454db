package label

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

var edgeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "u", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// edgeRows builds one batch of n rows: x = i, u = unit(i) ("" for null),
// y = label(i) (-1 for null).
func edgeRows(mem memory.Allocator, n int, unit func(int) string, label func(int) int64) *memReader {
	b := array.NewRecordBuilder(mem, edgeSchema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Float64Builder).Append(float64(i))
		if u := unit(i); u == "" {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(u)
		}
		if y := label(i); y < 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(y)
		}
	}
	return &memReader{schema: edgeSchema, recs: []arrow.Record{b.NewRecord()}}
}

// TestSensitiveEdgesAreDiagnosticsOnly: runs on sensitive data with too
// few units, null units, no usable label or no rows at all go ahead (a
// refusal would depend on the data), tell the local user nothing through
// Warn, and report the counts through Diagnose only.
func TestSensitiveEdgesAreDiagnosticsOnly(t *testing.T) {
	byRow := func(i int) string { return fmt.Sprintf("p%d", i) }
	half := func(i int) int64 { return int64(i % 2) }
	tests := []struct {
		name  string
		n     int
		unit  func(int) string
		label func(int) int64
		want  string // in the diagnostics
	}{
		{"fewer units than teachers", 90, func(i int) string { return fmt.Sprintf("p%d", i%3) }, half, "fewer than the 8 teachers"},
		{"null privacy units", 90, func(i int) string {
			if i%10 == 0 {
				return ""
			}
			return byRow(i)
		}, half, "9 rows with a null privacy unit"},
		{"no usable label", 90, byRow, func(int) int64 { return -1 }, `label column "y" has no usable value`},
		{"labels outside the classes", 90, byRow, func(int) int64 { return 7 }, "teachers received no usable rows"},
		{"no rows", 0, byRow, half, "has no usable value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			priv := edgeRows(mem, tc.n, tc.unit, tc.label)
			defer releaseAll(priv.recs)
			pub := edgeRows(mem, 20, byRow, half)
			defer releaseAll(pub.recs)
			seed := uint64(3)
			cfg := Config{Label: "y", Classes: []string{"0", "1"}, Features: []string{"x"}, Keep: []string{"x"},
				// MaxQueries 4: so few that the noise stays within the 8
				// teachers' votes (more would be warned of, from public figures).
				PrivacyUnit: "u", Teachers: 8, Learner: "logreg", Epsilon: 2, Delta: 1e-5, PublicRows: 20, MaxQueries: 4,
				Seed: &seed, BatchSize: 64, Allocator: mem}
			warned, diagnosed := runEdge(t, cfg, priv, pub)
			if len(warned) > 0 {
				t.Errorf("warnings on data-dependent facts: %q", warned)
			}
			if !strings.Contains(strings.Join(diagnosed, "\n"), tc.want) {
				t.Errorf("diagnostics %q do not say %q", diagnosed, tc.want)
			}
		})
	}
}

// runEdge runs cfg on priv and the 20 public rows of pub, and returns what
// it warned of and diagnosed; the run must go ahead and write every public
// row.
func runEdge(t *testing.T, cfg Config, priv, pub *memReader) (warned, diagnosed []string) {
	t.Helper()
	cfg.Warn = func(m string) { warned = append(warned, m) }
	cfg.Diagnose = func(m string) { diagnosed = append(diagnosed, m) }
	l, err := New(cfg, priv.schema, pub.schema)
	if err != nil {
		t.Fatal(err)
	}
	out := &discard{}
	if _, err := l.Run(context.Background(), priv, pub, out); err != nil {
		t.Fatalf("run refused: %v", err)
	}
	if out.rows != 20 {
		t.Errorf("wrote %d rows, want 20", out.rows)
	}
	return warned, diagnosed
}

// TestDeclaredLabelType: a declared label type the sensitive schema does
// not have is refused by New, before any row is read; one it has is the
// output's label type.
func TestDeclaredLabelType(t *testing.T) {
	pub := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
	tests := []struct {
		name string
		typ  arrow.DataType
		ok   bool
	}{
		{"matches", arrow.PrimitiveTypes.Int64, true},
		{"string declared, int64 found", arrow.BinaryTypes.String, false},
		{"bool declared, int64 found", arrow.FixedWidthTypes.Boolean, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Label: "y", Features: []string{"x"}, PrivacyUnit: "u", Teachers: 4, Epsilon: 1, Delta: 1e-5,
				BatchSize: 8, LabelType: tc.typ}
			l, err := New(cfg, edgeSchema, pub)
			if !tc.ok {
				if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "--label-type") {
					t.Errorf("err = %v, want ErrInvalidInput naming --label-type", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f, _ := l.OutputSchema().FieldsByName("y"); !arrow.TypeEqual(f[0].Type, tc.typ) {
				t.Errorf("output label type %s, want %s", f[0].Type, tc.typ)
			}
		})
	}
}

// TestDiscoveryRefusalIsCharged: a run refused by its private class
// discovery (here: no usable label at all) reveals the discovery's output
// by failing, so its error says what the discovery cost; an error that
// does not say so costs nothing.
func TestDiscoveryRefusalIsCharged(t *testing.T) {
	byRow := func(i int) string { return fmt.Sprintf("p%d", i) }
	tests := []struct {
		name  string
		label func(int) int64
	}{
		{"no usable label", func(int) int64 { return -1 }},
		{"one class", func(int) int64 { return 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			priv := edgeRows(mem, 200, byRow, tc.label)
			defer releaseAll(priv.recs)
			pub := edgeRows(mem, 20, byRow, tc.label)
			defer releaseAll(pub.recs)
			seed := uint64(4)
			cfg := Config{Label: "y", Features: []string{"x"}, Keep: []string{"x"},
				Teachers: 4, Learner: "logreg", Epsilon: 2, Delta: 1e-5, PublicRows: 20,
				Seed: &seed, BatchSize: 64, Allocator: mem}
			l, err := New(cfg, priv.schema, pub.schema)
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Run(context.Background(), priv, pub, &discard{})
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			rho := SpentBefore(err)
			if !(rho > 0 && rho < 0.1) {
				t.Errorf("SpentBefore = %g, want the discovery's small positive ρ", rho)
			}
			if SpentBefore(errors.New("other")) != 0 {
				t.Errorf("an error without a spend charges something")
			}
		})
	}
}

// TestDiscoveryCountsRepeatedRows: without --privacy-unit each row is a
// unit, so a frequency table's repeated rows each count towards their
// class (a table of two distinct rows repeated 300 times releases both
// classes); rows that share one privacy unit still count once (and then
// release nothing). Counting rows by their content hash, as units, made
// the classes of such tables vanish.
func TestDiscoveryCountsRepeatedRows(t *testing.T) {
	tests := []struct {
		name    string
		unit    string
		classes int // released; 0: the run is refused
	}{
		{"rows are the units", "", 2},
		{"one privacy unit", "u", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			same := func(int) string { return "a" }
			twoRows := func(i int) int64 { return int64(i % 2) }
			priv := edgeRows(mem, 600, same, twoRows)
			defer releaseAll(priv.recs)
			// x = i % 2: two distinct rows, each repeated 300 times.
			x := priv.recs[0].Column(0).(*array.Float64)
			for i := range x.Len() {
				x.Float64Values()[i] = float64(i % 2)
			}
			pub := edgeRows(mem, 20, same, twoRows)
			defer releaseAll(pub.recs)
			seed := uint64(5)
			cfg := Config{Label: "y", Features: []string{"x"}, Keep: []string{"x"}, PrivacyUnit: tc.unit,
				Teachers: 4, Learner: "logreg", Epsilon: 2, Delta: 1e-5, PublicRows: 20,
				Seed: &seed, BatchSize: 64, Allocator: mem}
			l, err := New(cfg, priv.schema, pub.schema)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := l.Run(context.Background(), priv, pub, &discard{})
			if tc.classes == 0 {
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("err = %v, want a refusal: one unit cannot release a class", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Classes) != tc.classes {
				t.Errorf("released classes %v, want %d", rep.Classes, tc.classes)
			}
		})
	}
}
