package pqread

// Test settings of the fast path for the tests of io/arrowio, which read
// through arrowio.Open and cannot reach this package's variables. Each sets
// package variables and returns the function that restores them: a test
// that calls one must not run in parallel with another reader.

// SetStreamedForTests sends every row group of more than columnwiseRows
// rows down the segment streams, cut into segments of segment rows, with
// list columns of more than listStream bytes read by cursors and
// byte-stream-split pages larger than freeLeft read by ranges; with
// footerWindow > 0 every footer is decoded a window of that many bytes at
// a time.
func SetStreamedForTests(columnwiseRows, segment, listStream, freeLeft int64, footerWindow int) (restore func()) {
	r, s, l, m := maxColumnwiseRows, segmentRows, listStreamBytes, maxFreeLeft
	fm, fw := lazyFooterMin, footerWindowBytes
	maxColumnwiseRows, segmentRows, listStreamBytes, maxFreeLeft = columnwiseRows, segment, listStream, freeLeft
	if footerWindow > 0 {
		lazyFooterMin, footerWindowBytes = 0, footerWindow
	}
	return func() {
		maxColumnwiseRows, segmentRows, listStreamBytes, maxFreeLeft = r, s, l, m
		lazyFooterMin, footerWindowBytes = fm, fw
	}
}

// SetMaxListBytesForTests bounds the values of a list column chunk the
// fast path decodes whole.
func SetMaxListBytesForTests(n int64) (restore func()) {
	old := maxListBytes
	maxListBytes = n
	return func() { maxListBytes = old }
}

// SetPoisonRecycledForTests makes the recycler fill the buffers it hands
// out again with garbage, so that a reader relying on zeroed memory fails.
func SetPoisonRecycledForTests(on bool) (restore func()) {
	old := poisonRecycled
	poisonRecycled = on
	return func() { poisonRecycled = old }
}

// PlainFastForTests says whether the fast path for flat PLAIN columns is
// on, and PlainColumnsForTests counts the columns it decoded.
func PlainFastForTests() bool { return parquetPlainFast }

// PlainColumnsForTests counts the columns the fast path for flat PLAIN
// columns decoded.
func PlainColumnsForTests() int64 { return plainColumns.Load() }

// RecycledBuffersForTests counts the buffers the recyclers handed out
// again.
func RecycledBuffersForTests() int64 { return recycledBuffers.Load() }
