package kernel

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// BenchmarkVotes measures rows/s for pate's default ensemble shapes on every
// kernel path, with one goroutine and with two goroutines splitting the rows
// (this machine has two cores).
func BenchmarkVotes(b *testing.B) {
	shapes := []struct{ dim, k, c int }{
		{64, 250, 2},
		{14, 250, 2},
		{64, 250, 10},
	}
	const n = 1 << 14 // rows per Votes call, like one record batch
	for _, s := range shapes {
		r := rand.New(rand.NewPCG(1, 1))
		l, err := NewLinear(s.k, s.c, s.dim, genNormal(r, s.k*s.c*s.dim), genNormal(r, s.k*s.c))
		if err != nil {
			b.Fatal(err)
		}
		x := genNormal(r, n*s.dim)
		counts := make([]int32, n*s.c)
		for _, isa := range supportedISAs() {
			for _, workers := range []int{1, 2} {
				name := fmt.Sprintf("d=%d/k=%d/C=%d/%s/goroutines=%d", s.dim, s.k, s.c, isa, workers)
				b.Run(name, func(b *testing.B) {
					old := activeISA
					activeISA = isa
					defer func() { activeISA = old }()
					per := n / workers
					for b.Loop() {
						if workers == 1 {
							l.Votes(x, n, counts)
							continue
						}
						var wg sync.WaitGroup
						for w := 0; w < workers; w++ {
							wg.Add(1)
							go func() {
								defer wg.Done()
								l.Votes(x[w*per*s.dim:(w+1)*per*s.dim], per, counts[w*per*s.c:(w+1)*per*s.c])
							}()
						}
						wg.Wait()
					}
					b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "rows/s")
				})
			}
		}
	}
}
