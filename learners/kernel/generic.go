package kernel

// votesGeneric is the portable pure-Go kernel. It processes rows one at a
// time; for two classes it uses the precomputed difference vectors.
func (l *Linear) votesGeneric(x []float32, n int, counts []int32) {
	dim, k, c := l.dim, l.k, l.classes
	for i := range counts {
		counts[i] = 0
	}
	if c == 2 {
		for i := 0; i < n; i++ {
			xi := x[i*dim : (i+1)*dim]
			var ones int32
			for t := 0; t < k; t++ {
				if dot32(l.dw[t*dim:(t+1)*dim], xi)+l.db[t] > 0 {
					ones++
				}
			}
			counts[2*i] = int32(k) - ones
			counts[2*i+1] = ones
		}
		return
	}
	for i := 0; i < n; i++ {
		xi := x[i*dim : (i+1)*dim]
		ci := counts[i*c : (i+1)*c]
		for t := 0; t < k; t++ {
			base := t * c
			best := 0
			bestScore := dot32(l.w[base*dim:(base+1)*dim], xi) + l.b[base]
			for cl := 1; cl < c; cl++ {
				s := dot32(l.w[(base+cl)*dim:(base+cl+1)*dim], xi) + l.b[base+cl]
				if s > bestScore {
					best, bestScore = cl, s
				}
			}
			ci[best]++
		}
	}
}

// dot32 returns the float32 dot product of a and b (len(b) >= len(a)).
func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += a[j] * b[j]
		s1 += a[j+1] * b[j+1]
		s2 += a[j+2] * b[j+2]
		s3 += a[j+3] * b[j+3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * b[j]
	}
	return (s0 + s1) + (s2 + s3)
}
