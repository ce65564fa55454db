package label_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// ExampleFitDPLogReg trains a differentially private logistic regression
// under a filter of ε = 1, δ = 1e-5 and labels public rows with it. Real
// runs draw from noise.NewCryptoSource; seeded sources make the example
// reproducible (and a seeded run must say so in its report).
func ExampleFitDPLogReg() {
	// Sensitive rows: two well-separated classes (features already encoded
	// by an Encoder fitted on public data).
	r := rand.New(rand.NewPCG(1, 2))
	x := learners.NewMatrix(2000, 3)
	y := make([]int32, 2000)
	for i := range y {
		y[i] = int32(i % 2)
		for j := 0; j < 3; j++ {
			x.Data[i*3+j] = float32(4*float64(y[i]) - 2 + r.NormFloat64())
		}
	}
	f, err := rdp.NewFilter(1, 1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, rel, err := label.FitDPLogReg(f, x, y, 2, noise.NewSeededSource(1, 0), noise.NewSeededSource(1, 1), label.DPLogRegOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	pub := &learners.Matrix{Rows: 2, Cols: 3, Data: []float32{-2, -2, -2, 2, 2, 2}}
	out := make([]int32, 2)
	m.Predict(pub, out)
	fmt.Printf("%d steps, ε spent ≤ %.3g of %g; public labels %v\n", rel.Params.Steps, rdp.RoundUp(rdp.ZCDPEps(rel.Rho, 1e-5), 3), f.Epsilon(), out)
	// Output:
	// 1000 steps, ε spent ≤ 1 of 1; public labels [0 1]
}
