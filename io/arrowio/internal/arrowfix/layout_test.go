package arrowfix

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// pairType is an extension type over a struct, registered only by the
// tests that use it.
type pairType struct{ arrow.ExtensionBase }

func newPairType() *pairType {
	return &pairType{arrow.ExtensionBase{Storage: arrow.StructOf(
		arrow.Field{Name: "k", Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true})}}
}

func (*pairType) ExtensionName() string   { return "pate.test.pair" }
func (*pairType) Serialize() string       { return "" }
func (*pairType) ArrayType() reflect.Type { return reflect.TypeOf(pairArray{}) }
func (*pairType) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) {
	return newPairType(), nil
}
func (p *pairType) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == p.ExtensionName()
}

type pairArray struct{ array.ExtensionArrayBase }

func int32s() arrow.DataType { return arrow.PrimitiveTypes.Int32 }

// layoutCases has one column of each layout family, with the field nodes
// and buffers a record batch of it has (as Arrow's writer writes them and
// its loader reads them; a view array's variadic buffers included) and,
// for a dictionary-encoded column, those of its dictionary batch.
var layoutCases = []struct {
	name           string
	field          arrow.Field
	json           string
	nodes, buffers int
	dictNodes      int // dictionary batch: field nodes (0: no dictionary)
	dictBuffers    int
}{
	{"null", arrow.Field{Name: "c", Type: arrow.Null, Nullable: true}, `[null,null,null]`, 1, 0, 0, 0},
	{"bool", arrow.Field{Name: "c", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}, `[true,null,false]`, 1, 2, 0, 0},
	{"int64", arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, `[1,null,3]`, 1, 2, 0, 0},
	{"float64 no nulls", arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Float64}, `[1.5,2,3]`, 1, 2, 0, 0},
	{"decimal128", arrow.Field{Name: "c", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true}, `["1.25",null]`, 1, 2, 0, 0},
	{"fixed-size binary", arrow.Field{Name: "c", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}, Nullable: true}, `["YWJj",null]`, 1, 2, 0, 0},
	{"timestamp", arrow.Field{Name: "c", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true}, `["2024-01-02T03:04:05Z",null]`, 1, 2, 0, 0},
	{"date32", arrow.Field{Name: "c", Type: arrow.FixedWidthTypes.Date32}, `["2024-01-02"]`, 1, 2, 0, 0},
	{"duration", arrow.Field{Name: "c", Type: arrow.FixedWidthTypes.Duration_ms}, `[5,6]`, 1, 2, 0, 0},
	{"month-day-nano interval", arrow.Field{Name: "c", Type: arrow.FixedWidthTypes.MonthDayNanoInterval}, `[{"months":1,"days":2,"nanoseconds":3}]`, 1, 2, 0, 0},
	{"utf8", arrow.Field{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true}, `["a",null,"bc"]`, 1, 3, 0, 0},
	{"binary", arrow.Field{Name: "c", Type: arrow.BinaryTypes.Binary}, `["YQ==","YmM="]`, 1, 3, 0, 0},
	{"large utf8", arrow.Field{Name: "c", Type: arrow.BinaryTypes.LargeString}, `["a","bc"]`, 1, 3, 0, 0},
	{"large binary", arrow.Field{Name: "c", Type: arrow.BinaryTypes.LargeBinary, Nullable: true}, `[null,"YmM="]`, 1, 3, 0, 0},
	// one long string: one variadic data buffer
	{"utf8 view", arrow.Field{Name: "c", Type: arrow.BinaryTypes.StringView, Nullable: true}, `["a",null,"a string longer than twelve bytes"]`, 1, 3, 0, 0},
	{"binary view, inline only", arrow.Field{Name: "c", Type: arrow.BinaryTypes.BinaryView}, `["YQ==","YmM="]`, 1, 2, 0, 0},
	{"list", arrow.Field{Name: "c", Type: arrow.ListOf(int32s()), Nullable: true}, `[[1,2],null,[3]]`, 2, 4, 0, 0},
	{"large list", arrow.Field{Name: "c", Type: arrow.LargeListOf(int32s())}, `[[1,2],[],[3]]`, 2, 4, 0, 0},
	{"list view", arrow.Field{Name: "c", Type: arrow.ListViewOf(int32s()), Nullable: true}, `[[1,2],null,[3]]`, 2, 5, 0, 0},
	{"large list view", arrow.Field{Name: "c", Type: arrow.LargeListViewOf(int32s())}, `[[1,2],[3]]`, 2, 5, 0, 0},
	{"fixed-size list", arrow.Field{Name: "c", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), Nullable: true}, `[[1,2],null]`, 2, 3, 0, 0},
	{"struct", arrow.Field{Name: "c", Type: arrow.StructOf(arrow.Field{Name: "a", Type: int32s(), Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true}, `[{"a":1,"b":"x"},null]`, 3, 6, 0, 0},
	{"map", arrow.Field{Name: "c", Type: arrow.MapOf(arrow.BinaryTypes.String, int32s()), Nullable: true}, `[[{"key":"a","value":1}],null]`, 4, 8, 0, 0},
	{"sparse union", arrow.Field{Name: "c", Type: arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: int32s(), Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, []arrow.UnionTypeCode{0, 1})}, `[[0,1],[1,"x"]]`, 3, 6, 0, 0},
	{"dense union", arrow.Field{Name: "c", Type: arrow.DenseUnionOf([]arrow.Field{{Name: "i", Type: int32s(), Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, []arrow.UnionTypeCode{0, 1})}, `[[0,1],[1,"x"]]`, 3, 7, 0, 0},
	{"run-end encoded", arrow.Field{Name: "c", Type: arrow.RunEndEncodedOf(int32s(), arrow.BinaryTypes.String)}, `["a","a","b"]`, 3, 5, 0, 0},
	{"dictionary of utf8", arrow.Field{Name: "c", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true}, `[["a","b"],[0,null,1,0]]`, 1, 2, 1, 3},
	{"dictionary of lists", arrow.Field{Name: "c", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.ListOf(int32s())}}, `[[[1],null,[2,3]],[0,2,0,1]]`, 1, 2, 2, 4},
	{"unregistered extension", arrow.Field{Name: "c", Type: int32s(), Metadata: arrow.NewMetadata([]string{"ARROW:extension:name"}, []string{"pate.test.unknown"})}, `[1,2]`, 1, 2, 0, 0},
	{"extension over a struct", arrow.Field{Name: "c", Type: newPairType(), Nullable: true}, `[{"k":1,"v":"x"},{"k":2,"v":null}]`, 3, 6, 0, 0},
}

// layoutRecord builds a record of one column of field f from json.
func layoutRecord(t testing.TB, mem memory.Allocator, f arrow.Field, js string) arrow.Record {
	t.Helper()
	dt := f.Type
	if d, ok := dt.(*arrow.DictionaryType); ok {
		// json: [values, indices]
		var parts [2]json.RawMessage
		if err := json.Unmarshal([]byte(js), &parts); err != nil {
			t.Fatal(err)
		}
		vals, _, err := array.FromJSON(mem, d.ValueType, bytes.NewReader(parts[0]))
		if err != nil {
			t.Fatal(err)
		}
		defer vals.Release()
		idx, _, err := array.FromJSON(mem, d.IndexType, bytes.NewReader(parts[1]))
		if err != nil {
			t.Fatal(err)
		}
		defer idx.Release()
		a := array.NewDictionaryArray(d, idx, vals)
		defer a.Release()
		return array.NewRecord(arrow.NewSchema([]arrow.Field{f}, nil), []arrow.Array{a}, int64(a.Len()))
	}
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	a, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
	if err != nil {
		t.Fatalf("building %v: %v", f.Type, err)
	}
	defer a.Release()
	if ext, ok := f.Type.(arrow.ExtensionType); ok {
		e := array.NewExtensionArrayWithStorage(ext, a)
		defer e.Release()
		a = e
	}
	return array.NewRecord(arrow.NewSchema([]arrow.Field{f}, nil), []arrow.Array{a}, int64(a.Len()))
}

// encode writes a record of one column of field f (from js) as an IPC
// stream, or as an IPC file. (Its own allocator: Arrow v15's FileWriter
// keeps a reference to a dictionary past Close.)
func encode(t testing.TB, f arrow.Field, js string, file bool) []byte {
	t.Helper()
	rec := layoutRecord(t, memory.NewGoAllocator(), f, js)
	defer rec.Release()
	opts := []ipc.Option{ipc.WithSchema(rec.Schema()), ipc.WithAllocator(memory.NewGoAllocator())}
	var (
		buf bytes.Buffer
		w   interface {
			Write(arrow.Record) error
			Close() error
		}
		p = filepath.Join(t.TempDir(), "w.arrow")
	)
	if file {
		out, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if w, err = ipc.NewFileWriter(out, opts...); err != nil {
			t.Fatal(err)
		}
	} else {
		w = ipc.NewWriter(&buf, opts...)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !file {
		return buf.Bytes()
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ipcMsg is one message of an encoded stream or file: its metadata, a
// slice of the encoding (so edits to it edit the encoding), and where it
// starts, prefix included.
type ipcMsg struct {
	start, end int // [start, end): prefix, metadata and body
	meta       []byte
	info       msgInfo
}

// messages lists the messages of an IPC stream, or of an IPC file's
// stream part (from 8: after the magic and its padding).
func messages(t *testing.T, b []byte, file bool) []ipcMsg {
	t.Helper()
	p := 0
	if file {
		p = 8
	}
	var out []ipcMsg
	for p+8 <= len(b) && binary.LittleEndian.Uint32(b[p:]) == 0xFFFFFFFF {
		n := int(binary.LittleEndian.Uint32(b[p+4:]))
		if n == 0 {
			break
		}
		meta := b[p+8 : p+8+n]
		info, err := checkMessage(meta)
		if err != nil {
			t.Fatalf("message at %d: %v", p, err)
		}
		end := p + 8 + n + int(info.bodyLen)
		out = append(out, ipcMsg{start: p, end: end, meta: meta, info: info})
		p = end
	}
	return out
}

// batchTable returns the RecordBatch table of a record or dictionary
// batch's metadata.
func batchTable(t *testing.T, meta []byte) fbTable {
	t.Helper()
	m, err := fbRoot(meta)
	if err != nil {
		t.Fatal(err)
	}
	kind, _ := m.u8(1)
	h, ok, err := m.sub(2)
	if err != nil || !ok {
		t.Fatalf("no header: %v", err)
	}
	if kind == 2 {
		if h, ok, err = h.sub(1); err != nil || !ok {
			t.Fatalf("no dictionary data: %v", err)
		}
	}
	return h
}

// An edit changes a batch's metadata in place; it reports false when it
// does not apply to the batch (a vector already empty or absent).
type edit func(t *testing.T, meta []byte) bool

// shorten decrements the length of vector field i of the batch.
func shorten(i int) edit {
	return func(t *testing.T, meta []byte) bool {
		rb := batchTable(t, meta)
		q, err := rb.ref(i)
		if err != nil {
			t.Fatal(err)
		}
		if q < 0 || u32(meta, q) == 0 {
			return false
		}
		binary.LittleEndian.PutUint32(meta[q:], uint32(u32(meta, q)-1))
		return true
	}
}

// moreVariadic adds one to the batch's first variadic buffer count.
func moreVariadic(t *testing.T, meta []byte) bool {
	start, n, err := batchTable(t, meta).vector(4, 8)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return false
	}
	binary.LittleEndian.PutUint64(meta[start:], binary.LittleEndian.Uint64(meta[start:])+1)
	return true
}

var edits = []struct {
	name string
	edit edit
}{
	{"nodes vector one short", shorten(1)},
	{"buffers vector one short", shorten(2)},
	{"variadic counts one short", shorten(4)},
	{"variadic count one more", moreVariadic},
}

// readStream reads an IPC stream through CheckedMessageReader and Arrow's
// reader; each record it holds must equal want.
func readStream(mem memory.Allocator, b []byte, want arrow.Record) error {
	mr := NewCheckedMessageReader(bytes.NewReader(b), 1<<20)
	rd, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(mem))
	if err != nil {
		mr.Release()
		return err
	}
	defer rd.Release()
	for n := 0; ; n++ {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			if n != 1 {
				return fmt.Errorf("%d records, want 1", n)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if !array.RecordEqual(rec, want) {
			return fmt.Errorf("read %v, want %v", rec, want)
		}
	}
}

// bytesFile is b as an open file (CheckIPCFile takes one), closed at the
// end of the test.
func bytesFile(t *testing.T, b []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.arrow")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// readFile checks an IPC file with CheckIPCFile and, if it passes, reads
// its records with Arrow's file reader; each must equal want. (A panic of
// Arrow's, which the check is there to prevent, is returned as an error.)
func readFile(t *testing.T, mem memory.Allocator, b []byte, want arrow.Record) (err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("arrow panicked: %v", p)
		}
	}()
	f := bytesFile(t, b)
	blocks, err := CheckIPCFile(f, int64(len(b)), 1<<20)
	if err != nil {
		return err
	}
	// Arrow v15's FileReader never releases the dictionaries it reads
	// with the schema: the scope frees them once the reader is closed.
	scope := NewScope(mem)
	defer scope.Rollback()
	fr, err := ipc.NewFileReader(f, ipc.WithAllocator(scope))
	if err != nil {
		return err
	}
	defer fr.Close()
	if len(blocks) != 1 {
		return fmt.Errorf("%d record batches, want 1", len(blocks))
	}
	rec, err := fr.RecordAt(0)
	if err != nil {
		return err
	}
	defer rec.Release()
	if !array.RecordEqual(rec, want) {
		return fmt.Errorf("read %v, want %v", rec, want)
	}
	return nil
}

func read(t *testing.T, mem memory.Allocator, b []byte, file bool, want arrow.Record) error {
	if file {
		return readFile(t, mem, b, want)
	}
	return readStream(mem, b, want)
}

func pathName(file bool) string {
	if file {
		return "file"
	}
	return "stream"
}

// TestBatchLayout writes a batch of each layout family with Arrow's own
// writer and checks that the counts it has are the ones schemaLayout
// computes, that it reads back unchanged, and that the same batch with a
// vector one entry short is refused by the layout check before Arrow
// loads it, on the stream path and the file path.
func TestBatchLayout(t *testing.T) {
	arrow.RegisterExtensionType(newPairType())
	defer arrow.UnregisterExtensionType("pate.test.pair")
	for _, tc := range layoutCases {
		for _, file := range []bool{false, true} {
			t.Run(tc.name+"/"+pathName(file), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rec := layoutRecord(t, mem, tc.field, tc.json)
				defer rec.Release()
				enc := encode(t, tc.field, tc.json, file)

				msgs := messages(t, enc, file)
				if len(msgs) == 0 || msgs[0].info.layout == nil {
					t.Fatal("no schema message")
				}
				layout := msgs[0].info.layout
				kinds := map[int][]ipcMsg{}
				for _, m := range msgs[1:] {
					kinds[m.info.kind] = append(kinds[m.info.kind], m)
				}
				if len(kinds[3]) != 1 {
					t.Fatalf("%d record batches, want 1", len(kinds[3]))
				}
				rb := kinds[3][0].info
				if rb.nodes != tc.nodes || len(rb.buffers) != tc.buffers {
					t.Errorf("the writer wrote %d nodes, %d buffers; want %d, %d", rb.nodes, len(rb.buffers), tc.nodes, tc.buffers)
				}
				got := layout.batch
				if len(rb.variadic) < got.views {
					t.Fatalf("%d variadic counts for %d view arrays", len(rb.variadic), got.views)
				}
				buffers := got.buffers
				for _, n := range rb.variadic[:got.views] {
					buffers += int(n)
				}
				if got.nodes != tc.nodes || buffers != tc.buffers || got.preV5 != 0 && !strings.Contains(tc.name, "union") && !strings.Contains(tc.name, "run-end") {
					t.Errorf("schemaLayout: %+v, %d buffers with the batch's variadic counts; want %d nodes, %d buffers", got, buffers, tc.nodes, tc.buffers)
				}
				targets := map[string]ipcMsg{"record batch": kinds[3][0]}
				if tc.dictNodes > 0 {
					if len(kinds[2]) != 1 {
						t.Fatalf("%d dictionary batches, want 1", len(kinds[2]))
					}
					db := kinds[2][0].info
					if need := layout.dicts[db.dictID]; need.nodes != tc.dictNodes || need.buffers != tc.dictBuffers {
						t.Errorf("schemaLayout of the dictionary: %d nodes, %d buffers; want %d, %d", need.nodes, need.buffers, tc.dictNodes, tc.dictBuffers)
					}
					if db.nodes != tc.dictNodes || len(db.buffers) != tc.dictBuffers {
						t.Errorf("the writer wrote a dictionary of %d nodes, %d buffers; want %d, %d", db.nodes, len(db.buffers), tc.dictNodes, tc.dictBuffers)
					}
					targets["dictionary batch"] = kinds[2][0]
				}

				if err := read(t, mem, enc, file, rec); err != nil {
					t.Fatalf("valid batch: %v", err)
				}

				for target, m := range targets {
					applied := 0
					for _, e := range edits {
						b := bytes.Clone(enc)
						if !e.edit(t, b[m.start+8:m.start+8+len(m.meta)]) {
							continue
						}
						applied++
						if err := read(t, mem, b, file, rec); !errors.Is(err, errLayout) {
							t.Errorf("%s, %s: got %v, want the layout check's refusal", target, e.name, err)
						}
					}
					if applied == 0 {
						t.Errorf("%s: no edit applies", target)
					}
				}
			})
		}
	}
}

// TestBatchLayoutPreV5 checks the validity slot Arrow's loader gives
// unions and run-end encoded arrays in messages older than metadata V5:
// the batch Arrow's writer writes (V5) no longer has the buffers its
// loader would index once its message says V4.
func TestBatchLayoutPreV5(t *testing.T) {
	for _, tc := range []struct {
		name    string
		field   arrow.Field
		json    string
		refused bool
	}{
		{"int64", arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, `[1,null]`, false},
		{"list", arrow.Field{Name: "c", Type: arrow.ListOf(int32s())}, `[[1],[]]`, false},
		{"sparse union", layoutCase(t, "sparse union").field, layoutCase(t, "sparse union").json, true},
		{"dense union", layoutCase(t, "dense union").field, layoutCase(t, "dense union").json, true},
		{"run-end encoded", layoutCase(t, "run-end encoded").field, layoutCase(t, "run-end encoded").json, true},
	} {
		for _, file := range []bool{false, true} {
			t.Run(tc.name+"/"+pathName(file), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rec := layoutRecord(t, mem, tc.field, tc.json)
				defer rec.Release()
				enc := encode(t, tc.field, tc.json, file)
				for _, m := range messages(t, enc, file) {
					if m.info.kind != 3 {
						continue
					}
					root, _ := fbRoot(m.meta)
					p, err := root.field(0, 2)
					if err != nil || p < 0 {
						t.Fatalf("no version field: %v", err)
					}
					binary.LittleEndian.PutUint16(m.meta[p:], 3) // MetadataVersion.V4
				}
				err := read(t, mem, enc, file, rec)
				if tc.refused && !errors.Is(err, errLayout) {
					t.Errorf("got %v, want the layout check's refusal", err)
				}
				if !tc.refused && err != nil {
					t.Errorf("refused: %v", err)
				}
			})
		}
	}
}

