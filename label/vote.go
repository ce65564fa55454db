// The teachers' votes on a batch of public rows: every teacher's scores
// from stacked weights, tile by tile, reduced to vote counts.

package label

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/learners"
)

// voteEnsemble encodes the queried rows and counts the teachers' votes.
func (st *runState) voteEnsemble(b *batch) error {
	n, q := b.rec.NumRows(), int64(b.queryN)
	rec := b.rec
	if q < n {
		rec = b.rec.NewSlice(0, q)
		defer rec.Release()
	}
	if b.x == nil {
		b.x = learners.NewMatrix(0, st.enc.Dim())
	}
	if b.sel != nil {
		rec = b.rec // encode the batch, then keep the selected rows
	} else if st.student == nil { // nobody needs the encoded rows afterwards
		if ens := st.stacked(); ens != nil {
			if err := st.voteTiles(rec, ens, b); err != nil {
				return fmt.Errorf("%w: %s, rows %d–%d: %v", ErrInvalidInput, st.l.cfg.pub(), b.first, b.first+n-1, err)
			}
			return nil
		}
	}
	if err := st.enc.Encode(rec, b.x); err != nil {
		return fmt.Errorf("%w: %s, rows %d–%d: %v", ErrInvalidInput, st.l.cfg.pub(), b.first, b.first+n-1, err)
	}
	if b.sel != nil {
		for j, r := range b.sel {
			copy(b.x.Row(j), b.x.Row(int(r)))
		}
		b.x.Rows = len(b.sel)
		b.x.Data = b.x.Data[:len(b.sel)*b.x.Cols]
	}
	st.ens.Votes(b.x, b.counts)
	for j := range b.more { // the other label columns' teachers, on the same rows
		st.labels[j+1].ens.Votes(b.x, b.more[j].counts)
	}
	return nil
}

// stacked returns the ensembles of the label columns, in order, when every
// one is stacked for the fused kernel (see voteTiles); nil otherwise.
func (st *runState) stacked() []*learners.Ensemble {
	e, ok := st.ens.(*learners.Ensemble)
	if !ok || !e.Stacked() {
		return nil
	}
	out := []*learners.Ensemble{e}
	for j := 1; j < len(st.labels); j++ {
		ej := st.labels[j].ens
		if ej == nil || !ej.Stacked() {
			return nil
		}
		out = append(out, ej)
	}
	return out
}

// voteTiles counts the votes of the rows of rec in tiles of a few hundred
// rows, each encoded column-major and voted on at once by the goroutine that
// encoded it, while it is in that core's cache. Encoding a whole batch first
// would write it to memory and read it back.
//
// When the features are one float32 list column (an embedding), the
// teachers vote on Arrow's buffer as it is, the encoder's standardisation
// folded into their weights (learners.Ensemble.Fold); rows with a null, a
// NaN or an infinity, or of another length, are encoded as above. The
// folded votes may differ from the encoded ones on a teacher's near-tie
// (float32 rounding; see learners.FoldedEnsemble).
func (st *runState) voteTiles(rec arrow.Record, ens []*learners.Ensemble, b *batch) error {
	p, err := st.enc.Prepare(rec)
	if err != nil {
		return err
	}
	raw := p.Raw(st.folded(ens))
	n, dim := p.Rows(), st.enc.Dim()
	rows := min(4096, max(16, tileBytes/(4*max(1, dim))))
	tiles := (n + rows - 1) / rows
	counts := make([][]int32, len(ens))
	classes := make([]int, len(ens))
	counts[0], classes[0] = b.counts, ens[0].Classes()
	for j := 1; j < len(ens); j++ {
		counts[j], classes[j] = b.more[j-1].counts, ens[j].Classes()
	}
	var next atomic.Int64
	work := func() {
		bp := st.tileBufs.Get().(*[]float32)
		defer st.tileBufs.Put(bp)
		if len(*bp) < dim*rows {
			*bp = make([]float32, dim*rows)
		}
		x := *bp
		sub := make([][]int32, len(ens)) // raw: each ensemble's counts of a tile
		for {
			t := int(next.Add(1) - 1)
			if t >= tiles {
				return
			}
			lo, hi := t*rows, min(n, (t+1)*rows)
			if raw != nil {
				for j := range ens {
					sub[j] = counts[j][lo*classes[j] : hi*classes[j]]
				}
				raw.Votes(lo, hi, sub, x)
				continue
			}
			p.EncodeColumns(lo, hi, x, rows)
			for j, e := range ens {
				e.VotesColumns(x, rows, hi-lo, counts[j][lo*classes[j]:hi*classes[j]])
			}
		}
	}
	workers := min(tiles, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	return nil
}

// folded returns ens with the encoder's standardisation folded in, or nil
// when one of them cannot be folded; it folds them on its first call (from
// the vote stage's one goroutine) and again only if ens changes.
func (st *runState) folded(ens []*learners.Ensemble) []*learners.FoldedEnsemble {
	if slices.Equal(ens, st.foldsOf) {
		return st.folds
	}
	st.foldsOf, st.folds = slices.Clone(ens), nil
	folds := make([]*learners.FoldedEnsemble, len(ens))
	for j, e := range ens {
		if folds[j] = e.Fold(st.enc); folds[j] == nil {
			return nil
		}
	}
	st.folds = folds
	return folds
}

// tileBytes is the size of voteTiles' tiles of encoded values (a variable
// for BenchmarkVoteBatch). A tile's rows must stay in the core's L2 cache
// with the stacked weights (64 KiB for 250 teachers of 64 features), and
// each of its columns should be a long enough run for the hardware
// prefetcher: with 64 columns a tile of 32 KiB reads runs of 1 KiB per
// column, and the reads of the decoded batch, which comes from memory,
// stall.
var tileBytes = 128 << 10
