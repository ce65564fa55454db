//go:build !cgo

package kernel

// cgoEnabled says whether the binary was built with cgo.
const cgoEnabled = false
