package ledger

import (
	"bufio"
	"bytes"
	"crypto/hmac"
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
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/pate-tool/pate/io/atomicfile"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/label/report"
)

// ErrLifetimeExceeded is returned by Begin when the run's maximum spend would
// take the dataset's composed total past its lifetime ε. Nothing is written.
var ErrLifetimeExceeded = errors.New("ledger: lifetime privacy budget exceeded")

// ErrMixedUnits is returned by Begin, under a lifetime, when the run's
// privacy unit is not the one of the runs already recorded on the dataset:
// runs protecting different units do not compose into one (ε, δ) figure
// (one unit of many rows is not a neighbour of one row, nor the other way
// round). Nothing is written.
var ErrMixedUnits = errors.New("ledger: runs of different privacy units do not compose into one figure")

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
	// Name is the dataset's name when the user gave one (--dataset): a
	// label of the user's, shown by pate ledger show.
	Name           string        `json:"name,omitempty"`
	Labels         []string      `json:"labels,omitempty"`
	Mechanism      string        `json:"mechanism,omitempty"`
	MaxRho         *report.Float `json:"max_rho,omitempty"`
	Delta          report.Float  `json:"delta,omitempty"`
	DiscoveryDelta report.Float  `json:"discovery_delta,omitempty"`
	// FailureDelta is the part of Delta that is a failure probability
	// (class discovery, svt's stable release) rather than the zCDP
	// conversion's share. Absent in ledgers written before it was
	// recorded: see failureDelta.
	FailureDelta *report.Float `json:"failure_delta,omitempty"`
	Epsilon      report.Float  `json:"epsilon,omitempty"`
	Seeded       bool          `json:"seeded,omitempty"`
	// SeedCommit is the seed's keyed commitment (see Ledger.withSeed).
	SeedCommit string `json:"seed_commitment,omitempty"`
	// PureMax, for a run of pure ε-DP events with nothing else (no class
	// discovery): at its maximum the run is either PureMax.Rho-zCDP or
	// PureMax.Epsilon-DP by basic composition, whichever its cap used.
	PureMax *PureMax `json:"pure_max,omitempty"`
	// Content is the content identity of the data when the dataset is
	// named (--dataset): a check of what each run actually read.
	Content string `json:"content,omitempty"`
	// PrivacyUnit is the column whose value is one privacy unit of the
	// run; "" (and ledgers written before it was recorded): one row.
	PrivacyUnit string `json:"privacy_unit,omitempty"`
	// MaxOrder, when > 0, says that the run's ρ holds on the Rényi orders
	// 2..MaxOrder only (private-knn's subsampled Gaussian): the ledger
	// converts it, alone or composed, on those orders only. 0: every
	// order (zCDP). See maxOrder for entries written before it was
	// recorded.
	MaxOrder int `json:"max_order,omitempty"`
	// End entries: the mechanism that ran (Ran: a begin entry written
	// before the run chose one names its candidates), the realized zCDP ρ
	// and, for a run of pure events, how many of which ε (ρ is then their
	// ε²/2 each plus any zCDP part).
	Ran          string        `json:"ran,omitempty"`
	Rho          *report.Float `json:"rho,omitempty"`
	PureEvents   int64         `json:"pure_events,omitempty"`
	EventEpsilon report.Float  `json:"event_epsilon,omitempty"`
}