// TestDictionaryPlacement checks that no message Arrow would read as a
// dictionary batch is anything else: Arrow's stream reader reads the
// first messages after the schema, and its file reader the footer's
// dictionary blocks, as dictionary batches whatever their type, and a
// record batch read as one has its vectors taken for tables.
func TestDictionaryPlacement(t *testing.T) {
	dictCase := layoutCase(t, "dictionary of utf8")
	for _, tc := range []struct {
		name string
		file bool
		edit func(t *testing.T, b []byte, dict, batch ipcMsg) []byte
	}{
		{"stream without its dictionary batch", false, func(t *testing.T, b []byte, dict, _ ipcMsg) []byte {
			return append(bytes.Clone(b[:dict.start]), b[dict.end:]...)
		}},
		{"file: dictionary block holding the record batch", true, func(t *testing.T, b []byte, dict, batch ipcMsg) []byte {
			b = bytes.Clone(b)
			flen := int(binary.LittleEndian.Uint32(b[len(b)-10:]))
			footer := b[len(b)-10-flen : len(b)-10]
			root, err := fbRoot(footer)
			if err != nil {
				t.Fatal(err)
			}
			dicts, nd, err := root.vector(2, 24)
			if err != nil || nd != 1 {
				t.Fatalf("%d dictionary blocks (%v), want 1", nd, err)
			}
			recs, nr, err := root.vector(3, 24)
			if err != nil || nr != 1 {
				t.Fatalf("%d record batch blocks (%v), want 1", nr, err)
			}
			copy(footer[dicts:dicts+24], footer[recs:recs+24])
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := layoutRecord(t, mem, dictCase.field, dictCase.json)
			defer rec.Release()
			enc := encode(t, dictCase.field, dictCase.json, tc.file)
			var dict, batch ipcMsg
			for _, m := range messages(t, enc, tc.file) {
				switch m.info.kind {
				case 2:
					dict = m
				case 3:
					batch = m
				}
			}
			if err := read(t, mem, tc.edit(t, enc, dict, batch), tc.file, rec); !errors.Is(err, errFB) {
				t.Errorf("got %v, want the format error", err)
			}
		})
	}
}

