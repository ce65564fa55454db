package kernel

// isaLevel names the instruction set a kernel path uses.
type isaLevel int

const (
	isaGeneric     isaLevel = iota // pure Go
	isaAVX2                        // AVX2 + FMA (cgo, amd64)
	isaAVX2Int16                   // isaAVX2, two-class votes from certified 16-bit integer scores
	isaAVX512                      // AVX-512F/DQ/BW/VL + FMA (cgo, amd64)
	isaAVX512Int16                 // isaAVX512 + AVX512_VNNI: two-class votes from certified 16-bit integer scores
)

func (l isaLevel) String() string {
	switch l {
	case isaAVX2:
		return "avx2"
	case isaAVX2Int16:
		return "avx2int16"
	case isaAVX512:
		return "avx512"
	case isaAVX512Int16:
		return "avx512int16"
	default:
		return "generic"
	}
}

// cpuISA is the best level this build and CPU support; activeISA is the level
// Votes uses (tests lower it to exercise every path).
var (
	cpuISA    = detectISA()
	activeISA = cpuISA
)

// supportedISAs lists every level that can run here, best first.
func supportedISAs() []isaLevel {
	var ls []isaLevel
	for l := cpuISA; l > isaGeneric; l-- {
		if l == isaAVX512Int16 && !cpuVNNI {
			continue
		}
		ls = append(ls, l)
	}
	return append(ls, isaGeneric)
}
