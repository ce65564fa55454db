package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole run to the file named by
// PATE_CPUPROFILE, when it is set: the benchmarks' scripts (.ci/bench/)
// compare whole processes, and this is how a developer sees where one of
// them spends its time (go tool pprof). It is not a flag because users
// have no need of it. The returned function stops the profile.
func startProfile() func() {
	name := os.Getenv("PATE_CPUPROFILE")
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pate: PATE_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "pate: PATE_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
