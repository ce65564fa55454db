package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startProfile writes a CPU profile of the whole run to the file named by
// PATE_CPUPROFILE, and an execution trace (go tool trace) to the file named
// by PATE_TRACE, when they are set: the benchmarks' scripts (.ci/bench/)
// compare whole processes, and this is how a developer sees where one of
// them spends its time (go tool pprof) and where it runs on one core while
// the others idle (the trace's goroutine view). They are not flags because
// users have no need of them. The returned function stops both.
func startProfile() func() {
	stopCPU := startOne("PATE_CPUPROFILE", pprof.StartCPUProfile, pprof.StopCPUProfile)
	stopTrace := startOne("PATE_TRACE", trace.Start, trace.Stop)
	return func() {
		stopTrace()
		stopCPU()
	}
}

// startOne starts writing to the file named by the environment variable
// env, when it is set, and returns the function that stops it.
func startOne(env string, start func(w io.Writer) error, stop func()) func() {
	name := os.Getenv(env)
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pate: %s: %v\n", env, err)
		return func() {}
	}
	if err := start(f); err != nil {
		fmt.Fprintf(os.Stderr, "pate: %s: %v\n", env, err)
		f.Close()
		return func() {}
	}
	return func() {
		stop()
		f.Close()
	}
}