// PureMax is the maximum of a run of pure events: see Entry.PureMax.
type PureMax struct {
	Epsilon report.Float `json:"epsilon"`
	Rho     report.Float `json:"rho"`
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
	Name           string   // the dataset's name, when named (Session sets it)
	Labels         []string // label column names
	Mechanism      string
	MaxRho         float64 // the most the run can spend (zCDP ρ); +Inf when unbounded
	Delta          float64 // the run's δ
	DiscoveryDelta float64 // the part of δ spent on releasing the class set
	// FailureDelta is every part of δ that is a failure probability rather
	// than the conversion's share: the class discovery's and svt's
	// stable-release failure. It includes DiscoveryDelta.
	FailureDelta float64
	// Epsilon is the run's claimed ε when > 0: the budget its filter
	// enforces, a guarantee at Delta that holds however the run ends; the
	// ledger composes it by basic composition (0: no claim).
	Epsilon float64
	// Seed is the secret that seeds the run's partition and noise (--seed,
	// or the key of --replicable), nil for a run drawing from the secure
	// source. Only a keyed commitment of it is written (see Begin).
	Seed        []byte
	Content     string // see Entry.Content
	PrivacyUnit string // see Entry.PrivacyUnit
	// Warn, when set, receives a warning for the local user: the rows of a
	// named dataset differ from those its earlier runs read.
	Warn func(string)
	// PureMaxEpsilon and PureMaxRho: see Entry.PureMax (0: not such a run).
	PureMaxEpsilon, PureMaxRho float64
	// MaxOrder: see Entry.MaxOrder (0: the run's ρ holds at every order).
	MaxOrder int
	// LifetimeDelta, when > 0, refuses the run when the dataset's summed
	// δ with it would pass it (ErrLifetimeExceeded), as a lifetime ε does
	// for ε: every run adds its δ.
	LifetimeDelta float64
}

// Run is a run recorded by Begin, to be closed by End.
type Run struct {
	l       *Ledger
	id      string
	dataset string
	// Ran, when set before End, names the mechanism that ran (the begin
	// entry may name the candidates of a choice).
	Ran string
}

// ID returns the run's identifier in the ledger.
func (r *Run) ID() string { return r.id }

// ErrSeedReused is returned by Begin when the run's seed (or --replicable
// key) was already used by a run recorded in the same ledger directory,
// whatever its dataset. Nothing is written.
var ErrSeedReused = errors.New("ledger: this seed was already used by a recorded run")