// layoutCase returns the layoutCases entry of that name.
func layoutCase(t *testing.T, name string) struct {
	field arrow.Field
	json  string
} {
	t.Helper()
	for _, tc := range layoutCases {
		if tc.name == name {
			return struct {
				field arrow.Field
				json  string
			}{tc.field, tc.json}
		}
	}
	t.Fatalf("no layout case %q", name)
	panic("unreachable")
}

// TestLayoutCheck checks what check refuses besides short vectors.
func TestLayoutCheck(t *testing.T) {
	l := &ipcLayout{
		batch: layoutNeed{nodes: 2, buffers: 3, preV5: 1, views: 1},
		dicts: map[int64]layoutNeed{7: {nodes: 1, buffers: 3, preV5: 1}},
	}
	bufs := func(n int) [][2]int64 { return make([][2]int64, n) }
	for _, tc := range []struct {
		name string
		info msgInfo
		err  error
	}{
		{"record batch", msgInfo{kind: 3, version: metadataV5, nodes: 2, buffers: bufs(4), variadic: []int64{1}}, nil},
		{"longer vectors", msgInfo{kind: 3, version: metadataV5, nodes: 5, buffers: bufs(9), variadic: []int64{1, 4}}, nil},
		{"no variadic counts: Arrow reads each as 0", msgInfo{kind: 3, version: metadataV5, nodes: 2, buffers: bufs(3)}, nil},
		{"empty variadic counts", msgInfo{kind: 3, version: metadataV5, nodes: 2, buffers: bufs(9), variadic: []int64{}}, errLayout},
		{"negative variadic count", msgInfo{kind: 3, version: metadataV5, nodes: 2, buffers: bufs(9), variadic: []int64{-1}}, errLayout},
		{"huge variadic count", msgInfo{kind: 3, version: metadataV5, nodes: 2, buffers: bufs(9), variadic: []int64{1 << 62}}, errLayout},
		{"pre-V5 record batch", msgInfo{kind: 3, version: 3, nodes: 2, buffers: bufs(4), variadic: []int64{1}}, errLayout},
		{"pre-V5 record batch with the validity slot", msgInfo{kind: 3, version: 3, nodes: 2, buffers: bufs(5), variadic: []int64{1}}, nil},
		{"negative version", msgInfo{kind: 3, version: -1, nodes: 2, buffers: bufs(4), variadic: []int64{1}}, errLayout},
		{"dictionary batch: pre-V5 rules whatever its version", msgInfo{kind: 2, version: metadataV5, dictID: 7, nodes: 1, buffers: bufs(3)}, errLayout},
		{"dictionary batch", msgInfo{kind: 2, version: metadataV5, dictID: 7, nodes: 1, buffers: bufs(4)}, nil},
		{"dictionary batch of an id no field has", msgInfo{kind: 2, dictID: 8, nodes: 1, buffers: bufs(4)}, errFB},
		{"schema where a batch is due", msgInfo{kind: 1}, errFB},
		{"tensor", msgInfo{kind: 4}, errFB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := l.check(tc.info)
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("got %v, want %v", err, tc.err)
			}
		})
	}
}

