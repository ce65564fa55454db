package pqread

import "os"

// Tuning holds the reader's thresholds and switches. DefaultTuning is the
// one place their defaults are set; a reader takes its own from
// Options.Tuning, so that tests and benchmarks send files down one path or
// another per reader rather than through package variables.
type Tuning struct {
	// BufferSize is the read buffer of each column chunk stream
	// (ReaderProperties.BufferedStreamEnabled keeps memory bounded by it
	// instead of loading whole column chunks).
	BufferSize int64
	// Parallel decodes the columns of a batch in parallel goroutines
	// (pqarrow's ArrowReadProperties.Parallel), with one record reader over
	// the file. Off: a panic in those goroutines could not be recovered,
	// and on 2 cores it gains little (see BenchmarkReadParquet).
	Parallel bool
	// OneReader reads with one record reader over every row group in the
	// calling goroutine (the reference the tests compare the row-group
	// workers with).
	OneReader bool
	// PlainFast turns the fast path for flat fixed-width and list columns
	// on (plain.go); off, pqarrow decodes every column.
	PlainFast bool
	// SegmentRows is the number of rows of a segment of a streamed row
	// group (segments.go).
	SegmentRows int64
	// MaxColumnwiseRows and MaxColumnwiseBytes bound the row groups decoded
	// column by column: a whole row group is decoded at once, so its size
	// must be bounded whatever its footer says; a larger one is streamed
	// in segments.
	MaxColumnwiseRows, MaxColumnwiseBytes int64
	// GroupRowGroups lets a task decode several small row groups as one,
	// up to MaxGroupBytes of decoded values: a batch of the speed
	// benchmark's 64 float64 columns is 8 MB, and a table of thousands of
	// columns must not hold several times a row group's memory per task.
	GroupRowGroups bool
	MaxGroupBytes  int64
	// HelpSegments lets the worker of a segment decode the columns of the
	// earlier segments of its row group (see segmentColumns).
	HelpSegments bool
	// StreamBudget bounds the state a reader's streamed columns keep
	// between segments; past it their pages are spilled (spill.go).
	StreamBudget int64
	// SpillDir is where spill files are made when Options.TempDir is ""
	// ("": os.TempDir).
	SpillDir string
	// MaxListBytes bounds the decoded values of a list chunk the fast path
	// decodes whole (see list.go); ListWholeBytes bounds the chunk it reads
	// whole, a larger one being read a page at a time; ListWindowBytes
	// bounds the list values of the row groups decoded ahead (list.go);
	// ListStreamBytes is the decoded size of a list chunk from which a
	// streamed row group decodes it a segment at a time (list_stream.go).
	MaxListBytes, ListWholeBytes, ListWindowBytes, ListStreamBytes int64
	// LazyFooterMin is the footer length from which row groups are decoded
	// a window of FooterWindowBytes at a time (at least one row group;
	// footer.go).
	LazyFooterMin, FooterWindowBytes int
	// MaxNestedValues bounds the level entries of a nested column chunk
	// left to Arrow's reader (pagecheck.go).
	MaxNestedValues int64
	// HugePageBytes is the decoded size of a PLAIN page from which it is
	// decompressed as a stream (a gzip, zstd or LZ4_RAW page from 16
	// times that; pagestream.go); 0 streams every such page.
	HugePageBytes int32
	// DirectLiteral is the length from which the part of a streamed
	// snappy literal not yet buffered is read from the file straight
	// into place (pagestream.go).
	DirectLiteral int
	// MaxFreeLeft is the decoded overhang of a page that cannot be
	// streamed kept in memory between segments, past which it is spilled;
	// a BYTE_STREAM_SPLIT page larger than it is read by ranges
	// (spill.go, splitstream.go). 0 sends every such page to be read by
	// ranges, or spilled.
	MaxFreeLeft int64
	// SpillBlockRows is the rows a streamed page is spilled in at a time
	// (spill.go): 1 MB of doubles; against 256 KB writes, 6 alternating
	// runs of the 1M-row zstd file took about 0.05 CPU-s less.
	SpillBlockRows int64
	// SnappyFragment is the unit of output snappy's encoders compress
	// apart, 64 KB for every encoder known (splitstream.go); a page whose
	// copies or tags cross its fragments is decoded whole instead of by
	// ranges. Only tests set another value.
	SnappyFragment int64
	// MaxDecompressed bounds the uncompressed size a compressed Arrow IPC
	// buffer may claim (Arrow allocates it before decompressing), in IPC
	// input and in the Arrow schema of a Parquet footer.
	MaxDecompressed int64
	// PoisonRecycled makes the recyclers fill every buffer they keep with
	// a pattern and check, when they hand it out again, that nobody wrote
	// to it in between: a use after release shows as a panic, instead of
	// as garbage in a value read later (recycle.go). A debug switch: on by
	// default only with PATE_DEBUG_RECYCLE=poison in the environment (to
	// run other packages' tests, or the tool, that way).
	PoisonRecycled bool
	// OnDecode, when set (by a test), runs in the worker before it decodes
	// row group rg (to inject panics); OnSegment runs in the worker of
	// segment seg of streamed row group rg before it decodes its columns;
	// OnSpillRead may fail a read of the spill file (named name).
	OnDecode    func(rg int)
	OnSegment   func(rg, seg int)
	OnSpillRead func(name string) error
}

// DefaultTuning returns the reader's defaults.
func DefaultTuning() *Tuning {
	return &Tuning{
		BufferSize:         64 << 10,
		PlainFast:          true,
		SegmentRows:        64 << 10,
		MaxColumnwiseRows:  1 << 18,
		MaxColumnwiseBytes: 128 << 20,
		GroupRowGroups:     true,
		MaxGroupBytes:      32 << 20,
		HelpSegments:       true,
		StreamBudget:       24 << 20,
		MaxListBytes:       4 << 30,
		ListWholeBytes:     maxPlainKeep,
		ListWindowBytes:    256 << 20,
		ListStreamBytes:    256 << 20,
		LazyFooterMin:      1 << 20,
		FooterWindowBytes:  128 << 10,
		MaxNestedValues:    1 << 27,
		HugePageBytes:      256 << 10,
		DirectLiteral:      4 << 10,
		MaxFreeLeft:        2 << 20,
		SpillBlockRows:     128 << 10,
		SnappyFragment:     64 << 10,
		MaxDecompressed:    1 << 32,
		PoisonRecycled:     os.Getenv("PATE_DEBUG_RECYCLE") == "poison",
	}
}

// defaults is DefaultTuning, for the decoders made without a reader's
// tuning (a plainDecoder of a test, or of a dictionary).
var defaults = DefaultTuning()

// tuning is the decoder's tuning: its reader's, or the defaults.
func (pd *plainDecoder) tuning() *Tuning {
	if pd == nil || pd.tune == nil {
		return defaults
	}
	return pd.tune
}
