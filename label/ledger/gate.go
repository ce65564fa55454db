package ledger

import "github.com/apache/arrow/go/v15/arrow"

// Gate writes a run's begin entry in the background, while the run reads
// and trains, and holds back its output until the entry is written:
// nothing leaves the process before the run's maximum spend is in the
// ledger. A file output leaves only at its final rename, after the run
// (the caller waits for the gate first); a stream only through a
// GatedWriter, whose first Write waits. A refusal cancels the run.
type Gate struct {
	done  chan struct{}
	entry *Run
	err   error
}

// StartGate calls begin in the background (it returns nil without a
// ledger) and calls cancel if begin fails.
func StartGate(begin func() (*Run, error), cancel func()) *Gate {
	g := &Gate{done: make(chan struct{})}
	go func() {
		defer close(g.done)
		if g.entry, g.err = begin(); g.err != nil {
			cancel()
		}
	}()
	return g
}

// Wait returns the begin entry (nil without a ledger) once it is written.
func (g *Gate) Wait() (*Run, error) {
	<-g.done
	return g.entry, g.err
}

// RecordWriter is where a run writes its output.
type RecordWriter interface {
	Write(rec arrow.Record) error
}

// GatedWriter passes records to W once the gate is open, and counts the
// rows it passed.
type GatedWriter struct {
	W    RecordWriter
	Gate *Gate
	Rows int64
}

func (c *GatedWriter) Write(rec arrow.Record) error {
	if _, err := c.Gate.Wait(); err != nil {
		return err
	}
	if err := c.W.Write(rec); err != nil {
		return err
	}
	c.Rows += rec.NumRows()
	return nil
}
