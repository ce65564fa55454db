package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/io/atomicfile"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

// What the commands print and write besides their output.

// publish writes the report file, completes the output's metadata and
// commits it, then renames the report into place and prints the summary.
// committed says whether the output was released.
func publish(c *cli.Context, e *env, w *arrowio.Writer, rep *label.Report, cfg label.Config, out string) (committed bool, err error) {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return false, fmt.Errorf("encoding the report: %w", err)
	}
	// The report is written whole (and synced) before the output is
	// committed, and put in place after it.
	var report *atomicfile.File
	if p := c.String("report"); p != "" {
		if report, err = writeTemp(p, append(js, '\n')); err != nil {
			return false, fmt.Errorf("--report %s: %w", p, err)
		}
		defer report.Abort() // after Commit it does nothing
	}
	if err := w.Commit(label.FinalMetadata(cfg, rep)); err != nil {
		return false, fmt.Errorf("-o %s: %w", out, err)
	}
	if report != nil {
		if err := report.Commit(); err != nil {
			return true, fmt.Errorf("--report %s: %w", report.Path(), err)
		}
	}
	if c.Bool("json") {
		dst := e.stdout
		if out == "-" {
			dst = e.stderr
		}
		fmt.Fprintln(dst, string(js))
	} else if !c.Bool("quiet") {
		printSummary(e, rep, out)
	}
	return true, nil
}

func printSummary(e *env, rep *label.Report, out string) {
	if rep.Plan != "" {
		fmt.Fprintf(e.stderr, "pate: plan: %s\n", rep.Plan)
	}
	if d := rep.ClassDiscovery; d != nil {
		unit := "rows"
		if rep.PrivacyUnit != "" && rep.PrivacyUnit != "row" {
			unit = "privacy units"
		}
		fmt.Fprintf(e.stderr, "pate: classes: %d released privately; a class is released when its noisy count clears T = %d %s (σ = %s), "+
			"so a rarer class is never labelled: declare the classes with --classes to keep them all\n", len(rep.Classes), d.Threshold, unit, d.Sigma)
	}
	fmt.Fprintln(e.stderr, sourcesLine(rep))
	if pd := rep.PureDP; pd != nil { // a run of pure ε-DP events
		fmt.Fprintf(e.stderr, "pate: guarantee (ε, δ) = (%g, %g) [%s; %s]; %d of at most %d events of ε %.6g charged\n",
			float64(rep.Guarantee.Epsilon), float64(rep.Guarantee.Delta), rep.Mechanism, rep.Guarantee.Conversion,
			pd.Events, pd.MaxEvents, float64(pd.EventEpsilon))
	} else {
		fmt.Fprintf(e.stderr, "pate: guarantee (ε, δ) = (%g, %g) [%s]; realized spend ε = %g (improved conversion, order %g)\n",
			float64(rep.Guarantee.Epsilon), float64(rep.Guarantee.Delta), rep.Mechanism,
			float64(rep.Spent.EpsilonImproved), float64(rep.Spent.OrderImproved))
	}
	for _, l := range rep.Labels {
		planned := ""
		if l.RhoPlanned > 0 {
			planned = fmt.Sprintf(" of the %.6g planned for it (weight %.3g)", float64(l.RhoPlanned), l.Weight)
		}
		fmt.Fprintf(e.stderr, "pate:   label %s: %d answered, %d abstained; ρ %.6g%s\n",
			l.Label, l.Answered, l.Abstained, float64(l.Rho), planned)
	}
	if rep.Budget.StoppedOn && rep.Student == nil {
		fmt.Fprintf(e.stderr, "pate: the budget stopped the queries at row %d; later rows have no label\n", rep.Budget.StoppedAtRow)
	}
	if out != "-" {
		fmt.Fprintf(e.stderr, "pate: wrote %s\n", out)
	}
}

// sourcesLine says in one line who labelled the public rows: the teachers,
// the student, nobody.
func sourcesLine(rep *label.Report) string {
	q := rep.Queries
	teachers, student := q.Answered, int64(0)
	if src := rep.Sources; src != nil {
		teachers, student = src.Teachers, src.Student
	}
	nobody := max(0, q.PublicRows-teachers-student)
	by := "the teachers"
	switch { // one model answered, not teachers
	case rep.DPLogReg != nil:
		by = "the DP logistic regression"
	case rep.CellHistogram != nil:
		by = "the noisy cell histogram"
	}
	line := fmt.Sprintf("pate: %d public rows labelled by: %s %d, the student %d, nobody %d (%d queries put",
		q.PublicRows, by, teachers, student, nobody, q.Seen)
	if s := rep.Student; s != nil {
		line += fmt.Sprintf("; student %s trained on %d answers", s.Learner, s.TrainedOn)
	}
	return line + ")"
}

// writeTemp writes b, synced, to a file to be committed at path. Reports are
// readable by their owner only.
func writeTemp(path string, b []byte) (*atomicfile.File, error) {
	f, err := atomicfile.Create(path, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Abort()
		return nil, err
	}
	return f, nil
}

// progress draws a bar on stderr when stderr is a terminal ($PATE_PROGRESS
// "always" draws it on any stderr, say a CI log; "never" on none). The bar
// shows the answered queries and the ε spent, figures derived from the
// noise: once it has shown them (noisy), an interrupted run is charged
// what it had spent.
//
// Before the first public batch is labelled (reading, training, a model's
// release: tens of seconds on large inputs) the bar shows the run's stage
// (label.Phase) and is redrawn every progressTick, so that its clock runs
// from the first second.
type progress struct {
	bar       *progressbar.ProgressBar
	noisy     atomic.Bool
	streaming atomic.Bool
	stop      chan struct{}
	stopOnce  sync.Once

	mu      sync.Mutex
	last    time.Time      // when the figures were last drawn
	pending label.Progress // figures not drawn yet (throttled)
	dirty   bool
}

