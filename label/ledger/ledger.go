package ledger

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

// ErrLifetimeExceeded is returned by Begin when the run's maximum spend would
// take the dataset's composed total past its lifetime ε. Nothing is written.
var ErrLifetimeExceeded = errors.New("ledger: lifetime privacy budget exceeded")

// ErrCorrupt marks a ledger file that cannot be read back.
var ErrCorrupt = errors.New("ledger: corrupt ledger file")

// Entry kinds.
const (
	KindBegin = "begin" // written before the first label of a run is released
	KindEnd   = "end"   // written when the run's realized spend is known
)

// Entry is one line of a dataset's ledger file.
type Entry struct {
	Kind    string    `json:"kind"`
	Run     string    `json:"run"`
	Time    time.Time `json:"time"`
	Dataset string    `json:"dataset"`
	// Begin entries.
	Labels         []string     `json:"labels,omitempty"`
	Mechanism      string       `json:"mechanism,omitempty"`
	MaxRho         *label.Float `json:"max_rho,omitempty"`
	Delta          label.Float  `json:"delta,omitempty"`
	DiscoveryDelta label.Float  `json:"discovery_delta,omitempty"`
	Epsilon        label.Float  `json:"epsilon,omitempty"`
	Seeded         bool         `json:"seeded,omitempty"`
	// End entries: the realized zCDP ρ.
	Rho *label.Float `json:"rho,omitempty"`
}

// DefaultDir is the ledger directory used when none is given: $PATE_LEDGER,
// else $XDG_DATA_HOME/pate/ledger, else ~/.local/share/pate/ledger.
func DefaultDir() (string, error) {
	if d := os.Getenv("PATE_LEDGER"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "pate", "ledger"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("ledger: no home directory for the default ledger (set PATE_LEDGER): %w", err)
	}
	return filepath.Join(home, ".local", "share", "pate", "ledger"), nil
}

// DatasetID identifies a sensitive dataset: the SHA-256 of its bytes and of
// its label column names, in hex. It is kept in the ledger only, never in
// released output.
func DatasetID(data io.Reader, labels []string) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, data); err != nil {
		return "", fmt.Errorf("ledger: hashing the sensitive data: %w", err)
	}
	sum := h.Sum(nil)
	h2 := sha256.New()
	h2.Write([]byte("pate-ledger-v1\x00"))
	h2.Write(sum)
	for _, l := range labels {
		h2.Write([]byte{0})
		h2.Write([]byte(l))
	}
	return hex.EncodeToString(h2.Sum(nil)), nil
}

// Ledger is a directory of append-only JSON-lines files, one per sensitive
// dataset.
type Ledger struct{ dir string }

