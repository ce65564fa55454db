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
	}
	if dim == 0 {
		return e, nil // no features: the generic path handles it
	}
	lin, err := kernel.NewLinear(len(models), classes, dim, w, b)
	if err != nil {
		return nil, fmt.Errorf("learners: stacking %d linear teachers: %w", len(models), err)
	}
	e.linear = lin
	return e, nil
}

// Teachers returns the number of teachers.
func (e *Ensemble) Teachers() int { return len(e.models) }

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
