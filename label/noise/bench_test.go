package noise

import "testing"

// benchSample measures sample on a crypto and a seeded source, and, when
// reference is not nil, the CKS20 reference path (reference_test.go) on the
// same sources in the same run, so that the ratio of their samples/s is
// measured side by side.
func benchSample(b *testing.B, sample, reference func(Source) int64) {
	paths := []struct {
		name   string
		sample func(Source) int64
	}{
		{name: "", sample: sample},
		{name: "reference-", sample: reference},
	}
	for _, p := range paths {
		if p.sample == nil {
			continue
		}
		sources := []struct {
			name string
			src  Source
		}{
			{name: "crypto", src: NewCryptoSource()},
			{name: "seeded", src: NewSeededSource(1, 1)},
		}
		for _, s := range sources {
			b.Run(p.name+s.name, func(b *testing.B) {
				b.ReportAllocs()
				var sink int64
				for b.Loop() {
					sink += p.sample(s.src)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
				_ = sink
			})
		}
	}
}

func benchGaussian(b *testing.B, sigma string) {
	g := mustGaussian(b, sigma)
	benchSample(b, g.Sample, g.referenceSample)
}

func benchLaplace(b *testing.B, scale string) {
	l := mustLaplace(b, scale)
	benchSample(b, l.Sample, l.referenceSample)
}

func BenchmarkDiscreteGaussianSigma40(b *testing.B)   { benchGaussian(b, "40") }
func BenchmarkDiscreteGaussianSigma6_23(b *testing.B) { benchGaussian(b, "6.23") }
func BenchmarkDiscreteGaussianSigma200(b *testing.B)  { benchGaussian(b, "200") }

func BenchmarkDiscreteGaussianSigma40Big(b *testing.B) {
	g := mustGaussian(b, "40")
	g.fast = false
	benchSample(b, g.Sample, nil)
}

func BenchmarkDiscreteLaplaceScale20(b *testing.B)  { benchLaplace(b, "20") }
func BenchmarkDiscreteLaplaceScale2_5(b *testing.B) { benchLaplace(b, "2.5") }

func BenchmarkUniformUint64(b *testing.B) {
	benchSample(b, func(src Source) int64 { return int64(UniformUint64(src, 41)) }, nil)
}

// BenchmarkNewDiscreteGaussian measures construction, tables included.
func BenchmarkNewDiscreteGaussian(b *testing.B) {
	for _, sigma := range []string{"6.23", "40", "200", "1000", "1e4"} {
		r := mustRat(b, sigma)
		b.Run("sigma="+sigma, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewDiscreteGaussian(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewDiscreteLaplace measures construction, table included.
func BenchmarkNewDiscreteLaplace(b *testing.B) {
	for _, scale := range []string{"20", "41", "4096"} {
		r := mustRat(b, scale)
		b.Run("scale="+scale, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewDiscreteLaplace(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
