package pqread

import "sync/atomic"

// Stats counts what a reader did: which paths its columns and pages went
// down. Each reader has its own (Options.Stats, or one it makes), so that
// a test reading a file sees its reader's counts whatever else runs. The
// counters are atomic: a reader's workers add to them concurrently.
type Stats struct {
	// PlainColumns counts the column chunks the fast path decoded
	// (plain.go, list.go).
	PlainColumns atomic.Int64
	// RecycledBuffers counts the buffers the reader's recycler handed out
	// again (recycle.go).
	RecycledBuffers atomic.Int64
	// PageStreams counts the pages decoded as streams or read by ranges;
	// LiveStreams those open now, PeakStreams the most open at once
	// (pagestream.go).
	PageStreams, LiveStreams, PeakStreams atomic.Int64
	// ZstdPagesPlaced counts the zstd list pages decoded straight into
	// place, ListPagesInPlace the list pages decompressed into place
	// (list.go).
	ZstdPagesPlaced, ListPagesInPlace atomic.Int64
	// AheadPagesRead counts the list pages decompressed ahead of their
	// cursor (list_ahead.go).
	AheadPagesRead atomic.Int64
	// ListCursors counts the list chunks decoded a segment at a time,
	// ListSpans their pages that start inside a row (list_stream.go).
	ListCursors, ListSpans atomic.Int64
	// StreamedRowGroups counts the row groups streamed in segments,
	// HelpedColumns the columns a segment's worker decoded for an earlier
	// segment, StreamFallbacks the columns of streamed row groups left to
	// pqarrow (segments.go).
	StreamedRowGroups, HelpedColumns, StreamFallbacks atomic.Int64
	// SpilledPages counts the pages written to the spill file, OpenSpills
	// the spill files open now, PeakState the largest charge the budget
	// of the streamed columns' state has carried (spill.go).
	SpilledPages, OpenSpills, PeakState atomic.Int64
}

// notePeak raises peak to v if v is larger.
func notePeak(peak *atomic.Int64, v int64) {
	for {
		old := peak.Load()
		if v <= old || peak.CompareAndSwap(old, v) {
			return
		}
	}
}

// stat is the decoder's reader's statistics, or its own if it has no
// reader (a decoder of a test, or of a dictionary).
func (pd *plainDecoder) stat() *Stats {
	if pd.stats == nil {
		pd.stats = new(Stats)
	}
	return pd.stats
}
