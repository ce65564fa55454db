package kernel

// BuildInfo says how this binary votes on this CPU.
type BuildInfo struct {
	// Kernel names the vote kernel Votes runs: "generic" (pure Go),
	// "avx2" (AVX2 + FMA, with 16-bit integer scores for two classes),
	// "avx512" (AVX-512F/DQ/BW/VL) or "avx512-vnni" (AVX-512 with
	// AVX512_VNNI, which scores two classes from 16-bit integers).
	Kernel string
	// CGO says whether the binary was built with cgo. The SIMD kernels need
	// it (and amd64): without it, Kernel is always "generic".
	CGO bool
}

// Build reports the vote kernel in use and whether cgo was on.
func Build() BuildInfo {
	return BuildInfo{Kernel: kernelName(activeISA), CGO: cgoEnabled}
}

// kernelName is the name Build gives level l.
func kernelName(l isaLevel) string {
	switch l {
	case isaAVX2, isaAVX2Int16:
		return "avx2"
	case isaAVX512:
		return "avx512"
	case isaAVX512Int16:
		return "avx512-vnni"
	}
	return "generic"
}
