package arrowfix

import (
	"fmt"
)

// This file checks a record batch's field nodes, buffers and variadic
// buffer counts against its schema before Arrow Go loads the batch.
// Arrow v15's loader (ipc/file_reader.go: ipcSource.buffer, fieldMetadata
// and variadicCount, over the generated RecordBatch.Buffers, Nodes and
// VariadicBufferCounts) takes the i-th element of each vector without
// comparing i with the vector's length, so a batch whose vectors are
// shorter than its schema's layout makes it read "buffers" from the bytes
// after the vector: a 1,348-byte file had it allocate 2⁴⁷ bytes, a fatal
// out-of-memory (found by FuzzReadIPCFile). The counts below follow that
// loader (loadArray and the load* methods it calls), type by type:
//
//	type                                      nodes  buffers
//	null                                      1      0
//	bool, int, float, decimal, date, time,    1      2 (validity, values)
//	  timestamp, interval, duration,
//	  fixed-size binary
//	binary, utf8, large binary, large utf8    1      3 (validity, offsets, data)
//	binary view, utf8 view                    1      2 (validity, views) + the
//	                                                   batch's next variadic count
//	list, large list, map                     1      2 (validity, offsets) + child
//	list view, large list view                1      3 (validity, offsets, sizes) + child
//	fixed-size list, struct                   1      1 (validity) + children
//	sparse union                              1      1 (type ids) + children
//	dense union                               1      2 (type ids, offsets) + children
//	run-end encoded                           1      0 + run ends and values
//	dictionary-encoded field                  1      2 (its index type's)
//	extension                                 its storage type's
//
// A union or run-end encoded array takes one buffer more, a validity
// bitmap, in a batch whose message predates metadata V5, and in every
// dictionary batch (Arrow's readDictionary leaves the loader's version at
// its zero value, V1). A field's children count only under the nested
// types; Arrow also converts, and ignores, the children of other types,
// but gives their dictionary-encoded descendants dictionary ids, so those
// are walked too. Arrow skips an index without reading it where a
// validity bitmap is dropped (no nulls) or an array is empty; the check
// still wants the slot, which every writer emits (the format has one
// Buffer per layout buffer). Vectors longer than the layout are let be,
// as Arrow ignores the surplus.
//
// Upstream fix that retires this file: Arrow Go's loader checking each
// node, buffer and variadic-count index against the length of its vector
// (as Arrow C++'s ArrayLoader does, "Buffer index out of bounds"), and its
// readers taking a dictionary block only if it holds a dictionary batch.

// Arrow's flatbuffer Type enum (arrow/internal/flatbuf/Type.go).
const (
	fbNull            = 1
	fbInt             = 2
	fbFloatingPoint   = 3
	fbBinary          = 4
	fbUtf8            = 5
	fbBool            = 6
	fbDecimal         = 7
	fbDate            = 8
	fbTime            = 9
	fbTimestamp       = 10
	fbInterval        = 11
	fbList            = 12
	fbStruct          = 13
	fbUnion           = 14
	fbFixedSizeBinary = 15
	fbFixedSizeList   = 16
	fbMap             = 17
	fbDuration        = 18
	fbLargeBinary     = 19
	fbLargeUtf8       = 20
	fbLargeList       = 21
	fbRunEndEncoded   = 22
	fbBinaryView      = 23
	fbUtf8View        = 24
	fbListView        = 25
	fbLargeListView   = 26
)

// errLayout is the error of a batch with fewer nodes, buffers or variadic
// buffer counts than its schema's layout needs.
var errLayout = fmt.Errorf("%w: batch short of its schema's layout", errFB)

// metadataV5 is MetadataVersion.V5: from it on, unions and run-end encoded
// arrays have no validity bitmap.
const metadataV5 = 4

// layoutNeed is what loading one array, or a batch of them, takes from a
// record batch's vectors.
type layoutNeed struct {
	nodes   int // field nodes
	buffers int // buffers, under metadata V5 and later
	preV5   int // buffers more before V5: unions' and run-end encoded arrays' validity
	views   int // binary and utf8 view arrays, each with a variadic buffer count
}

func (n *layoutNeed) add(o layoutNeed) {
	n.nodes += o.nodes
	n.buffers += o.buffers
	n.preV5 += o.preV5
	n.views += o.views
}

// ipcLayout is what a schema's batches need: a record batch's, and each
// dictionary id's dictionary batches'.
type ipcLayout struct {
	batch layoutNeed
	dicts map[int64]layoutNeed
}

// numDicts is how many dictionaries Arrow's stream reader reads before the
// first record batch (dictutils.Mapper.NumDicts: the distinct ids).
func (l *ipcLayout) numDicts() int { return len(l.dicts) }

