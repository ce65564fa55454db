//go:build !linux

package kernel

// threadCPU returns -1: the calling thread's CPU time is only read on Linux.
func threadCPU() float64 { return -1 }
