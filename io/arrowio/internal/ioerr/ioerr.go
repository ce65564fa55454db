// Package ioerr holds the sentinel errors that io/arrowio returns and that
// its internal packages wrap, so that errors.Is works across them: arrowio
// re-exports each under the same name.
package ioerr

import "errors"

var (
	// ErrFormat reports input whose format is unknown or whose bytes are
	// corrupt (including panics recovered from the Arrow and Parquet
	// decoders).
	ErrFormat = errors.New("unknown or corrupt format")
	// ErrNoColumn reports a projected column that the input does not have.
	ErrNoColumn = errors.New("no such column")
)
