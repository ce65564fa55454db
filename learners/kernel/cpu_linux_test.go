package kernel

import "syscall"

// threadCPU returns the CPU time the calling OS thread has used, in
// seconds, or -1 when it is unknown.
func threadCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