// schemaLayout computes the layout of the batches of schema s, whose
// tables fbChecker.schema has checked.
func schemaLayout(s fbTable) (*ipcLayout, error) {
	w := layoutWalk{c: fbChecker{budget: 1 << 20}, dicts: make(map[int64]layoutNeed)}
	l := &ipcLayout{dicts: w.dicts}
	err := s.tables(1, func(f fbTable) error {
		n, err := w.field(f, 0)
		l.batch.add(n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

type layoutWalk struct {
	c     fbChecker
	dicts map[int64]layoutNeed
}

// field returns what field f takes from a batch that holds it: its index
// type's layout if it is dictionary-encoded, its type's otherwise. The
// type's layout of a dictionary-encoded field is recorded under its id.
func (w *layoutWalk) field(f fbTable, depth int) (layoutNeed, error) {
	if err := w.c.spend(); err != nil {
		return layoutNeed{}, err
	}
	if depth > 64 {
		return layoutNeed{}, fmt.Errorf("%w: fields nested too deep", errFB)
	}
	var kids layoutNeed
	if err := f.tables(5, func(c fbTable) error {
		n, err := w.field(c, depth+1)
		kids.add(n)
		return err
	}); err != nil {
		return layoutNeed{}, err
	}
	typ, err := f.u8(2)
	if err != nil {
		return layoutNeed{}, err
	}
	own := layoutNeed{nodes: 1}
	switch typ {
	case fbNull:
	case fbInt, fbFloatingPoint, fbBool, fbDecimal, fbDate, fbTime, fbTimestamp,
		fbInterval, fbDuration, fbFixedSizeBinary:
		own.buffers = 2
	case fbBinary, fbUtf8, fbLargeBinary, fbLargeUtf8:
		own.buffers = 3
	case fbBinaryView, fbUtf8View:
		own.buffers, own.views = 2, 1
	case fbList, fbLargeList, fbMap:
		own.buffers = 2
		own.add(kids)
	case fbListView, fbLargeListView:
		own.buffers = 3
		own.add(kids)
	case fbFixedSizeList, fbStruct:
		own.buffers = 1
		own.add(kids)
	case fbUnion:
		// Arrow reads any mode but Dense (1) as Sparse.
		mode := 0
		if tt, ok, err := f.sub(3); err != nil {
			return layoutNeed{}, err
		} else if ok {
			if mode, err = tt.i16(0); err != nil {
				return layoutNeed{}, err
			}
		}
		own.buffers, own.preV5 = 1, 1
		if mode == 1 {
			own.buffers = 2
		}
		own.add(kids)
	case fbRunEndEncoded:
		own.preV5 = 1
		own.add(kids)
	default: // Arrow refuses NONE and panics on types it does not know
		return layoutNeed{}, fmt.Errorf("%w: field of unknown type %d", errFB, typ)
	}
	d, ok, err := f.sub(4)
	if err != nil || !ok {
		return own, err
	}
	id, err := d.i64(0)
	if err != nil {
		return layoutNeed{}, err
	}
	// Arrow refuses an id shared by fields of unequal value types, and
	// equal types have equal layouts.
	if prev, dup := w.dicts[id]; dup && prev != own {
		return layoutNeed{}, fmt.Errorf("%w: dictionary id %d given to fields of different layouts", errFB, id)
	}
	w.dicts[id] = own
	return layoutNeed{nodes: 1, buffers: 2}, nil // the indices: an integer array
}

// check refuses a record or dictionary batch (info) whose vectors are
// shorter than what Arrow's loader will index.
func (l *ipcLayout) check(info msgInfo) error {
	var (
		need  layoutNeed
		preV5 bool
		what  string
	)
	switch info.kind {
	case 3:
		need, preV5, what = l.batch, info.version < metadataV5, "record batch"
	case 2:
		var ok bool
		if need, ok = l.dicts[info.dictID]; !ok {
			return fmt.Errorf("%w: dictionary batch of id %d, which no field has", errFB, info.dictID)
		}
		preV5, what = true, "dictionary batch"
	default:
		return fmt.Errorf("%w: message of type %d where a record or dictionary batch is due", errFB, info.kind)
	}
	if info.nodes < need.nodes {
		return fmt.Errorf("%w: %s has %d field nodes, its schema needs %d", errLayout, what, info.nodes, need.nodes)
	}
	want := int64(need.buffers)
	if preV5 {
		want += int64(need.preV5)
	}
	if need.views > 0 && info.variadic != nil {
		if len(info.variadic) < need.views {
			return fmt.Errorf("%w: %s has %d variadic buffer counts, its schema needs %d", errLayout, what, len(info.variadic), need.views)
		}
		for k, n := range info.variadic[:need.views] {
			if n < 0 || n > int64(len(info.buffers)) {
				return fmt.Errorf("%w: %s has a variadic buffer count of %d (view array %d)", errLayout, what, n, k)
			}
			want += n
		}
	}
	if int64(len(info.buffers)) < want {
		return fmt.Errorf("%w: %s has %d buffers, its schema needs %d", errLayout, what, len(info.buffers), want)
	}
	return nil
}
