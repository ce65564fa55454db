//go:build !cgo || !amd64

package kernel

func detectISA() isaLevel { return isaGeneric }

func (l *Linear) votesFast(x []float32, n int, counts []int32) { l.votesGeneric(x, n, counts) }
