package kernel

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkVotes measures rows/s for pate's default ensemble shapes on every
// kernel path, with one goroutine and with two goroutines splitting the rows
// (this machine has two cores), and for both input layouts: row-major x
// (Votes, as when rows come straight from an Arrow list buffer) and
// column-major tiles (VotesColumns, as when tiles are filled column by
// column; 512 rows per call). With one goroutine it also reports rows per
// CPU-second of the voting thread (Linux), which other load on a shared
// machine disturbs less than rows/s.
func BenchmarkVotes(b *testing.B) {
	shapes := []struct{ dim, k, c int }{
		{64, 250, 2},
		{14, 250, 2},
		{128, 250, 2},
		{64, 250, 10},
		{384, 250, 2}, // embeddings
		{512, 250, 2},
		{1024, 250, 2}, // large embeddings
	}
	const n = 1 << 14 // rows per Votes call, like one record batch
	const tile = 512  // rows per VotesColumns call
	for _, s := range shapes {
		r := rand.New(rand.NewPCG(1, 1))
		l, err := NewLinear(s.k, s.c, s.dim, genNormal(r, s.k*s.c*s.dim), genNormal(r, s.k*s.c))
		if err != nil {
			b.Fatal(err)
		}
		x := genNormal(r, n*s.dim)
		xt := make([]float32, len(x)) // n/tile column-major tiles of the same rows
		for t0 := 0; t0 < n; t0 += tile {
			for row := 0; row < tile; row++ {
				for j := 0; j < s.dim; j++ {
					xt[t0*s.dim+j*tile+row] = x[(t0+row)*s.dim+j]
				}
			}
		}
		counts := make([]int32, n*s.c)
		votes := map[string]func(lo, hi int){
			"rm": func(lo, hi int) { l.Votes(x[lo*s.dim:hi*s.dim], hi-lo, counts[lo*s.c:hi*s.c]) },
			"cm": func(lo, hi int) {
				for t0 := lo; t0 < hi; t0 += tile {
					l.VotesColumns(xt[t0*s.dim:(t0+tile)*s.dim], tile, tile, counts[t0*s.c:(t0+tile)*s.c])
				}
			},
		}
		for _, isa := range supportedISAs() {
			for _, layout := range []string{"rm", "cm"} {
				for _, workers := range []int{1, 2} {
					name := fmt.Sprintf("d=%d/k=%d/C=%d/%s/%s/goroutines=%d", s.dim, s.k, s.c, isa, layout, workers)
					b.Run(name, func(b *testing.B) {
						old := activeISA
						activeISA = isa
						defer func() { activeISA = old }()
						per := n / workers
						f := votes[layout]
						if workers == 1 {
							// CPU time of the one thread that votes, a steadier
							// figure than wall time when other processes share
							// the cores.
							runtime.LockOSThread()
							defer runtime.UnlockOSThread()
						}
						cpu0 := threadCPU()
						for b.Loop() {
							if workers == 1 {
								f(0, n)
								continue
							}
							var wg sync.WaitGroup
							for w := 0; w < workers; w++ {
								wg.Add(1)
								go func() {
									defer wg.Done()
									f(w*per, (w+1)*per)
								}()
							}
							wg.Wait()
						}
						b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "rows/s")
						if cpu := threadCPU() - cpu0; workers == 1 && cpu0 >= 0 && cpu > 0 {
							b.ReportMetric(float64(b.N)*n/cpu, "rows/cpu-s")
						}
					})
				}
			}
		}
	}
}

// BenchmarkLogisticEval measures one loss-and-gradient evaluation of a
// teacher's training problem (400 rows × 64 features, as in the speed
// workload) on every path.
func BenchmarkLogisticEval(b *testing.B) {
	const rows, dim = 400, 64
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, rows*dim)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	t := make([]float64, rows)
	for i := range t {
		t[i] = float64(r.IntN(2))
	}
	theta := make([]float64, dim+1)
	for j := range theta {
		theta[j] = 0.3 * r.NormFloat64()
	}
	grad := make([]float64, dim+1)
	for _, isa := range supportedISAs() {
		b.Run(isa.String(), func(b *testing.B) {
			old := activeISA
			activeISA = isa
			defer func() { activeISA = old }()
			for b.Loop() {
				LogisticEval(x, t, rows, dim, theta, grad)
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}
