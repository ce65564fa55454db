package learners

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/pate-tool/pate/learners/kernel"
)

// parallelRows is the batch size from which Votes splits the rows across
// GOMAXPROCS goroutines.
const parallelRows = 2048

// Ensemble is the teachers' vote: each teacher casts exactly one vote per row,
// for its predicted class (privacy invariant 3). When every teacher is a
// LinearModel, the weights are stacked and counted by the fused kernel of
// package kernel. An Ensemble is safe for concurrent use.
type Ensemble struct {
	models  []Model
	classes int
	linear  *kernel.Linear
	seen    []bool    // per stacked teacher and class: the teacher may predict the class (see absent)
	bufs    sync.Pool // *[]int32 prediction buffers for the generic path
}

// NewEnsemble stacks the teachers. All linear teachers must have the same
// number of classes, equal to classes, and the same dimension.
func NewEnsemble(models []Model, classes int) (*Ensemble, error) {
	if len(models) == 0 {
		return nil, errors.New("learners: an ensemble needs at least one teacher")
	}
	if classes < 1 {
		return nil, fmt.Errorf("learners: an ensemble needs at least one class, got %d", classes)
	}
	e := &Ensemble{models: append([]Model(nil), models...), classes: classes}
	for i, m := range models {
		if m == nil {
			return nil, fmt.Errorf("learners: teacher %d is nil", i)
		}
	}
	if classes < 2 {
		return e, nil
	}
	var w, b []float32
	var seen []bool
	dim := -1
	for i, m := range models {
		lm, ok := m.(LinearModel)
		if !ok {
			return e, nil
		}
		wi, bi := lm.Linear()
		if len(bi) != classes || len(wi)%classes != 0 {
			return nil, fmt.Errorf("learners: teacher %d has %d biases and %d weights, want %d classes", i, len(bi), len(wi), classes)
		}
		d := len(wi) / classes
		if dim < 0 {
			dim = d
			w = make([]float32, 0, len(models)*classes*dim)
			b = make([]float32, 0, len(models)*classes)
		} else if d != dim {
			return nil, fmt.Errorf("learners: teacher %d has %d features, teacher 0 has %d", i, d, dim)
		}
		w = append(w, wi...)
		b = append(b, bi...)
		seen = seenClasses(seen, bi)
	}
	if dim == 0 {
		return e, nil // no features: the generic path handles it
	}
	lin, err := kernel.NewLinearSeen(len(models), classes, dim, w, b, seen)
	if err != nil {
		return nil, fmt.Errorf("learners: stacking %d linear teachers: %w", len(models), err)
	}
	e.linear, e.seen = lin, seen
	return e, nil
}

// Teachers returns the number of teachers.
func (e *Ensemble) Teachers() int { return len(e.models) }

// Classes returns the number of classes a vote histogram has.
func (e *Ensemble) Classes() int { return e.classes }

// Stacked reports whether the teachers' weights are stacked for the fused
// kernel (every teacher linear, at least two classes, at least one
// feature): then VotesColumns may be used, and Fold may fold an encoder's
// standardisation into the weights.
func (e *Ensemble) Stacked() bool { return e.linear != nil }

// VotesColumns is Votes on n rows held column-major, feature j of row r at
// x[j*ld + r] (see Encoder.Prepare and Prepared.EncodeColumns), on the
// calling goroutine. The votes are those Votes gives for the same rows. It
// panics unless Stacked().
func (e *Ensemble) VotesColumns(x []float32, ld, n int, counts []int32) {
	if e.linear == nil {
		panic("learners: VotesColumns on an ensemble whose teachers are not stacked")
	}
	e.linear.VotesColumns(x, ld, n, counts)
}

// Votes overwrites counts (x.Rows × classes) with the vote histogram of each
// row: each teacher votes once, for its predicted class (argmax, ties → lowest
// class). Large batches are split across GOMAXPROCS goroutines.
func (e *Ensemble) Votes(x *Matrix, counts []int32) {
	n, k := x.Rows, e.classes
	counts = counts[:n*k]
	workers := runtime.GOMAXPROCS(0)
	if n < parallelRows || workers < 2 {
		e.votes(x, 0, n, counts)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.votes(x, lo, hi, counts[lo*k:hi*k])
		}()
	}
	wg.Wait()
}

// votes counts rows [lo, hi) of x into counts ((hi−lo) × classes).
func (e *Ensemble) votes(x *Matrix, lo, hi int, counts []int32) {
	n := hi - lo
	if e.linear != nil {
		e.linear.Votes(x.Data[lo*x.Cols:hi*x.Cols], n, counts)
		return
	}
	clear(counts)
	sub := Matrix{Rows: n, Cols: x.Cols, Data: x.Data[lo*x.Cols : hi*x.Cols]}
	var buf []int32
	if p, ok := e.bufs.Get().(*[]int32); ok {
		buf = *p
	}
	if cap(buf) < n {
		buf = make([]int32, n)
	}
	buf = buf[:n]
	k := e.classes
	for _, m := range e.models {
		m.Predict(&sub, buf)
		for i, c := range buf {
			counts[i*k+int(c)]++
		}
	}
	e.bufs.Put(&buf)
}
