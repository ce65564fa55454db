//go:build !cgo || !amd64

package kernel

import "math"

func detectISA() isaLevel { return isaGeneric }

const cpuVNNI = false

func (l *Linear) votesFast(x []float32, ld, n int, counts []int32) {
	l.votesGenericLD(x, ld, n, counts)
}

func logisticFast(x, t []float64, rows, dim int, theta, grad []float64) float64 {
	return logisticGeneric(x, t, rows, dim, theta, grad)
}

func expNonPos(x, out []float64) {
	for i, v := range x {
		out[i] = math.Exp(v)
	}
}
