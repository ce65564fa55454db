package kernel

import (
	"errors"
	"fmt"
)

// ErrShape reports weights or biases whose length does not match the declared
// number of teachers, classes and features.
var ErrShape = errors.New("kernel: shape mismatch")

// Linear is an ensemble of k linear teachers sharing the same classes and
// features, packed for fast voting. It is immutable after NewLinear and safe
// for concurrent use.
type Linear struct {
	k, classes, dim int

	// w is k×classes×dim (teacher-major, then class, then feature); b is k×classes.
	w, b []float32

	// For classes == 2: dw[t*dim+j] = w[t][1][j] − w[t][0][j], db[t] = b[t][1] − b[t][0].
	dw, db []float32

	// SIMD-packed copies (see pack.go); nil when the fast path is unavailable.
	packed *packedLinear
}

// NewLinear packs k teachers' weights: w has k*classes*dim values
// (teacher-major, then class, then feature), b has k*classes. It copies w and
// b. k, classes and dim must be positive and classes at least 2.
func NewLinear(k, classes, dim int, w, b []float32) (*Linear, error) {
	if k <= 0 || classes < 2 || dim <= 0 {
		return nil, fmt.Errorf("kernel: need k > 0, classes >= 2, dim > 0, got k=%d classes=%d dim=%d: %w", k, classes, dim, ErrShape)
	}
	if len(w) != k*classes*dim {
		return nil, fmt.Errorf("kernel: weights have %d values, want k*classes*dim = %d: %w", len(w), k*classes*dim, ErrShape)
	}
	if len(b) != k*classes {
		return nil, fmt.Errorf("kernel: biases have %d values, want k*classes = %d: %w", len(b), k*classes, ErrShape)
	}
	l := &Linear{
		k: k, classes: classes, dim: dim,
		w: append([]float32(nil), w...),
		b: append([]float32(nil), b...),
	}
	if classes == 2 {
		l.dw = make([]float32, k*dim)
		l.db = make([]float32, k)
		for t := 0; t < k; t++ {
			w0 := w[(2*t)*dim : (2*t+1)*dim]
			w1 := w[(2*t+1)*dim : (2*t+2)*dim]
			d := l.dw[t*dim : (t+1)*dim]
			for j := range d {
				d[j] = w1[j] - w0[j]
			}
			l.db[t] = b[2*t+1] - b[2*t]
		}
	}
	l.packed = pack(l)
	return l, nil
}

// Teachers returns the number of teachers k.
func (l *Linear) Teachers() int { return l.k }

// Classes returns the number of classes.
func (l *Linear) Classes() int { return l.classes }

// Dim returns the number of features per row.
func (l *Linear) Dim() int { return l.dim }

// Votes overwrites counts (n × classes, row-major) with the vote histogram of
// the n rows of x (n × dim, row-major). Each teacher casts exactly one vote per
// row: its argmax class, ties → the lowest class index, so every row of counts
// sums to Teachers().
//
// Votes is single-threaded and safe for concurrent use on different x and
// counts; callers split rows across goroutines. It panics if x has fewer than
// n*Dim() values or counts fewer than n*Classes() (a programming error).
func (l *Linear) Votes(x []float32, n int, counts []int32) {
	if n <= 0 {
		return
	}
	if len(x) < n*l.dim || len(counts) < n*l.classes {
		panic(fmt.Sprintf("kernel: Votes on %d rows needs len(x) >= %d and len(counts) >= %d, got %d and %d",
			n, n*l.dim, n*l.classes, len(x), len(counts)))
	}
	x = x[:n*l.dim]
	counts = counts[:n*l.classes]
	if l.packed != nil && activeISA != isaGeneric {
		l.votesFast(x, n, counts)
		return
	}
	l.votesGeneric(x, n, counts)
}
