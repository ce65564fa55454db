package noise

import "testing"

func benchSample(b *testing.B, sample func(Source) int64) {
	sources := []struct {
		name string
		src  Source
	}{
		{name: "crypto", src: NewCryptoSource()},
		{name: "seeded", src: NewSeededSource(1, 1)},
	}
	for _, s := range sources {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for b.Loop() {
				sink += sample(s.src)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
			_ = sink
		})
	}
}

func BenchmarkDiscreteGaussianSigma40(b *testing.B) {
	benchSample(b, mustGaussian(b, "40").Sample)
}

func BenchmarkDiscreteGaussianSigma6_23(b *testing.B) {
	benchSample(b, mustGaussian(b, "6.23").Sample)
}

func BenchmarkDiscreteGaussianSigma40Big(b *testing.B) {
	g := mustGaussian(b, "40")
	g.fast = false
	benchSample(b, g.Sample)
}

func BenchmarkDiscreteLaplaceScale20(b *testing.B) {
	benchSample(b, mustLaplace(b, "20").Sample)
}

func BenchmarkDiscreteLaplaceScale2_5(b *testing.B) {
	benchSample(b, mustLaplace(b, "2.5").Sample)
}

func BenchmarkUniformUint64(b *testing.B) {
	benchSample(b, func(src Source) int64 { return int64(UniformUint64(src, 41)) })
}
