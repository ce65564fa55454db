// Package shardlabel labels sharded public data with a saved pate labeler
// on Apache Beam: it matches the shards (a glob or a folder, on any Beam
// file system), applies the labeler to each shard in a DoFn with pate's own
// readers and writers (package label/predict), writes one labelled Arrow
// IPC file per input shard and a manifest that lists, for each shard, its
// rows, its output and the labeler's hash.
//
// Only post-processing runs here: the labeler was made once, centrally, by
// pate label --save-labeler, whose run the ledger charged; the workers read
// no sensitive data and spend nothing. Every output carries the saving
// run's report and the labeler's hash in its metadata.
//
// It is its own Go module (nested in pate's, with a replace directive) so
// that the Beam SDK, its gRPC and cloud dependencies weigh neither on the
// pate binary nor on the root module's go test ./....
package shardlabel