// Open returns the ledger in dir, creating the directory (mode 0700).
func Open(dir string) (*Ledger, error) {
	if dir == "" {
		return nil, errors.New("ledger: empty directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return &Ledger{dir: dir}, nil
}

// Dir returns the ledger's directory.
func (l *Ledger) Dir() string { return l.dir }

func (l *Ledger) path(dataset string) string { return filepath.Join(l.dir, dataset+".jsonl") }

// BeginRequest describes a run about to start.
type BeginRequest struct {
	Dataset        string   // DatasetID of the sensitive data
	Labels         []string // label column names
	Mechanism      string
	MaxRho         float64 // the most the run can spend (zCDP ρ); +Inf when unbounded
	Delta          float64 // the run's δ
	DiscoveryDelta float64 // the part of δ spent on releasing the class set
	Epsilon        float64 // the run's claimed ε (information)
	Seeded         bool
}

// Run is a run recorded by Begin, to be closed by End.
type Run struct {
	l       *Ledger
	id      string
	dataset string
}

// ID returns the run's identifier in the ledger.
func (r *Run) ID() string { return r.id }

// Begin records a run before it releases anything (write-ahead). With
// lifetime > 0 it first checks, under an exclusive lock on the dataset's
// file held until the entry is on disk, that the dataset's composed total
// with this run's maximum spend stays within lifetime (see Total); if not,
// it writes nothing and returns an error wrapping ErrLifetimeExceeded.
func (l *Ledger) Begin(req BeginRequest, lifetime float64) (*Run, error) {
	if len(req.Dataset) != 64 {
		return nil, fmt.Errorf("ledger: bad dataset id %q", req.Dataset)
	}
	if !(req.MaxRho >= 0) || !(req.Delta > 0 && req.Delta < 1) {
		return nil, fmt.Errorf("ledger: bad run spend ρ = %g, δ = %g", req.MaxRho, req.Delta)
	}
	id, err := newRunID()
	if err != nil {
		return nil, err
	}
	mr := label.Float(req.MaxRho)
	e := Entry{Kind: KindBegin, Run: id, Time: time.Now().UTC(), Dataset: req.Dataset, Labels: req.Labels,
		Mechanism: req.Mechanism, MaxRho: &mr, Delta: label.Float(req.Delta),
		DiscoveryDelta: label.Float(req.DiscoveryDelta), Epsilon: label.Float(req.Epsilon), Seeded: req.Seeded}
	err = l.locked(req.Dataset, func(f *os.File, entries []Entry) error {
		if lifetime > 0 {
			d := summarize(req.Dataset, entries)
			rho := d.Rho + req.MaxRho
			dd := d.DiscoveryDelta + req.DiscoveryDelta
			eps := Total(rho, req.Delta, dd)
			if !(eps <= lifetime) {
				return fmt.Errorf("%w: this run may spend ρ = %.6g; with the %d run(s) recorded (ρ = %.6g) the dataset would be at ε = %.6g at δ = %g, past its lifetime ε = %g",
					ErrLifetimeExceeded, req.MaxRho, len(d.Runs), d.Rho, eps, req.Delta, lifetime)
			}
		}
		return appendEntry(f, e)
	})
	if err != nil {
		return nil, err
	}
	return &Run{l: l, id: id, dataset: req.Dataset}, nil
}

// End records the run's realized spend (zCDP ρ).
func (r *Run) End(rho float64) error {
	if !(rho >= 0) {
		return fmt.Errorf("ledger: bad realized spend %g", rho)
	}
	v := label.Float(rho)
	e := Entry{Kind: KindEnd, Run: r.id, Time: time.Now().UTC(), Dataset: r.dataset, Rho: &v}
	return r.l.locked(r.dataset, func(f *os.File, _ []Entry) error { return appendEntry(f, e) })
}

// Total is the ε of the composed spend of a dataset's runs, at δ: zCDP ρ
// adds up over runs (the RDP curves ρλ add), the δ spent on class
// discoveries adds up too, and the sum converts at δ minus those (improved
// conversion, best order). It is +Inf when the discoveries used up δ.
func Total(rho, delta, discoveryDelta float64) float64 {
	d := delta - discoveryDelta
	if !(d > 0 && d < 1) || math.IsInf(rho, 1) {
		return math.Inf(1)
	}
	return rdp.RoundUp(rdp.ZCDPEps(rho, d), 6)
}

// locked opens the dataset's file, takes an exclusive flock, reads every
// entry and calls fn with the file positioned for appending.
func (l *Ledger) locked(dataset string, fn func(f *os.File, entries []Entry) error) error {
	p := l.path(dataset)
	_, statErr := os.Stat(p)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	if errors.Is(statErr, os.ErrNotExist) {
		if err := syncDir(l.dir); err != nil {
			return err
		}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("ledger: locking %s: %w", p, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	b, err := io.ReadAll(io.NewSectionReader(f, 0, math.MaxInt64))
	if err != nil {
		return fmt.Errorf("ledger: reading %s: %w", p, err)
	}
	entries, torn, err := parse(b)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if torn {
		// A crash tore the last line before it was synced: the run it
		// would have begun never started. Cut it off so the next is whole.
		if err := f.Truncate(int64(bytes.LastIndexByte(b, '\n') + 1)); err != nil {
			return fmt.Errorf("ledger: cutting a torn line off %s: %w", p, err)
		}
	}
	return fn(f, entries)
}

func appendEntry(f *os.File, e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("ledger: writing: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("ledger: fsync: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("ledger: fsync %s: %w", dir, err)
	}
	return nil
}

// parse reads JSON lines. A last line without its newline is torn (it was
// never synced whole) and is skipped; any other unreadable line is an error.
func parse(b []byte) (entries []Entry, torn bool, err error) {
	lines := bytes.Split(b, []byte("\n"))
	last := len(lines) - 1
	for i, ln := range lines {
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(ln, &e); err != nil || (e.Kind != KindBegin && e.Kind != KindEnd) {
			if i == last {
				return entries, true, nil
			}
			return nil, false, fmt.Errorf("%w: line %d", ErrCorrupt, i+1)
		}
		entries = append(entries, e)
	}
	return entries, len(lines[last]) > 0, nil
}

func newRunID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("ledger: run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// RunSummary is one run of a dataset.
type RunSummary struct {
	Run       string    `json:"run"`
	Started   time.Time `json:"started"`
	Mechanism string    `json:"mechanism"`
	Epsilon   float64   `json:"epsilon"`
	Delta     float64   `json:"delta"`
	MaxRho    float64   `json:"max_rho"`
	// Finished runs charge their realized ρ; unfinished ones (crashed,
	// killed, failed, or still running) their maximum.
	Finished bool    `json:"finished"`
	Rho      float64 `json:"rho"`
	Charged  float64 `json:"charged_rho"`
	Seeded   bool    `json:"seeded,omitempty"`
}

// Dataset is the composed spend of one sensitive dataset.
type Dataset struct {
	ID             string       `json:"dataset"`
	Labels         []string     `json:"labels"`
	Runs           []RunSummary `json:"runs"`
	Rho            float64      `json:"rho"`
	DiscoveryDelta float64      `json:"discovery_delta"`
	// Epsilon is Total(Rho, Delta, DiscoveryDelta) at Delta, the largest δ
	// of its runs.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// MarshalJSON encodes +Inf as "inf".
func (d Dataset) MarshalJSON() ([]byte, error) {
	type plain Dataset
	return json.Marshal(struct {
		plain
		Rho     label.Float `json:"rho"`
		Epsilon label.Float `json:"epsilon"`
	}{plain(d), label.Float(d.Rho), label.Float(d.Epsilon)})
}

// MarshalJSON encodes +Inf as "inf".
func (r RunSummary) MarshalJSON() ([]byte, error) {
	type plain RunSummary
	return json.Marshal(struct {
		plain
		MaxRho  label.Float `json:"max_rho"`
		Charged label.Float `json:"charged_rho"`
	}{plain(r), label.Float(r.MaxRho), label.Float(r.Charged)})
}

func summarize(id string, entries []Entry) *Dataset {
	d := &Dataset{ID: id}
	idx := map[string]int{}
	for _, e := range entries {
		switch e.Kind {
		case KindBegin:
			if len(d.Labels) == 0 {
				d.Labels = e.Labels
			}
			mr := math.Inf(1)
			if e.MaxRho != nil {
				mr = float64(*e.MaxRho)
			}
			idx[e.Run] = len(d.Runs)
			d.Runs = append(d.Runs, RunSummary{Run: e.Run, Started: e.Time, Mechanism: e.Mechanism,
				Epsilon: float64(e.Epsilon), Delta: float64(e.Delta), MaxRho: mr, Charged: mr, Seeded: e.Seeded})
			d.DiscoveryDelta += float64(e.DiscoveryDelta)
			d.Delta = math.Max(d.Delta, float64(e.Delta))
		case KindEnd:
			i, ok := idx[e.Run]
			if !ok || e.Rho == nil {
				continue
			}
			r := &d.Runs[i]
			r.Finished, r.Rho = true, float64(*e.Rho)
			r.Charged = math.Min(r.Rho, r.MaxRho)
		}
	}
	for _, r := range d.Runs {
		d.Rho += r.Charged
	}
	if d.Delta > 0 {
		d.Epsilon = Total(d.Rho, d.Delta, d.DiscoveryDelta)
	}
	return d
}

// Dataset reads the composed spend of one dataset (an empty summary when
// the ledger has no run of it).
func (l *Ledger) Dataset(id string) (*Dataset, error) {
	b, err := os.ReadFile(l.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return &Dataset{ID: id}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	entries, _, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.path(id), err)
	}
	return summarize(id, entries), nil
}

// Datasets lists every dataset of the ledger, by id.
func (l *Ledger) Datasets() ([]*Dataset, error) {
	des, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	var out []*Dataset
	for _, de := range des {
		name := de.Name()
		if de.IsDir() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		d, err := l.Dataset(strings.TrimSuffix(name, ".jsonl"))
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Entries reads the raw entries of one dataset.
func (l *Ledger) Entries(id string) ([]Entry, error) {
	f, err := os.Open(l.path(id))
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	e, _, err := parse(b)
	return e, err
}
