package kernel

// votesGeneric is the portable pure-Go kernel. It scores rows two at a time
// against three teacher lines at a time (a line is one scored teacher's
// score for one class relative to its reference class), then turns each
// row's scores into votes.
func (l *Linear) votesGeneric(x []float32, n int, counts []int32) {
	dim, c := l.dim, l.classes
	lines := l.kv * (c - 1)
	buf := make([]float32, 2*lines)
	s0, s1 := buf[:lines], buf[lines:]
	i := 0
	for ; i+2 <= n; i += 2 {
		scores2(l.dw, l.db, dim, x[i*dim:(i+1)*dim], x[(i+1)*dim:(i+2)*dim], s0, s1)
		l.tally(s0, counts[i*c:(i+1)*c])
		l.tally(s1, counts[(i+1)*c:(i+2)*c])
	}
	if i < n {
		xi := x[i*dim : (i+1)*dim]
		for q := range s0 {
			s0[q] = Dot(l.dw[q*dim:(q+1)*dim], xi) + l.db[q]
		}
		l.tally(s0, counts[i*c:(i+1)*c])
	}
}

// tally overwrites row (one row of counts) with the scored teachers' votes
// given the row's line scores s (teacher-major, classes 1..C−1 relative to
// each teacher's reference class).
func (l *Linear) tally(s []float32, row []int32) {
	for j := range row {
		row[j] = 0
	}
	if l.classes == 2 {
		var ones int32
		for _, v := range s {
			if v > 0 {
				ones++
			}
		}
		row[0], row[1] = int32(l.kv)-ones, ones
		return
	}
	pc := l.classes - 1
	for t := 0; t < l.kv; t++ {
		// The reference class scores 0 and is the lowest the teacher
		// sees; strict > keeps ties on the lowest class.
		best, bestScore := int(l.ref[t]), float32(0)
		for cl, v := range s[t*pc : (t+1)*pc] {
			if v > bestScore {
				best, bestScore = cl+1, v
			}
		}
		row[best]++
	}
}

// scores2 sets s0[q] and s1[q] to line q's score on rows x0 and x1. Blocking
// 2 rows × 3 lines keeps six independent sums in registers and reuses every
// load (2 × 4 makes the Go compiler spill and runs slower).
func scores2(dw, db []float32, dim int, x0, x1, s0, s1 []float32) {
	lines := len(s0)
	s1 = s1[:lines]
	db = db[:lines]
	q := 0
	for ; q+3 <= lines; q += 3 {
		w0 := dw[q*dim : (q+1)*dim]
		w1 := dw[(q+1)*dim : (q+2)*dim][:len(w0)]
		w2 := dw[(q+2)*dim : (q+3)*dim][:len(w0)]
		a := x0[:len(w0)]
		b := x1[:len(w0)]
		var a0, a1, a2, b0, b1, b2 float32
		for j, w := range w0 {
			xa, xb, v, u := a[j], b[j], w1[j], w2[j]
			a0 += w * xa
			b0 += w * xb
			a1 += v * xa
			b1 += v * xb
			a2 += u * xa
			b2 += u * xb
		}
		s0[q], s0[q+1], s0[q+2] = a0+db[q], a1+db[q+1], a2+db[q+2]
		s1[q], s1[q+1], s1[q+2] = b0+db[q], b1+db[q+1], b2+db[q+2]
	}
	for ; q < lines; q++ {
		w := dw[q*dim : (q+1)*dim]
		s0[q] = Dot(w, x0) + db[q]
		s1[q] = Dot(w, x1) + db[q]
	}
}

// Dot returns Σ a[j]·b[j] (len(b) ≥ len(a)) with four independent
// accumulators, so the additions do not wait on each other: the pure-Go
// fallback of the kernels, and the dot product of the learners.
func Dot[T float32 | float64](a, b []T) T {
	b = b[:len(a)]
	var s0, s1, s2, s3 T
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
