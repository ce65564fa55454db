// Package learners provides the numeric side of pate: a dense float32
// Matrix, a feature Encoder that turns Arrow record batches into matrices,
// the teacher learners (multinomial logistic regression, Gaussian naive
// Bayes, CART decision tree, histogram gradient-boosted trees) and the
// k-nearest-neighbours student behind the Learner and Model interfaces, the
// Ensemble that counts the teachers' votes, and the decision stumps of the
// seed papers' private learners (Stump, StumpIndex: their learning half; the
// private choice among them is package label's).
//
// The package knows numbers and Arrow arrays, nothing of files or privacy
// mechanisms. It upholds privacy invariant 2 of the design: an Encoder is
// fitted on public data only, and a Learner fits each teacher on that
// teacher's rows alone, using nothing fitted on the rest of the sensitive
// data; the boosted trees split at Bins fitted on public data (PublicBins).
// The Ensemble gives each teacher exactly one vote per row (invariant 3).
// NeighborIndex is the exact nearest-neighbour search of the kNN model and
// the cells, for any caller with float32 rows: an inverted file of k-means
// lists with triangle-inequality bounds where that prunes, a blocked scan
// of every row otherwise, with the same results either way.
//
// DPLogReg is the learning half of differentially private logistic
// regression: it clips, scales and rounds the per-example gradients to
// integers with a known norm bound, and the caller injects the integer noise
// (label/noise's discrete Gaussian) and does the accounting (label/rdp).
//
// EncodeModel and DecodeModel store a fitted Model and restore it bit for
// bit (a saved labeler, package label/predict, holds one beside its
// Encoder, which is stored as JSON).
package learners
