package predict

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
)

type job struct {
	rec  arrow.Record
	out  arrow.Record
	err  error
	done chan struct{}
}

// Run labels every batch of in (whose schema is the one p was planned for)
// and writes the labelled batches to out, in input order. workers
// goroutines label batches side by side (0: GOMAXPROCS) while one reads
// and one writes; memory is bounded by a few batches per worker. It
// returns the number of rows written. Run reads nothing sensitive and
// spends nothing: it is post-processing.
func Run(ctx context.Context, p *Plan, in label.RecordReader, out label.RecordWriter, workers int, mem memory.Allocator) (int64, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	public := in.Schema()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	todo := make(chan *job, workers)
	order := make(chan *job, 2*workers)
	readErr := make(chan error, 1)
	go func() { // read
		defer close(todo)
		defer close(order)
		for {
			rec, err := in.Read()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr <- err
				}
				return
			}
			if !rec.Schema().Equal(public) {
				rec.Release()
				readErr <- fmt.Errorf("predict: a batch's schema differs from the input's")
				return
			}
			j := &job{rec: rec, done: make(chan struct{})}
			select {
			case order <- j:
			case <-ctx.Done():
				rec.Release()
				return
			}
			select {
			case todo <- j:
			case <-ctx.Done():
				close(j.done) // no worker takes it; the writer releases it
				return
			}
		}
	}()
	for w := 0; w < workers; w++ { // label
		go func() {
			a := p.NewApplier(mem)
			for j := range todo {
				if ctx.Err() == nil {
					j.out, j.err = a.Label(j.rec)
				}
				close(j.done)
			}
		}()
	}
	// write, in order
	var rows int64
	var err error
	for j := range order {
		if err == nil {
			select {
			case <-j.done:
			case <-ctx.Done():
			}
		}
		if err == nil {
			switch {
			case ctx.Err() != nil:
				err = ctx.Err()
			case j.err != nil:
				err = j.err
			default:
				if err = out.Write(j.out); err == nil {
					rows += j.out.NumRows()
				}
			}
			if err != nil {
				cancel()
			}
		}
		// Whatever happened, wait for the batch to leave its worker
		// (workers skip labelling once cancelled), then release it.
		<-j.done
		if j.out != nil {
			j.out.Release()
		}
		j.rec.Release()
	}
	if err == nil {
		select {
		case err = <-readErr:
		default:
		}
	}
	return rows, err
}
