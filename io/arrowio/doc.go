// Package arrowio provides streaming Arrow record-batch readers for Parquet, Arrow
// IPC (file and stream) and CSV input, and atomic Arrow IPC writers.
//
// Readers hand out record batches of at most ReadOptions.BatchSize rows, so
// memory stays bounded by the batch size rather than the file size. The path
// "-" reads standard input; Parquet and Arrow IPC files on standard input are
// spooled to a temporary file first because they need random access.
//
// Arrow and Parquet decoders may panic on malformed input. Every call into
// them that touches untrusted bytes is guarded by a recover that turns the
// panic into an error wrapping ErrFormat, so no panic crosses this package's
// boundary.
//
// Writers write to a temporary file next to the target and rename it into
// place only in Commit, so a failed or aborted run leaves either no file or
// the previous one. Schema-metadata values that are only known at the end of
// a run (such as a JSON report) can be reserved at Create time and patched in
// place at Commit time; see WriteOptions.Reserve.
//
// The package knows Arrow and files, and nothing of privacy or learning. It
// lives in the io/ folder the project's layout fixes, under a name of its own
// so that nobody has to rename the standard library's io on import:
//
//	import "github.com/pate-tool/pate/io/arrowio"
package arrowio