// Begin records a run before it releases anything (write-ahead). With
// lifetime > 0 it first checks, under an exclusive lock on the dataset's
// file held until the entry is on disk, that the dataset's composed total
// with this run's maximum spend stays within lifetime (see Total); if not,
// it writes nothing and returns an error wrapping ErrLifetimeExceeded. A
// seeded run (req.Seed) is refused with ErrSeedReused when a run recorded
// in this ledger directory used the same seed.
func (l *Ledger) Begin(req BeginRequest, lifetime float64) (*Run, error) {
	if len(req.Dataset) != 64 {
		return nil, fmt.Errorf("ledger: bad dataset id %q", req.Dataset)
	}
	if !(req.MaxRho >= 0) || !(req.Delta > 0 && req.Delta < 1) {
		return nil, fmt.Errorf("ledger: bad run spend ρ = %g, δ = %g", req.MaxRho, req.Delta)
	}
	if req.MaxOrder != 0 && req.MaxOrder < 2 {
		return nil, fmt.Errorf("ledger: a charge on the Rényi orders 2..%d covers no order", req.MaxOrder)
	}
	fd := math.Max(req.FailureDelta, req.DiscoveryDelta)
	if !(fd >= 0 && fd < req.Delta) {
		return nil, fmt.Errorf("ledger: bad failure δ %g of a run at δ %g", fd, req.Delta)
	}
	id, err := newRunID()
	if err != nil {
		return nil, err
	}
	mr, fdv := report.Float(req.MaxRho), report.Float(fd)
	if !(req.LifetimeDelta >= 0 && req.LifetimeDelta < 1) {
		return nil, fmt.Errorf("ledger: bad lifetime δ %g", req.LifetimeDelta)
	}
	e := Entry{Kind: KindBegin, Run: id, Time: time.Now().UTC(), Dataset: req.Dataset, Name: req.Name, Labels: req.Labels,
		Mechanism: req.Mechanism, MaxRho: &mr, Delta: report.Float(req.Delta),
		DiscoveryDelta: report.Float(req.DiscoveryDelta), FailureDelta: &fdv, Epsilon: report.Float(req.Epsilon),
		Seeded: req.Seed != nil, Content: req.Content, PrivacyUnit: req.PrivacyUnit, MaxOrder: req.MaxOrder}
	if req.PureMaxEpsilon > 0 {
		if !(req.PureMaxRho > 0 && req.PureMaxRho <= req.MaxRho) {
			return nil, fmt.Errorf("ledger: bad pure maximum ρ %g for a run of maximum ρ %g", req.PureMaxRho, req.MaxRho)
		}
		e.PureMax = &PureMax{Epsilon: report.Float(req.PureMaxEpsilon), Rho: report.Float(req.PureMaxRho)}
	}
	begin := func() error {
		return l.locked(req.Dataset, func(f *os.File, entries []Entry) error {
			if changed := contentChanged(entries, req.Content); changed > 0 && req.Warn != nil {
				req.Warn(fmt.Sprintf("the rows this run read differ from those of %d earlier run(s) recorded under the same dataset name: "+
					"the ledger composes them as one dataset, as named (if they are another dataset, give it another name)", changed))
			}
			if unit := otherUnit(entries, req.PrivacyUnit); lifetime > 0 && unit != nil {
				return fmt.Errorf("%w: this run protects %s, the dataset's recorded runs %s; its lifetime cannot be checked across them",
					ErrMixedUnits, UnitName(req.PrivacyUnit), UnitName(*unit))
			}
			if lifetime > 0 || req.LifetimeDelta > 0 {
				d := summarize(req.Dataset, append(entries[:len(entries):len(entries)], e))
				eps, delta := d.Epsilon, d.Delta
				d = summarize(req.Dataset, entries)
				past := ""
				switch {
				case lifetime > 0 && !(eps <= lifetime):
					past = fmt.Sprintf("past its lifetime ε = %g", lifetime)
				case req.LifetimeDelta > 0 && !(delta <= req.LifetimeDelta*(1+1e-12)):
					past = fmt.Sprintf("past its lifetime δ = %g", req.LifetimeDelta)
				}
				if past != "" {
					return fmt.Errorf("%w: this run may spend ρ = %.6g at δ = %g; with the %d run(s) recorded (ρ = %.6g, δ = %g) the dataset would be at ε = %.6g at δ = %g, %s (%s)",
						ErrLifetimeExceeded, req.MaxRho, req.Delta, len(d.Runs), d.Rho, d.Delta, eps, delta, past, HowTotalsCompose)
				}
			}
			return appendEntry(f, e)
		})
	}
	if req.Seed != nil {
		err = l.withSeed(req.Seed, func(commit string) error {
			e.SeedCommit = commit
			return begin()
		})
	} else {
		err = begin()
	}
	if err != nil {
		return nil, err
	}
	return &Run{l: l, id: id, dataset: req.Dataset}, nil
}

// contentChanged counts the begin entries of a named dataset whose content
// identity is not content ("" : not named).
func contentChanged(entries []Entry, content string) int {
	n := 0
	for _, e := range entries {
		if content != "" && e.Kind == KindBegin && e.Content != "" && e.Content != content {
			n++
		}
	}
	return n
}

// otherUnit returns a privacy unit of a begin entry that is not unit, or
// nil.
func otherUnit(entries []Entry, unit string) *string {
	for _, e := range entries {
		if e.Kind == KindBegin && e.PrivacyUnit != unit {
			return &e.PrivacyUnit
		}
	}
	return nil
}

// UnitName says what a privacy unit is: "one row", or "one value of COL".
func UnitName(unit string) string {
	if unit == "" {
		return "one row"
	}
	return "one value of " + unit
}

// End records the run's realized spend (zCDP ρ).
func (r *Run) End(rho float64) error { return r.EndPure(rho, 0, 0) }

