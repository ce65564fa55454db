package pqread

import "os"

// exhaustive reports whether the corruption tests garble every byte (or
// every 13th) of their chunks rather than a sample: PATE_EXHAUSTIVE=1, as
// .ci/run sets it. go test ./... takes the sample, so that a newcomer's test
// command stays within two minutes; the fuzz targets garble at random.
func exhaustive() bool { return os.Getenv("PATE_EXHAUSTIVE") == "1" }
