package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// startProfile writes a CPU profile of the whole run to the file named by
// PATE_CPUPROFILE, and an execution trace (go tool trace) to the file named
// by PATE_TRACE, when they are set: the benchmarks' scripts (.ci/bench/)
// compare whole processes, and this is how a developer sees where one of
// them spends its time (go tool pprof) and where it runs on one core while
// the others idle (the trace's goroutine view). PATE_MEMPROFILE names the
// file for a heap profile written at the end of the run, whose alloc_space
// view shows where the fresh memory that the kernel must fault in was
// asked for. They are not flags because users have no need of them. The
// returned function stops all three.
func startProfile() func() {
	stopCPU := startOne("PATE_CPUPROFILE", pprof.StartCPUProfile, func(io.Writer) { pprof.StopCPUProfile() })
	stopTrace := startOne("PATE_TRACE", trace.Start, func(io.Writer) { trace.Stop() })
	stopMem := startOne("PATE_MEMPROFILE", func(io.Writer) error {
		runtime.MemProfileRate = 64 << 10
		return nil
	}, func(w io.Writer) { pprof.Lookup("allocs").WriteTo(w, 0) })
	return func() {
		stopTrace()
		stopCPU()
		stopMem()
	}
}

// startOne starts writing to the file named by the environment variable
// env, when it is set, and returns the function that stops it.
func startOne(env string, start func(w io.Writer) error, stop func(w io.Writer)) func() {
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
		stop(f)
		f.Close()
	}
}
