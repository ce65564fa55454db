// Package label provides pate's private labelling engine: it partitions the
// sensitive rows into disjoint teachers, trains them, streams public record
// batches through the ensemble, aggregates each row's vote histogram with a
// noisy mechanism (LNMax, GNMax, Confident-GNMax, and the pure ε-DP svt,
// stable-em and private-learner), charges a privacy budget filter with what
// actually happened, and writes the labelled batches and a report.
//
// The package consumes and produces Arrow record batches through the small
// RecordReader and RecordWriter interfaces (in the manner of arrio); it knows
// nothing of files. The privacy invariants it keeps are listed in the
// project's DESIGN.md: one privacy unit changes at most one teacher; nothing
// fitted on the sensitive data is shared between teachers; each teacher casts
// one vote per query; only mechanism outputs leave the package; noise is exact
// integer noise (package noise) and accounting is a zCDP filter fixed before
// the run (package rdp).
//
// Each mechanism is one file implementing the Mechanism interface
// (interfaces.go): what its events charge, how it plans its parameters from
// a budget, and how it answers a query. A new mechanism is a new such file
// and one entry in the registry in interfaces.go; the engine (run.go, the
// stream's stages; teachers.go, the teachers) asks a mechanism what it can
// do and never looks at its name.
package label
