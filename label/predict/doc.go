// Package predict saves and applies labelers: what labels public rows once
// a labelling run's private phase is over (the public feature encoding, a
// model trained on released labels or output by a mechanism, the class set
// and the run's published report), so that every public row can be
// labelled anywhere, on any number of machines, with no sensitive input and
// no budget spent: applying a labeler is post-processing.
//
// The file format is documented in file.go (Magic, FormatVersion); Read
// refuses a newer version, a corrupted or a truncated file. Run applies a
// labeler to a stream of record batches, labelling batches in parallel and
// writing them in order; pate predict and the Beam pipeline (the nested
// module label/beam) both use it.
package predict
