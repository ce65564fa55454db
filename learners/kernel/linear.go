package kernel

import (
	"errors"
	"fmt"
	"math"
)

// ErrShape reports weights or biases whose length does not match the declared
// number of teachers, classes and features.
var ErrShape = errors.New("kernel: shape mismatch")

// Linear is an ensemble of k linear teachers sharing the same classes and
// features, packed for fast voting. It is immutable after NewLinear and safe
// for concurrent use.
type Linear struct {
	k, classes, dim int

	// kv is the number of scored teachers: those that may predict two
	// classes or more, in their order among the k. A teacher that predicts
	// one class only votes it on every row whatever the row: its vote is
	// counted in fixed (classes entries, nil when there is none) and it is
	// not scored.
	kv    int
	fixed []int32

	// Scores relative to each scored teacher's reference class ref[t], the
	// first class it may predict, which leave every argmax unchanged and
	// save one class of work: for c = 1..classes−1 that t may predict,
	// other than ref[t], dw[(t*(classes-1)+c-1)*dim+j] = w[t][c][j] −
	// w[t][ref[t]][j] and db[t*(classes-1)+c-1] = b[t][c] − b[t][ref[t]].
	// The other lines (classes t never predicts, and ref[t] itself) have
	// zero weights and a bias of −Inf: they score −Inf (or NaN on a row
	// holding ±Inf), which never compares greater than anything. A
	// teacher's vote starts at ref[t] with score 0 and moves to class c
	// when c's line scores strictly more than the best so far, so ties go
	// to the lowest class; a class a teacher never predicts never gets its
	// vote, and its weights never enter a subtraction. For two classes a
	// scored teacher may predict both (ref 0), and votes 1 iff its one
	// line scores > 0.
	dw, db []float32
	ref    []int32

	// SIMD-packed copies (see pack.go); nil when the fast path is
	// unavailable or no teacher is scored.
	packed *packedLinear
}

// NewLinear packs k teachers' weights: w has k*classes*dim values
// (teacher-major, then class, then feature), b has k*classes. It copies w and
// b (as differences to class 0). k and dim must be positive and classes at
// least 2. Every teacher may predict every class, whatever its biases; see
// NewLinearSeen for teachers that never predict some.
func NewLinear(k, classes, dim int, w, b []float32) (*Linear, error) {
	return NewLinearSeen(k, classes, dim, w, b, nil)
}

// NewLinearSeen is NewLinear for teachers that may each predict only some
// of the classes (those present in its training rows): seen has k*classes
// entries, seen[t*classes+c] true when teacher t may predict class c, and
// every teacher must have at least one; nil means every class. A teacher
// never votes for a class it does not see, whatever the row, and the
// weights and bias of such a class are ignored (they need not be finite).
// A teacher that sees one class only votes it on every row.
func NewLinearSeen(k, classes, dim int, w, b []float32, seen []bool) (*Linear, error) {
	if k <= 0 || classes < 2 || dim <= 0 {
		return nil, fmt.Errorf("kernel: need k > 0, classes >= 2, dim > 0, got k=%d classes=%d dim=%d: %w", k, classes, dim, ErrShape)
	}
	if len(w) != k*classes*dim {
		return nil, fmt.Errorf("kernel: weights have %d values, want k*classes*dim = %d: %w", len(w), k*classes*dim, ErrShape)
	}
	if len(b) != k*classes {
		return nil, fmt.Errorf("kernel: biases have %d values, want k*classes = %d: %w", len(b), k*classes, ErrShape)
	}
	if seen != nil && len(seen) != k*classes {
		return nil, fmt.Errorf("kernel: seen has %d values, want k*classes = %d: %w", len(seen), k*classes, ErrShape)
	}
	sees := func(t, c int) bool { return seen == nil || seen[t*classes+c] }
	pc := classes - 1
	l := &Linear{k: k, classes: classes, dim: dim}
	scored := make([]int, 0, k)
	for t := 0; t < k; t++ {
		first, n := -1, 0
		for c := 0; c < classes; c++ {
			if sees(t, c) {
				if first < 0 {
					first = c
				}
				n++
			}
		}
		switch n {
		case 0:
			return nil, fmt.Errorf("kernel: teacher %d sees no class: %w", t, ErrShape)
		case 1:
			if l.fixed == nil {
				l.fixed = make([]int32, classes)
			}
			l.fixed[first]++
		default:
			scored = append(scored, t)
			l.ref = append(l.ref, int32(first))
		}
	}
	l.kv = len(scored)
	l.dw = make([]float32, l.kv*pc*dim)
	l.db = make([]float32, l.kv*pc)
	negInf := float32(math.Inf(-1))
	for i, t := range scored {
		r := int(l.ref[i])
		wr := w[(t*classes+r)*dim : (t*classes+r+1)*dim]
		for c := 1; c < classes; c++ {
			if c == r || !sees(t, c) {
				l.db[i*pc+c-1] = negInf
				continue
			}
			wc := w[(t*classes+c)*dim : (t*classes+c+1)*dim]
			d := l.dw[(i*pc+c-1)*dim : (i*pc+c)*dim]
			for j := range d {
				d[j] = wc[j] - wr[j]
			}
			l.db[i*pc+c-1] = b[t*classes+c] - b[t*classes+r]
		}
	}
	if l.kv > 0 {
		l.packed = pack(l)
	}
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
// row: its argmax class among those it sees, ties → the lowest class index,
// so every row of counts sums to Teachers(). A row containing NaN gives each
// teacher's vote to the first class it sees (NaN scores never compare
// greater).
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
	switch {
	case l.kv == 0:
		clear(counts)
	case l.packed != nil && activeISA != isaGeneric:
		l.votesFast(x, 0, n, counts)
	default:
		l.votesGeneric(x, n, counts)
	}
	l.addFixed(n, counts)
}

// addFixed adds the votes of the teachers that see one class only to each
// of the n rows of counts.
func (l *Linear) addFixed(n int, counts []int32) {
	if l.fixed == nil {
		return
	}
	c := l.classes
	for i := 0; i < n; i++ {
		row := counts[i*c : (i+1)*c]
		for j, v := range l.fixed {
			row[j] += v
		}
	}
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
	switch {
	case l.kv == 0:
		clear(counts)
	case l.packed != nil && activeISA != isaGeneric:
		l.votesFast(x, ld, n, counts)
	default:
		l.votesGenericLD(x, ld, n, counts)
	}
	l.addFixed(n, counts)
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