// EndPure records the realized spend of a run of pure events: ρ in all
// (events·eps0²/2 plus any zCDP part), and events events of eps0-DP.
func (r *Run) EndPure(rho float64, events int64, eps0 float64) error {
	if !(rho >= 0) || events < 0 || events > 0 && !(eps0 > 0 && !math.IsInf(eps0, 1)) {
		return fmt.Errorf("ledger: bad realized spend ρ %g (%d events of ε %g)", rho, events, eps0)
	}
	v := report.Float(rho)
	e := Entry{Kind: KindEnd, Run: r.id, Time: time.Now().UTC(), Dataset: r.dataset, Rho: &v, Ran: r.Ran}
	if events > 0 {
		e.PureEvents, e.EventEpsilon = events, report.Float(eps0)
	}
	return r.l.locked(r.dataset, func(f *os.File, _ []Entry) error { return appendEntry(f, e) })
}

// HowTotalsCompose says in a line how a dataset's total composes, for the
// messages that show one.
const HowTotalsCompose = "runs compose by zCDP: their ρ add up and convert to ε at the sum of their δs, " +
	"so n runs at ε each total about √n·ε at n·δ, not n·ε; --lifetime-delta caps the δ"

// Path returns the file the run is recorded in.
func (r *Run) Path() string { return r.l.path(r.dataset) }

// Total is the ε of the composed spend of a dataset's runs at delta, the
// sum of the δs of the runs: their zCDP ρ add up (the RDP curves ρλ add),
// their failure δs (class discovery, svt's stable release) add up, and ρ
// converts at what is left of delta (improved conversion, best order). It
// is +Inf when nothing is left.
func Total(rho, delta, failureDelta float64) float64 {
	return TotalWithin(rho, delta, failureDelta, rdp.Unbounded)
}

// TotalWithin is Total for a ρ that holds on the Rényi orders 2..maxOrder
// only (maxOrder 0: every order): the conversion reads the best order of
// that range, never one outside it (rdp.ZCDPEpsWithin).
func TotalWithin(rho, delta, failureDelta float64, maxOrder int) float64 {
	d := delta - failureDelta
	if !(d > 0 && d < 1) || math.IsInf(rho, 1) {
		return math.Inf(1)
	}
	e, _ := rdp.ZCDPEpsWithin(rho, d, float64(maxOrder))
	return rdp.RoundUp(e, 6)
}

// seedsFile holds the commitments of the seeds used in a ledger directory,
// one hex line each; keyFile the directory's secret key of them and of the
// dataset file names.
const (
	seedsFile = "seeds"
	keyFile   = "key"
)

// Key maps a dataset identity (ContentHash, NamedID) to its name in this
// ledger: an HMAC-SHA256 of it under the directory's secret key. The file
// names, the entries and what pate prints (the path of the file) then say
// nothing about the data to whoever lacks the key; a bare content hash would
// let anyone who can list the candidate datasets (D, or D with one more
// row) test which one it is.
func (l *Ledger) Key(identity string) (string, error) {
	key, err := l.key()
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("pate-dataset-v1\x00"))
	m.Write([]byte(identity))
	return hex.EncodeToString(m.Sum(nil)), nil
}

