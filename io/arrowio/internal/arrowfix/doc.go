// Package arrowfix holds pate's workarounds for Apache Arrow Go v15
// (github.com/apache/arrow/go/v15, a frozen line; development moved to
// github.com/apache/arrow-go), each in a file of its own that says which
// upstream change would make it unnecessary:
//
//   - fbcheck.go, ipccheck.go: Arrow IPC metadata is checked before Arrow Go
//     decodes it, because Arrow Go trusts the lengths it declares and runs
//     out of memory (fatally, past any recover) on hostile ones. Unnecessary
//     once Arrow Go verifies flatbuffer messages and bounds its allocations by
//     the bytes present, as Arrow C++ does since ARROW-5605, with its readers
//     run against a malformed-IPC fuzz corpus.
//   - layout.go: a record or dictionary batch's field nodes, buffers and
//     variadic buffer counts are checked against its schema's layout,
//     because Arrow Go's loader indexes those vectors unchecked and reads
//     the bytes after a short one as buffers (2⁴⁷ bytes allocated, fatally).
//     Unnecessary once the loader checks each index against its vector.
//   - scope.go: an allocator that frees the buffers Arrow Go's IPC decoder
//     leaks when it fails on a record batch. Unnecessary once the decoder
//     releases what it allocated on every error path.
//   - nulllists.go: DuckDB's null FLOAT[n] lists, which Arrow Go's Parquet
//     reader reads with later rows' values shifted, are repaired or refused.
//     Unnecessary once pqarrow gives an undefined list entry no child slot
//     (and DuckDB writes one level entry for a null list).
//   - lz4.go: the LZ4 and LZ4_RAW Parquet codecs, which Arrow v15 lacks,
//     are added to its codec table (go:linkname; nothing else in the table
//     is touched, and TestArrowCodecTable fails if the table changes shape).
//     Unnecessary with apache/arrow-go v18, which exports RegisterCodec.
//
// The checks of Parquet page headers that Arrow's page reader trusts
// (internal/pqread, pagecheck.go) are a workaround of the same kind that
// still lives beside the bounded Thrift reader it uses.
package arrowfix
