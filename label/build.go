package label

import (
	"runtime"

	"github.com/pate-tool/pate/learners/kernel"
)

// Build describes this binary and CPU as a report states them: the Go
// version, whether cgo was on and the vote kernel in use.
func Build() *BuildReport {
	b := kernel.Build()
	return &BuildReport{GoVersion: runtime.Version(), CGO: b.CGO, VoteKernel: b.Kernel}
}
