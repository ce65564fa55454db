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

	// Scores relative to class 0, which leave every argmax unchanged and save
	// one class of work: dw[(t*(classes-1)+c-1)*dim+j] = w[t][c][j] − w[t][0][j]
	// and db[t*(classes-1)+c-1] = b[t][c] − b[t][0] for c = 1..classes−1.
	// Class 0 scores 0; for two classes a teacher votes 1 iff its one
	// difference score is > 0.
	dw, db []float32

	// SIMD-packed copies (see pack.go); nil when the fast path is unavailable.
	packed *packedLinear
}

// NewLinear packs k teachers' weights: w has k*classes*dim values
// (teacher-major, then class, then feature), b has k*classes. It copies w and
// b (as differences to class 0). k and dim must be positive and classes at
// least 2.
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
	pc := classes - 1
	l := &Linear{
		k: k, classes: classes, dim: dim,
		dw: make([]float32, k*pc*dim),
		db: make([]float32, k*pc),
	}
	for t := 0; t < k; t++ {
		w0 := w[t*classes*dim : (t*classes+1)*dim]
		for c := 1; c < classes; c++ {
			wc := w[(t*classes+c)*dim : (t*classes+c+1)*dim]
			d := l.dw[(t*pc+c-1)*dim : (t*pc+c)*dim]
			for j := range d {
				d[j] = wc[j] - w0[j]
			}
			l.db[t*pc+c-1] = b[t*classes+c] - b[t*classes]
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
// sums to Teachers(). A row containing NaN gives every vote to class 0 (NaN
// scores never compare greater).
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
		l.votesFast(x, 0, n, counts)
		return
	}
	l.votesGeneric(x, n, counts)
}

// VotesColumns is Votes on x held column-major: feature j of row r at
// x[j*ld + r], ld >= n. A tile of a few hundred rows in this layout can be
// filled column by column from Arrow columns with sequential reads and
// writes; the votes are identical to those of the same rows row-major.
func (l *Linear) VotesColumns(x []float32, ld, n int, counts []int32) {
	if n <= 0 {
		return
	}
	if ld < n || len(x) < (l.dim-1)*ld+n || len(counts) < n*l.classes {
		panic(fmt.Sprintf("kernel: VotesColumns on %d rows (ld %d) needs ld >= n, len(x) >= %d and len(counts) >= %d, got ld %d, %d and %d",
			n, ld, (l.dim-1)*ld+n, n*l.classes, ld, len(x), len(counts)))
	}
	counts = counts[:n*l.classes]
	if l.packed != nil && activeISA != isaGeneric {
		l.votesFast(x, ld, n, counts)
		return
	}
	l.votesGenericLD(x, ld, n, counts)
}

// votesGenericLD is votesGeneric for either layout: a column-major x is
// copied row-major first.
func (l *Linear) votesGenericLD(x []float32, ld, n int, counts []int32) {
	if ld == 0 {
		l.votesGeneric(x, n, counts)
		return
	}
	rm := make([]float32, n*l.dim)
	for j := 0; j < l.dim; j++ {
		for r, v := range x[j*ld : j*ld+n] {
			rm[r*l.dim+j] = v
		}
	}
	l.votesGeneric(rm, n, counts)
}
