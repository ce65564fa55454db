package noise_test

import (
	"fmt"

	"github.com/pate-tool/pate/label/noise"
)

// A seeded source makes the noise reproducible (for tests and replicable
// runs); production runs use noise.NewCryptoSource(). The printed values also
// pin the seeded streams: a change to them breaks the replicability of
// earlier seeded runs and must be deliberate.
func ExampleDiscreteGaussian() {
	sigma, err := noise.ParseRat("6.23")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := noise.NewDiscreteGaussian(sigma)
	if err != nil {
		fmt.Println(err)
		return
	}
	src := noise.NewSeededSource(1, 0)
	votes := []int64{31, 12, 7}
	for i, v := range votes {
		votes[i] = v + g.Sample(src)
	}
	fmt.Println(g, votes)
	// Output:
	// discrete Gaussian(σ=6.23) [35 20 8]
}

func ExampleDiscreteLaplace() {
	scale, err := noise.ParseRat("20")
	if err != nil {
		fmt.Println(err)
		return
	}
	l, err := noise.NewDiscreteLaplace(scale)
	if err != nil {
		fmt.Println(err)
		return
	}
	src := noise.NewSeededSource(1, 1)
	fmt.Println(l, l.Sample(src), l.Sample(src), l.Sample(src))
	// Output:
	// discrete Laplace(scale=20) 12 38 -29
}