// progressThrottle is the least time between two redraws of the figures.
const progressThrottle = 100 * time.Millisecond

// progressTick is how often the bar is redrawn before the labelling draws
// it batch by batch.
const progressTick = 250 * time.Millisecond

// runProgress is the bar of a labelling run over total public rows: it
// follows cfg's progress and phases, and tells the ledger whether noisy
// figures were shown (lr may be nil). The caller finishes it.
func runProgress(c *cli.Context, e *env, cfg *label.Config, lr *ledgerRun, total int64) *progress {
	bar := newProgress(e, c.Bool("quiet") || c.Bool("json"), total)
	cfg.Progress = bar.update
	cfg.Phase = bar.phase
	if lr != nil {
		lr.noisyShown = bar.showedNoisy
	}
	return bar
}

func newProgress(e *env, off bool, total int64) *progress {
	f, ok := e.stderr.(*os.File)
	switch os.Getenv("PATE_PROGRESS") {
	case "always":
		off = off || !ok
	case "never":
		off = true
	default:
		off = off || !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("TERM") == "dumb"
	}
	if off {
		return &progress{}
	}
	if total <= 0 {
		total = -1
	}
	p := &progress{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(label.PhaseReading),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("rows"),
		progressbar.OptionClearOnFinish(),
	), stop: make(chan struct{})}
	_ = p.bar.RenderBlank()
	go p.tick()
	return p
}

// tick redraws the bar every progressTick until the labelling draws it or
// the run finishes.
func (p *progress) tick() {
	t := time.NewTicker(progressTick)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if p.streaming.Load() {
				return
			}
			_ = p.bar.RenderBlank()
		}
	}
}

// phase shows the run's stage, and its steps when it counts them.
func (p *progress) phase(s label.Phase) {
	if p.bar == nil {
		return
	}
	desc := s.Name
	if s.Total > 0 {
		desc = fmt.Sprintf("%s %d/%d", s.Name, s.Done, s.Total)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.streaming.Load() { // the labelling's figures, once drawn, stay
		p.bar.Describe(desc)
	}
}

func (p *progress) update(s label.Progress) {
	if p.bar == nil {
		return
	}
	p.streaming.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending, p.dirty = s, true
	if time.Since(p.last) >= progressThrottle {
		p.draw()
	}
}

// draw shows the pending figures (p.mu held). The ε is rounded up, so
// that the bar never shows less than was spent; where the figures derive
// from the noise, they are marked shown before they are drawn.
func (p *progress) draw() {
	s := p.pending
	if s.Public {
		p.bar.Describe(fmt.Sprintf("labelled by the model %d, ε %.3f on release", s.Answered, rdp.RoundUp(s.EpsilonSpent, 3)))
	} else {
		p.noisy.Store(true)
		p.bar.Describe(fmt.Sprintf("answered %d, ε spent %.3f", s.Answered, rdp.RoundUp(s.EpsilonSpent, 3)))
	}
	// The count after the figures: a count that completes the bar clears
	// it without drawing them.
	_ = p.bar.Set64(s.Rows)
	p.last, p.dirty = time.Now(), false
}

// showedNoisy reports whether the bar may have shown figures derived from
// the noise.
func (p *progress) showedNoisy() bool { return p.noisy.Load() }

// finish draws the last figures, which the throttle may have held back
// (the bar's last figure is then the run's), and clears the bar.
func (p *progress) finish() {
	if p.bar == nil {
		return
	}
	p.stopOnce.Do(func() {
		close(p.stop)
		p.mu.Lock()
		if p.dirty {
			p.draw()
		}
		p.mu.Unlock()
		_ = p.bar.Finish()
	})
}

// printAnalysis prints what pate analyze found (NOT PRIVATE).
func printAnalysis(w io.Writer, path string, votes [][]int64, p rdp.AnalyzeParams, res *rdp.AnalyzeResult) {
	fmt.Fprintf(w, "%s\n\n", notPrivate)
	fmt.Fprintf(w, "votes:                 %s (%d rows × %d classes; %d queries analysed)\n", path, len(votes), len(votes[0]), res.Queries)
	switch p.Accounting {
	case rdp.ThresholdGaussian:
		fmt.Fprintf(w, "mechanism:             %s (T = %g, σ1 = %g, σ2 = %g)\n", p.Mechanism, p.Threshold, p.Sigma1, p.Sigma2)
		fmt.Fprintf(w, "E[answered]:           %.2f\n", res.ExpectedAnswered)
	case rdp.Gaussian:
		fmt.Fprintf(w, "mechanism:             %s (σ = %g)\n", p.Mechanism, p.Sigma2)
	case rdp.Laplace:
		fmt.Fprintf(w, "mechanism:             %s (b = %g)\n", p.Mechanism, p.LaplaceScale)
	}
	fmt.Fprintf(w, "conversion:            %s, δ = %g\n", p.Conversion, p.Delta)
	fmt.Fprintf(w, "data-dependent ε:      %.6f at order %g (not private by itself)\n", res.EpsDataDependent, res.OrderDataDependent)
	fmt.Fprintf(w, "data-independent ε:    %.6f at order %g\n", res.EpsDataIndependent, res.OrderDataIndependent)
	if ss := res.SmoothSensitivity; ss != nil {
		fmt.Fprintf(w, "smooth-sensitivity ε:  %.3f ± %.3f (β = %.4g, σ_SS = %.4g, order %g; the paper's figure)\n", ss.Eps, ss.Std, ss.Beta, ss.SigmaSS, ss.Order)
		fmt.Fprintf(w, "                       %s\n", ssNotPrivate)
	}
}
