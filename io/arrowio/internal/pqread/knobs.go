package pqread

// Settings and counters of the fast path for the tests of io/arrowio,
// which read through arrowio.Open and cannot reach this package's
// variables. The thresholds a reader takes from its Tuning are set through
// arrowio's ReadOptions instead; these are what is still package-wide.
// SetMaxFreeLeftForTests and SetPoisonRecycledForTests return the function
// that restores the setting: a test that calls one must not run in
// parallel with another reader.

// SetMaxFreeLeftForTests sets the decoded overhang of a page that cannot
// be streamed kept in memory; 0 sends every byte-stream-split page to be
// read by ranges.
func SetMaxFreeLeftForTests(n int64) (restore func()) {
	old := maxFreeLeft
	maxFreeLeft = n
	return func() { maxFreeLeft = old }
}

// SetPoisonRecycledForTests makes the recycler fill the buffers it hands
// out again with garbage, so that a reader relying on zeroed memory fails.
func SetPoisonRecycledForTests(on bool) (restore func()) {
	old := poisonRecycled
	poisonRecycled = on
	return func() { poisonRecycled = old }
}

// PlainColumnsForTests counts the columns the fast path for flat PLAIN
// columns decoded.
func PlainColumnsForTests() int64 { return plainColumns.Load() }

// RecycledBuffersForTests counts the buffers the recyclers handed out
// again.
func RecycledBuffersForTests() int64 { return recycledBuffers.Load() }