// withSeed refuses a seed whose commitment is in the directory's seeds
// file, and otherwise records it (synced) and calls fn under the file's
// lock; if fn fails the commitment is taken back. The commitment is an
// HMAC-SHA256 of the seed under a random key kept in the directory (mode
// 0600): the ledger never holds the seed itself, and the same seed leaves
// unrelated marks in two ledgers. A crash after the commitment is written
// leaves the seed spent, never the other way round.
func (l *Ledger) withSeed(seed []byte, fn func(commit string) error) error {
	key, err := l.key()
	if err != nil {
		return err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("pate-seed-v1\x00"))
	m.Write(seed)
	commit := hex.EncodeToString(m.Sum(nil))
	p := filepath.Join(l.dir, seedsFile)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("ledger: locking %s: %w", p, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	b, err := io.ReadAll(io.NewSectionReader(f, 0, math.MaxInt64))
	if err != nil {
		return fmt.Errorf("ledger: reading %s: %w", p, err)
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(ln) == commit {
			return fmt.Errorf("%w (in %s): a seed shared by two runs on neighbouring data makes their noise cancel out (ε = ∞); use a fresh seed, or none", ErrSeedReused, l.dir)
		}
	}
	size := int64(len(b))
	if size > 0 && b[size-1] != '\n' { // a torn line: cut it off
		if err := f.Truncate(int64(bytes.LastIndexByte(b, '\n') + 1)); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		size = int64(bytes.LastIndexByte(b, '\n') + 1)
	}
	if _, err := f.WriteString(commit + "\n"); err != nil {
		return fmt.Errorf("ledger: writing %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("ledger: fsync: %w", err)
	}
	if err := fn(commit); err != nil {
		if terr := f.Truncate(size); terr != nil {
			return errors.Join(err, fmt.Errorf("ledger: taking back a seed commitment: %w", terr))
		}
		return err
	}
	return nil
}

// key returns the directory's secret key, creating it once
// (written whole under a temporary name, then linked into place, so that
// concurrent runs agree on one key).
func (l *Ledger) key() ([]byte, error) {
	p := filepath.Join(l.dir, keyFile)
	if b, err := os.ReadFile(p); err == nil && len(b) == 32 {
		return b, nil
	}
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, fmt.Errorf("ledger: key: %w", err)
	}
	tmp, err := atomicfile.Create(p, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer tmp.Abort() // after CommitNew it does nothing
	if _, err := tmp.Write(k[:]); err != nil {
		return nil, fmt.Errorf("ledger: key: %w", err)
	}
	if err := tmp.CommitNew(); errors.Is(err, os.ErrExist) {
		// Another run created the key first: use its key.
	} else if err != nil {
		return nil, fmt.Errorf("ledger: key: %w", err)
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("ledger: key %s unreadable or not 32 bytes: %v", p, err)
	}
	return b, nil
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
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("ledger: %w", err)
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
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
	// Mechanism is the mechanism that ran, when the run said at its end;
	// else its begin entry's (candidates joined by "|" for a run that had
	// yet to choose).
	Mechanism string   `json:"mechanism"`
	Labels    []string `json:"labels,omitempty"`
	Epsilon   float64  `json:"epsilon"`
	Delta     float64  `json:"delta"`
	// FailureDelta is the part of Delta that is a failure probability.
	FailureDelta float64 `json:"failure_delta"`
	MaxRho       float64 `json:"max_rho"`
	// Finished runs charge their realized ρ; unfinished ones (crashed,
	// killed, failed, or still running) their maximum. A finished run that
	// released nothing (ρ = 0) charges no δ either.
	Finished bool    `json:"finished"`
	Rho      float64 `json:"rho"`
	Charged  float64 `json:"charged_rho"`
	Seeded   bool    `json:"seeded,omitempty"`
	// PrivacyUnit: see Entry.PrivacyUnit.
	PrivacyUnit string `json:"privacy_unit,omitempty"`
	// MaxOrder, when > 0: the run's ρ holds on the Rényi orders
	// 2..MaxOrder only (see Entry.MaxOrder).
	MaxOrder int `json:"max_order,omitempty"`
	// A run of pure events: its maximum (PureMax), and when it ended, its
	// events and their ε.
	PureMax      *PureMax `json:"pure_max,omitempty"`
	PureEvents   int64    `json:"pure_events,omitempty"`
	EventEpsilon float64  `json:"event_epsilon,omitempty"`
}

// curve adds the run's RDP curve at orders to total, and returns the ε
// of the run alone at its own δ, for basic composition: the smallest of its
// claim (the budget its filter enforced, when it made one), its charged ρ
// converted at its δ less its failure δ (on its orders), and, when it ended
// with pure events only, their summed ε. A run that ended with n events of
// ε0 and a zCDP part ρ0 has the curve n·min(ε0, λε0²/2) + λρ0; one without
// an end entry that declared a pure maximum, max(λρ_B, min(ε, λε²/2)) (its
// cap is one or the other); any other, λρ — on the orders 2..MaxOrder
// only when its charge is bounded there, +Inf (nothing known) above.
func (r RunSummary) curve(orders, total []float64) (basic float64) {
	basic = TotalWithin(r.Charged, r.Delta, r.FailureDelta, r.MaxOrder)
	if r.Epsilon > 0 && r.Epsilon < basic {
		basic = r.Epsilon
	}
	switch {
	case r.Finished && r.PureEvents > 0:
		n := float64(r.PureEvents)
		rho0 := math.Max(0, r.Charged-n*rdp.PureDPRho(r.EventEpsilon))
		if rho0 <= 1e-12*r.Charged {
			rho0, basic = 0, math.Min(basic, n*r.EventEpsilon)
		}
		for i, v := range rdp.PureDP(r.EventEpsilon, orders) {
			total[i] += n*v + rho0*orders[i]
		}
	case !r.Finished && r.PureMax != nil:
		e, rb := float64(r.PureMax.Epsilon), float64(r.PureMax.Rho)
		for i, v := range rdp.PureDP(e, orders) {
			total[i] += math.Max(rb*orders[i], v)
		}
	default:
		for i, o := range orders {
			if r.MaxOrder > 0 && !(o >= 2 && o <= float64(r.MaxOrder)) {
				total[i] = math.Inf(1)
				continue
			}
			total[i] += r.Charged * o
		}
	}
	return basic
}

// charged reports whether the run counts in the composition, and with
// which δ and failure δ.
func (r RunSummary) charged() (delta, failure float64) {
	if r.Finished && r.Charged == 0 {
		return 0, 0
	}
	return r.Delta, r.FailureDelta
}

// Dataset is the composed spend of one sensitive dataset.
type Dataset struct {
	ID string `json:"dataset"`
	// Name is the name the user gave it (--dataset), "" when unnamed (or
	// recorded before names were).
	Name string `json:"name,omitempty"`
	// Named says that the dataset is a name the user gave (--dataset):
	// its runs compose whatever rows they read. Otherwise it is one exact
	// multiset of rows, and a near copy is another dataset.
	Named bool `json:"named"`
	// Labels are the label columns its runs named (any: the ledger
	// composes every run on the data, whatever its labels).
	Labels []string     `json:"labels"`
	Runs   []RunSummary `json:"runs"`
	Rho    float64      `json:"rho"`
	// Delta is the sum of the δs of the charged runs, FailureDelta the sum
	// of their failure δs.
	Delta        float64 `json:"delta"`
	FailureDelta float64 `json:"failure_delta"`
	// Epsilon is the composed ε of the runs at Delta (see compose): the
	// dataset has had at most (Epsilon, Delta)-DP spent on it. When its
	// runs protect different privacy units (Units) no one figure holds:
	// Epsilon is then +Inf, and each unit's runs are composed apart.
	Epsilon float64 `json:"epsilon"`
	// Units are the totals per privacy unit, when the runs protect more
	// than one (nil otherwise: the dataset's own figures are the unit's).
	Units []UnitTotal `json:"units,omitempty"`
	// MaxOrder: see UnitTotal.MaxOrder (one unit's; 0 when several).
	MaxOrder int `json:"max_order,omitempty"`
}

// UnitTotal is the composed spend of the runs of one privacy unit.
type UnitTotal struct {
	PrivacyUnit  string  `json:"privacy_unit"` // "" : one row
	Runs         int     `json:"runs"`
	Rho          float64 `json:"rho"`
	Delta        float64 `json:"delta"`
	FailureDelta float64 `json:"failure_delta"`
	Epsilon      float64 `json:"epsilon"`
	// MaxOrder, when > 0: Rho holds on the Rényi orders 2..MaxOrder only
	// (a charged run's ρ does), and Epsilon was read there.
	MaxOrder int `json:"max_order,omitempty"`
}

// MarshalJSON encodes +Inf as "inf".
func (u UnitTotal) MarshalJSON() ([]byte, error) {
	type plain UnitTotal
	return json.Marshal(struct {
		plain
		Rho     report.Float `json:"rho"`
		Epsilon report.Float `json:"epsilon"`
	}{plain(u), report.Float(u.Rho), report.Float(u.Epsilon)})
}

// MarshalJSON encodes +Inf as "inf".
func (d Dataset) MarshalJSON() ([]byte, error) {
	type plain Dataset
	return json.Marshal(struct {
		plain
		Rho     report.Float `json:"rho"`
		Epsilon report.Float `json:"epsilon"`
	}{plain(d), report.Float(d.Rho), report.Float(d.Epsilon)})
}

// MarshalJSON encodes +Inf as "inf".
func (r RunSummary) MarshalJSON() ([]byte, error) {
	type plain RunSummary
	return json.Marshal(struct {
		plain
		MaxRho  report.Float `json:"max_rho"`
		Rho     report.Float `json:"rho"`
		Charged report.Float `json:"charged_rho"`
	}{plain(r), report.Float(r.MaxRho), report.Float(r.Rho), report.Float(r.Charged)})
}

// svtDeltaShare is the share of its δ that an svt run spends on its
// stable-release failure; ledgers written before failure δs were recorded
// left it out.
const svtDeltaShare = 0.5

// legacySVT is the name svt runs were recorded under before begin entries
// said their failure δ (FailureDelta): svt was then the only mechanism
// whose guarantee could fail outright, with a share svtDeltaShare of δ.
const legacySVT = "svt"

// knnMechanism is the name of the mechanism whose begin entries, before
// they recorded MaxOrder, held a ρ bounded in its orders.
const knnMechanism = "private-knn"

// maxOrder is the orders a begin entry's ρ holds on (see Entry.MaxOrder).
// An entry of private-knn written before the orders were recorded gets
// them re-derived as the run set them: the order at which its budget
// (ε, δ) converts, rounded up; at least 2, and 2 when it claimed no ε
// (order 2 is covered by every such charge: a valid, if loose, reading).
func maxOrder(e Entry) int {
	if e.MaxOrder > 0 || !slices.Contains(strings.Split(e.Mechanism, "|"), knnMechanism) {
		return e.MaxOrder
	}
	eps, delta := float64(e.Epsilon), float64(e.Delta)
	if !(eps > 0) || !(delta > 0 && delta < 1) {
		return 2
	}
	o := math.Ceil(rdp.ZCDPOrder(rdp.RhoForEps(eps, delta), delta))
	if !(o >= 2) || o > rdp.SGMMaxOrder {
		return 2
	}
	return int(o)
}

// failureDelta is the failure δ of a begin entry.
func failureDelta(e Entry) float64 {
	if e.FailureDelta != nil {
		return float64(*e.FailureDelta)
	}
	fd := float64(e.DiscoveryDelta)
	if e.Mechanism == legacySVT {
		fd += svtDeltaShare * float64(e.Delta)
	}
	return fd
}

func summarize(id string, entries []Entry) *Dataset {
	d := &Dataset{ID: id}
	idx := map[string]int{}
	labels := map[string]bool{}
	for _, e := range entries {
		switch e.Kind {
		case KindBegin:
			d.Named = d.Named || e.Content != "" || e.Name != ""
			if d.Name == "" {
				d.Name = e.Name
			}
			for _, l := range e.Labels {
				if !labels[l] {
					labels[l] = true
					d.Labels = append(d.Labels, l)
				}
			}
			mr := math.Inf(1)
			if e.MaxRho != nil {
				mr = float64(*e.MaxRho)
			}
			idx[e.Run] = len(d.Runs)
			d.Runs = append(d.Runs, RunSummary{Run: e.Run, Started: e.Time, Mechanism: e.Mechanism, Labels: e.Labels,
				Epsilon: float64(e.Epsilon), Delta: float64(e.Delta), FailureDelta: failureDelta(e),
				MaxRho: mr, Charged: mr, Seeded: e.Seeded, PureMax: e.PureMax, PrivacyUnit: e.PrivacyUnit,
				MaxOrder: maxOrder(e)})
		case KindEnd:
			i, ok := idx[e.Run]
			if !ok || e.Rho == nil {
				continue
			}
			r := &d.Runs[i]
			r.Finished, r.Rho = true, float64(*e.Rho)
			if e.Ran != "" {
				r.Mechanism = e.Ran
			}
			r.Charged = math.Min(r.Rho, r.MaxRho)
			if r.Charged == r.Rho {
				r.PureEvents, r.EventEpsilon = e.PureEvents, float64(e.EventEpsilon)
			}
		}
	}
	sort.Strings(d.Labels)
	var units []string
	byUnit := map[string][]RunSummary{}
	for _, r := range d.Runs {
		if _, ok := byUnit[r.PrivacyUnit]; !ok {
			units = append(units, r.PrivacyUnit)
		}
		byUnit[r.PrivacyUnit] = append(byUnit[r.PrivacyUnit], r)
	}
	sort.Strings(units)
	for _, u := range units {
		t := composeRuns(byUnit[u])
		t.PrivacyUnit = u
		d.Units = append(d.Units, t)
		d.Rho += t.Rho
		d.Delta += t.Delta
		d.FailureDelta += t.FailureDelta
		d.Epsilon, d.MaxOrder = t.Epsilon, t.MaxOrder
	}
	if len(d.Units) > 1 {
		d.Epsilon, d.MaxOrder = math.Inf(1), 0 // no one figure: see Units
	} else {
		d.Units = nil
	}
	return d
}

// composeRuns composes runs of one privacy unit.
func composeRuns(runs []RunSummary) UnitTotal {
	t := UnitTotal{Runs: len(runs)}
	orders := rdp.DefaultOrders()
	curve := make([]float64, len(orders))
	basic := 0.0
	for _, r := range runs {
		delta, failure := r.charged()
		if delta == 0 {
			continue
		}
		t.Rho += r.Charged
		t.Delta += delta
		t.FailureDelta += failure
		basic += r.curve(orders, curve)
		if r.MaxOrder > 0 && (t.MaxOrder == 0 || r.MaxOrder < t.MaxOrder) {
			t.MaxOrder = r.MaxOrder // the orders every charged run covers
		}
	}
	if t.Delta > 0 {
		t.Epsilon = compose(t.Rho, curve, orders, basic, t.Delta, t.FailureDelta, t.MaxOrder)
	}
	// The composed figure holds at the summed δ, and a larger δ can read a
	// smaller ε than one run alone at its own δ: valid, but a total that
	// falls when a run is added misleads. Any ε above a valid one is valid
	// at the same δ, so the total is at least each charged run alone.
	if len(runs) > 1 {
		for _, r := range runs {
			if a := composeRuns([]RunSummary{r}); a.Delta > 0 && a.Epsilon > t.Epsilon {
				t.Epsilon = a.Epsilon
			}
		}
	}
	return t
}

// compose is the composed ε at delta (the summed δ of the runs) of runs
// whose failure δs sum to failureDelta, of summed zCDP ρ, summed RDP curve
// at orders, and summed ε of each run alone at its own δ: the smallest of
// three readings, each valid at delta — ρ converted (TotalWithin, on the
// orders 2..maxOrder every run covers when one of them is bounded, however
// large ρ: never below order 2), the curve converted at its best order
// (+Inf at an order some run does not cover), both at delta −
// failureDelta, and basic composition (Σεᵢ at Σδᵢ), which needs no
// conversion.
func compose(rho float64, curve, orders []float64, basic, delta, failureDelta float64, maxOrder int) float64 {
	eps := TotalWithin(rho, delta, failureDelta, maxOrder)
	if d := delta - failureDelta; d > 0 && d < 1 {
		if e, _ := rdp.EpsImproved(orders, curve, d); e < eps {
			eps = rdp.RoundUp(e, 6)
		}
	}
	if basic < eps {
		eps = rdp.RoundUp(basic, 6)
	}
	return eps
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