// TestShortBufferVectorFile checks the 1,348-byte file FuzzReadIPCFile
// found (io/arrowio's corpus, 26d2c89c02376960): its record batch has
// fewer field nodes and buffers than its schema needs, and Arrow v15 read a
// buffer length of 2⁴⁷ from the bytes after the vector. The layout check
// refuses it before Arrow's reader is opened.
func TestShortBufferVectorFile(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "short_buffer_vector.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckIPCFile(f, st.Size(), 1<<20); !errors.Is(err, errLayout) {
		t.Errorf("got %v, want the layout check's refusal", err)
	}
}

// fuzzLayoutSeeds adds a batch of each layout family, whole and truncated.
func fuzzLayoutSeeds(f *testing.F, file bool) {
	for _, tc := range layoutCases {
		b := encode(f, tc.field, tc.json, file)
		f.Add(b)
		f.Add(b[:len(b)*2/3])
	}
}

// scopeLimitMsg is in what a Scope panics with past its limit.
const scopeLimitMsg = "a sound batch of this input needs"

// fuzzLayout reads b through the checks and Arrow's reader, with a Scope
// that frees what Arrow leaks on a failed batch. It fails if the Scope's
// allocation limit had to stop Arrow: the checks are meant to refuse
// such a batch before Arrow loads it.
func fuzzLayout(t *testing.T, b []byte, file bool) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	scope := NewScope(mem)
	defer scope.Rollback()
	scope.SetLimit(int64(len(b)) + 1<<20)
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		if file {
			f := bytesFile(t, b)
			blocks, err := CheckIPCFile(f, int64(len(b)), 1<<20)
			if err != nil {
				return err
			}
			fr, err := ipc.NewFileReader(f, ipc.WithAllocator(scope))
			if err != nil {
				return err
			}
			defer fr.Close()
			for i := range blocks {
				rec, err := fr.RecordAt(i)
				if err != nil {
					return err
				}
				rec.Release()
			}
			return nil
		}
		mr := NewCheckedMessageReader(bytes.NewReader(b), 1<<20)
		mr.Bound = scope
		rd, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(scope))
		if err != nil {
			mr.Release()
			return err
		}
		defer rd.Release()
		for {
			if _, err := rd.Read(); err != nil {
				return err
			}
		}
	}()
	if err != nil && strings.Contains(err.Error(), scopeLimitMsg) {
		t.Fatalf("only the Scope's limit stopped Arrow: %v", err)
	}
}

// FuzzLayoutStream reads mutated IPC streams of every layout family.
func FuzzLayoutStream(f *testing.F) {
	fuzzLayoutSeeds(f, false)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzLayout(t, b, false) })
}

// FuzzLayoutFile reads mutated IPC files of every layout family.
func FuzzLayoutFile(f *testing.F) {
	fuzzLayoutSeeds(f, true)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzLayout(t, b, true) })
}
