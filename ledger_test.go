package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
	"github.com/pate-tool/pate/label/rdp"
)

// The tests must never write to the user's ledger. pate, the helper, gives
// every call that writes one a fresh ledger of its own, and the scripts
// each have theirs; this is the fallback for anything else (set before any
// test runs, so never changed while tests run in parallel).
func init() {
	if os.Getenv("PATE_LEDGER") == "" {
		if d, err := os.MkdirTemp("", "pate-test-ledger-"); err == nil {
			os.Setenv("PATE_LEDGER", d)
			fallbackLedger = d
		}
	}
}

// fallbackLedger is the directory init made, removed after the tests.
var fallbackLedger string

// pateBinary is the pate command for the tests that need a real process
// (to kill it, or to race two of them): the test binary itself, which
// TestMain registers as "pate" on $PATH and which then runs main. No
// separate build is needed.
func pateBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("pate")
	if err != nil {
		t.Fatalf("the pate command TestMain registers: %v", err)
	}
	return bin
}

func ledgerArgs(dir, out string, extra ...string) []string {
	return append([]string{"label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--delta", "1e-5", "--teachers", "20", "--classes", "0,1",
		"--max-queries", "300", "-q", "--ledger", dir, "-o", out}, extra...)
}

func onlyDataset(t *testing.T, dir string) *ledger.Dataset {
	t.Helper()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := l.Datasets()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("%d datasets in the ledger, want 1", len(ds))
	}
	return ds[0]
}

func ledgerBytes(t *testing.T, dir string) []byte {
	t.Helper()
	fs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var all []byte
	for _, f := range fs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// TestLedgerLifetimeRefusal: a run that would take the dataset past
// --lifetime-epsilon exits 3 and writes nothing: no output, no ledger line.
func TestLedgerLifetimeRefusal(t *testing.T) {
	t.Parallel()
	dir, tmp := t.TempDir(), t.TempDir()
	out1, out2 := filepath.Join(tmp, "1.arrow"), filepath.Join(tmp, "2.arrow")
	if code, _, stderr := pate(t, ledgerArgs(dir, out1, "--epsilon", "1", "--lifetime-epsilon", "1.2", "--dataset", "adult")...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	d := onlyDataset(t, dir)
	if len(d.Runs) != 1 || !d.Runs[0].Finished || !(d.Runs[0].Rho <= d.Runs[0].MaxRho) {
		t.Fatalf("first run not recorded with its end: %+v", d.Runs)
	}
	before := ledgerBytes(t, dir)
	code, _, stderr := pate(t, ledgerArgs(dir, out2, "--epsilon", "1", "--lifetime-epsilon", "1.2", "--dataset", "adult")...)
	if code != exitBudget {
		t.Fatalf("second run: exit %d, want %d: %s", code, exitBudget, stderr)
	}
	if _, err := os.Stat(out2); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused run left an output file: %v", err)
	}
	if after := ledgerBytes(t, dir); !bytes.Equal(before, after) {
		t.Errorf("refused run wrote to the ledger:\n%s", after[len(before):])
	}
	// The begin entry is written while the run trains; a refused stream
	// must not have written a byte.
	code, stdout, stderr := pate(t, ledgerArgs(dir, "-", "--epsilon", "1", "--lifetime-epsilon", "1.2", "--dataset", "adult")...)
	if code != exitBudget || len(stdout) != 0 {
		t.Fatalf("refused stream: exit %d (want %d), %d bytes on stdout: %s", code, exitBudget, len(stdout), stderr)
	}
	if after := ledgerBytes(t, dir); !bytes.Equal(before, after) {
		t.Errorf("refused stream wrote to the ledger:\n%s", after[len(before):])
	}
	// A smaller run still fits, and the report carries no dataset hash.
	rp := filepath.Join(tmp, "r.json")
	if code, _, stderr := pate(t, ledgerArgs(dir, filepath.Join(tmp, "3.arrow"), "--epsilon", "0.2", "--lifetime-epsilon", "1.2", "--dataset", "adult", "--report", rp)...); code != 0 {
		t.Fatalf("small run: exit %d: %s", code, stderr)
	}
	d = onlyDataset(t, dir)
	if len(d.Runs) != 2 || d.Epsilon > 1.2 {
		t.Fatalf("ledger after the small run: %d runs, ε = %g", len(d.Runs), d.Epsilon)
	}
	rb, _ := os.ReadFile(rp)
	if bytes.Contains(rb, []byte(d.ID)) || bytes.Contains(rb, []byte(d.ID[:16])) {
		t.Errorf("the report carries the dataset fingerprint")
	}
	if code, stdout, _ := pate(t, "ledger", "show", "--ledger", dir); code != 0 || !bytes.Contains([]byte(stdout), []byte("2 run(s)")) {
		t.Errorf("ledger show: exit %d\n%s", code, stdout)
	}
}

// TestLedgerConcurrentRace: two runs racing for the last of the lifetime
// budget: exactly one proceeds, the other exits 3.
func TestLedgerConcurrentRace(t *testing.T) {
	bin := pateBinary(t)
	for round := 0; round < 2; round++ {
		dir, tmp := t.TempDir(), t.TempDir()
		var wg sync.WaitGroup
		codes := make([]int, 2)
		start := make(chan struct{})
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				cmd := exec.Command(bin, ledgerArgs(dir, filepath.Join(tmp, string(rune('a'+i))+".arrow"),
					"--epsilon", "1", "--lifetime-epsilon", "1.2", "--dataset", "adult")...)
				<-start
				err := cmd.Run()
				var ee *exec.ExitError
				switch {
				case err == nil:
					codes[i] = 0
				case errors.As(err, &ee):
					codes[i] = ee.ExitCode()
				default:
					codes[i] = -1
				}
			}(i)
		}
		close(start)
		wg.Wait()
		ok, refused := 0, 0
		for _, c := range codes {
			switch c {
			case 0:
				ok++
			case exitBudget:
				refused++
			}
		}
		if ok != 1 || refused != 1 {
			t.Fatalf("round %d: exit codes %v, want one 0 and one 3", round, codes)
		}
		if d := onlyDataset(t, dir); len(d.Runs) != 1 {
			t.Fatalf("round %d: %d runs recorded, want 1", round, len(d.Runs))
		}
	}
}

// bigPublic writes adult_public repeated n times as an Arrow IPC file.
func bigPublic(t *testing.T, n int) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema, recs := readAll(t, "testdata/adult_public.parquet", mem)
	defer release(recs)
	p := filepath.Join(t.TempDir(), "big.arrow")
	w, err := arrowio.Create(p, schema, arrowio.WriteOptions{Format: arrowio.WriteFile, Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Commit(nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLedgerSurvivesSIGKILL kills a labelling run after labels started to
// flow on stdout: the ledger still charges at least what was released.
func TestLedgerSurvivesSIGKILL(t *testing.T) {
	bin := pateBinary(t)
	pub := bigPublic(t, 25) // about 407,000 rows
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const sigma1, sigma2 = "200", "100"
	cmd := exec.CommandContext(ctx, bin, "label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", pub, "--delta", "1e-5", "--epsilon", "50", "--teachers", "20", "--classes", "0,1",
		"--sigma1", sigma1, "--sigma2", sigma2, "--batch-size", "2048", "-q", "--ledger", dir, "-o", "-")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read until several record batches have arrived, then kill.
	var got bytes.Buffer
	buf := make([]byte, 32<<10)
	for got.Len() < 1<<20 {
		n, err := stdout.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("stdout ended after %d bytes: %v", got.Len(), err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	// What was released: the labels in the batches received whole.
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r, err := ipc.NewReader(bytes.NewReader(got.Bytes()), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	var rows, answered int64
	for r.Next() {
		rec := r.Record()
		col := rec.Column(rec.Schema().FieldIndices("income")[0])
		rows += rec.NumRows()
		answered += int64(col.Len() - col.NullN())
	}
	r.Release()
	if rows == 0 || answered == 0 {
		t.Fatalf("no labels received before the kill (%d rows)", rows)
	}
	rc, ra, err := label.EventRho(label.MechanismConfidentGNMax, 2, label.MechanismParams{Sigma1: sigma1, Sigma2: sigma2, Threshold: 16})
	if err != nil {
		t.Fatal(err)
	}
	released := float64(rows)*rc + float64(answered)*ra

	d := onlyDataset(t, dir)
	if len(d.Runs) != 1 || d.Runs[0].Finished {
		t.Fatalf("ledger after the kill: %+v", d.Runs)
	}
	if !(d.Rho >= released) {
		t.Fatalf("ledger charges ρ = %g, the labels received already cost ρ = %g", d.Rho, released)
	}
	if want := rdp.RhoForEps(50, 1e-5); d.Rho != want {
		t.Errorf("killed run charged ρ = %g, want its maximum %g", d.Rho, want)
	}
	t.Logf("killed after %d rows (%d answered, ρ %.4g released); ledger charges ρ %.4g", rows, answered, released, d.Rho)
}

// TestLedgerSequence: pate label, then pate replicate --private-report on
// the same data, then pate label with a lifetime: the replicate run is the
// same dataset as the label runs, so the third run is refused when the
// three together pass the lifetime.
func TestLedgerSequence(t *testing.T) {
	t.Parallel()
	dir, tmp := t.TempDir(), t.TempDir()
	if code, _, stderr := pate(t, ledgerArgs(dir, filepath.Join(tmp, "1.arrow"), "--epsilon", "1", "--dataset", "adult")...); code != 0 {
		t.Fatalf("label: exit %d: %s", code, stderr)
	}
	code, _, stderr := pate(t, "replicate", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--epsilon", "1", "--delta", "1e-5", "--max-queries", "300",
		"--classes", "0,1", "--teachers", "20", "--repeats", "1", "--private-report", "--report-epsilon", "1", "--ledger", dir, "--dataset", "adult")
	if code != 0 {
		t.Fatalf("replicate: exit %d: %s", code, stderr)
	}
	d := onlyDataset(t, dir)
	if len(d.Runs) != 2 || d.Runs[1].Mechanism != "replicate-report" {
		t.Fatalf("runs %+v", d.Runs)
	}
	// Two runs of ε = 1 each: basic composition says 2 at δ = 2e-5 (their
	// zCDP ρ, the report's ε²/2 = 0.5 among them, said 4.73).
	if !(d.Epsilon <= 2) {
		t.Fatalf("a label run and a private report at ε = 1 each compose to ε = %g, above basic composition's 2", d.Epsilon)
	}
	before := ledgerBytes(t, dir)
	code, _, stderr = pate(t, ledgerArgs(dir, filepath.Join(tmp, "3.arrow"), "--epsilon", "1", "--lifetime-epsilon", "2", "--dataset", "adult")...)
	if code != exitBudget {
		t.Fatalf("third run: exit %d, want %d (the ledger is at ε = %g before it): %s", code, exitBudget, d.Epsilon, stderr)
	}
	if after := ledgerBytes(t, dir); !bytes.Equal(before, after) {
		t.Errorf("refused run wrote to the ledger")
	}
}

// TestLedgerSVTDelta: a whole svt run's stable-release δ is in the ledger,
// whose total is the run's own reading of what it spent: ρ, its RDP curve
// and its basic composition converted at δ less the failure δs, as the run
// does. The old ledger left the stable-release δ out (ε = 1.928 at 1e-5
// for a run claiming (2, 1e-5)) and composed pure events as ε²/2-zCDP only.
func TestLedgerSVTDelta(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cutoff string
	}{
		{"one instance (basic composition binds)", "1"},
		{"many instances (zCDP binds)", "40"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			rp := filepath.Join(tmp, "r.json")
			code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income",
				"--public", "testdata/adult_public.parquet", "--mechanism", "svt", "--svt-cutoff", tc.cutoff, "--epsilon", "2", "--delta", "1e-5",
				"--teachers", "20", "--classes", "0,1", "-q", "--ledger", dir, "-o", filepath.Join(tmp, "o.arrow"), "--report", rp)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(rp)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := label.ParseReport(b)
			if err != nil {
				t.Fatal(err)
			}
			if rep.PureDP == nil || rep.PureDP.Events != rep.PureDP.MaxEvents {
				t.Fatalf("the svt run did not spend its budget: %+v", rep.PureDP)
			}
			d := onlyDataset(t, dir)
			if d.Delta != float64(rep.Budget.Delta) || d.FailureDelta < float64(rep.PureDP.StableDelta) {
				t.Fatalf("ledger δ %g (failure %g), the run's δ %g (stable release %g)", d.Delta, d.FailureDelta, rep.Budget.Delta, rep.PureDP.StableDelta)
			}
			want := float64(rep.Spent.EpsilonImproved)
			if p := rep.Spent.EpsilonPure; p != nil && float64(*p) < want {
				want = float64(*p)
			}
			t.Logf("ledger ε = %g at δ = %g; the run spent %g (claim (%g, %g))", d.Epsilon, d.Delta, want, rep.Guarantee.Epsilon, rep.Guarantee.Delta)
			if math.Abs(d.Epsilon-want) > 2e-6 {
				t.Fatalf("ledger ε = %g at δ = %g, the run's own reading of its spend %g", d.Epsilon, d.Delta, want)
			}
		})
	}
}

// plusOneRow writes the rows of src and a copy of its first row as an
// Arrow IPC file: a neighbouring dataset.
func plusOneRow(t *testing.T, src string) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema, recs := readAll(t, src, mem)
	defer release(recs)
	p := filepath.Join(t.TempDir(), "plus1.arrow")
	w, err := arrowio.Create(p, schema, arrowio.WriteOptions{Format: arrowio.WriteFile, Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	one := recs[0].NewSlice(0, 1)
	defer one.Release()
	if err := w.Write(one); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLedgerSeededRuns: two runs with one seed on D and on D plus one row
// share their partition and noise; the second is refused (exit 3) and
// writes nothing, and so is a second use of one --replicable key.
func TestLedgerSeededRuns(t *testing.T) {
	t.Parallel()
	plus := plusOneRow(t, "testdata/adult_train.parquet")
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("a shared secret of 32 bytes, ok?"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		seed []string
	}{
		{"--seed", []string{"--seed", "7"}},
		{"--replicable", []string{"--replicable", "--shared-seed-file", keyFile}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			args := func(private, out string) []string {
				a := ledgerArgs(dir, out, append([]string{"--epsilon", "1"}, tc.seed...)...)
				a[2] = private
				return a
			}
			if code, _, stderr := pate(t, args("testdata/adult_train.parquet", filepath.Join(tmp, "d.arrow"))...); code != 0 {
				t.Fatalf("run on D: exit %d: %s", code, stderr)
			}
			before := ledgerBytes(t, dir)
			out := filepath.Join(tmp, "d1.arrow")
			code, _, stderr := pate(t, args(plus, out)...)
			if code != exitBudget || !strings.Contains(stderr, "seed") {
				t.Fatalf("run on D plus one row: exit %d, want %d: %s", code, exitBudget, stderr)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused run left an output: %v", err)
			}
			if after := ledgerBytes(t, dir); !bytes.Equal(before, after) {
				t.Errorf("the refused run wrote to the ledger")
			}
		})
	}
}

// TestLedgerIdentity: the same rows re-encoded (CSV, Parquet) and the same
// data with its label columns in either order, or other label columns, are
// one dataset in the ledger; every command that spends budget writes its
// entries there (aggregate's votes are tied to it by --dataset) and says so
// on stderr; the total is finite at the summed δ.
func TestLedgerIdentity(t *testing.T) {
	t.Parallel()
	csvPath := filepath.Join(t.TempDir(), "adult_train.csv")
	writeCSV(t, "testdata/adult_train.parquet", csvPath)
	dir, tmp := t.TempDir(), t.TempDir()
	keep := "age,workclass,fnlwgt,education,education_num,marital_status,occupation,relationship,race,capital_gain,capital_loss,hours_per_week,native_country"
	lab := func(private string, extra ...string) []string {
		return append([]string{"label", "--private", private, "--public", "testdata/adult_public.parquet", "--delta", "1e-5",
			"--epsilon", "1", "--teachers", "20", "--max-queries", "200", "--ledger", dir, "-o", filepath.Join(tmp, "o.arrow")}, extra...)
	}
	tests := []struct {
		name string
		args []string
		mech string
	}{
		{"parquet", lab("testdata/adult_train.parquet", "--label", "income", "--classes", "0,1"), "confident-gnmax"},
		{"csv", lab(csvPath, "--label", "income", "--classes", "0,1"), "confident-gnmax"},
		{"labels a, b", lab("testdata/adult_train.parquet", "--label", "income", "--label", "sex", "--keep", keep), "confident-gnmax"},
		{"labels b, a", lab("testdata/adult_train.parquet", "--label", "sex,income", "--keep", keep), "confident-gnmax"},
		{"replicate --private-report", []string{"replicate", "--private", csvPath, "--label", "income",
			"--public", "testdata/adult_public.parquet", "--epsilon", "1", "--delta", "1e-5", "--max-queries", "200",
			"--classes", "0,1", "--teachers", "20", "--repeats", "1", "--private-report", "--report-epsilon", "0.5", "--ledger", dir}, "replicate-report"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := pate(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			d := onlyDataset(t, dir)
			if len(d.Runs) != i+1 || d.Runs[i].Mechanism != tc.mech || !d.Runs[i].Finished {
				t.Fatalf("%d runs, the last %+v", len(d.Runs), d.Runs[len(d.Runs)-1])
			}
			if want := filepath.Join(dir, d.ID+".jsonl"); !strings.Contains(stderr, "recorded in the privacy ledger "+want) {
				t.Errorf("stderr does not say where the run was recorded: %q", stderr)
			}
		})
	}
	d := onlyDataset(t, dir)
	if math.IsInf(d.Epsilon, 0) || math.Abs(d.Delta-5e-5) > 1e-15 {
		t.Fatalf("total ε = %g at δ = %g", d.Epsilon, d.Delta)
	}

	// pate aggregate writes its entries too: under the votes' rows, or
	// under a name shared with the label runs of the data they came from.
	agg := func(extra ...string) []string {
		return append([]string{"aggregate", "--votes", "testdata/votes/adult_250_teachers.parquet", "--teachers", "250",
			"--public", "testdata/adult_public.parquet", "--mechanism", "gnmax", "--sigma", "40", "--max-queries", "100",
			"--delta", "1e-5", "-o", filepath.Join(tmp, "a.arrow")}, extra...)
	}
	named := t.TempDir()
	for _, args := range [][]string{
		agg("--ledger", named, "--dataset", "adult"),
		lab("testdata/adult_train.parquet", "--label", "income", "--classes", "0,1", "--ledger", named, "--dataset", "adult"),
	} {
		if code, _, stderr := pate(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args[0], code, stderr)
		}
	}
	l, err := ledger.Open(named)
	if err != nil {
		t.Fatal(err)
	}
	key, err := l.Key(ledger.NamedID("adult"))
	if err != nil {
		t.Fatal(err)
	}
	if d := onlyDataset(t, named); len(d.Runs) != 2 || d.Runs[0].Mechanism != "gnmax" || !d.Runs[0].Finished || d.ID != key {
		t.Fatalf("named dataset: %+v", d)
	}
	votes := t.TempDir()
	if code, _, stderr := pate(t, agg("--ledger", votes, "--lifetime-epsilon", "1e-3", "--dataset", "votes")...); code != exitBudget {
		t.Fatalf("aggregate past its lifetime: exit %d: %s", code, stderr)
	}
	if code, _, stderr := pate(t, agg("--ledger", votes, "--dataset", "votes")...); code != 0 {
		t.Fatalf("aggregate: exit %d: %s", code, stderr)
	}
	// Its classes are the vote indices, public: no discovery δ.
	if d := onlyDataset(t, votes); len(d.Runs) != 1 || !d.Runs[0].Finished || d.FailureDelta != 0 {
		t.Fatalf("aggregate's entries: %+v (failure δ %g)", d.Runs, d.FailureDelta)
	}
}

// writeCSV writes the rows of src as CSV, every value as text.
func writeCSV(t *testing.T, src, dst string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema, recs := readAll(t, src, mem)
	defer release(recs)
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	var row []string
	for _, fl := range schema.Fields() {
		row = append(row, fl.Name)
	}
	w.Write(row)
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			row = row[:0]
			for _, c := range r.Columns() {
				if c.IsNull(i) {
					row = append(row, "")
				} else {
					row = append(row, c.ValueStr(i))
				}
			}
			w.Write(row)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerFailedRunCharged: a run that fails after its begin entry (here
// on a public row it cannot read, after training on the sensitive data)
// stays charged its maximum and says so; the ledger never closes it at the
// nothing it released, since a failure can depend on the data.
func TestLedgerFailedRunCharged(t *testing.T) {
	t.Parallel()
	pub := filepath.Join(t.TempDir(), "public.csv")
	writeCSV(t, "testdata/adult_public.parquet", pub)
	f, err := os.OpenFile(pub, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("1,2\n"); err != nil { // a row with 2 of the 15 fields
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income", "--public", pub,
		"--delta", "1e-5", "--epsilon", "1", "--teachers", "20", "--classes", "0,1", "--batch-size", "1024",
		"--ledger", dir, "-o", filepath.Join(t.TempDir(), "o.arrow"))
	if code == 0 {
		t.Fatalf("the run on a malformed public file succeeded: %s", stderr)
	}
	d := onlyDataset(t, dir)
	if len(d.Runs) != 1 || d.Runs[0].Finished || d.Rho != d.Runs[0].MaxRho || d.Delta != 1e-5 {
		t.Fatalf("the failed run: %+v (total ρ %g, δ %g)", d.Runs, d.Rho, d.Delta)
	}
	if !strings.Contains(stderr, "charged its maximum") || !strings.Contains(stderr, filepath.Join(dir, d.ID+".jsonl")) {
		t.Errorf("stderr does not say the failed run is charged, and where: %q", stderr)
	}
}

// nearCopies writes, beside the CSV at src, the copies of its rows a
// lifetime must not be escaped by: one row fewer, one row twice, the
// column col rounded to tens, and an added column "note".
func nearCopies(t *testing.T, src, col string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	header := strings.Split(lines[0], ",")
	ci := -1
	for i, h := range header {
		if h == col {
			ci = i
		}
	}
	if ci < 0 {
		t.Fatalf("no column %q in %v", col, header)
	}
	rounded := []string{lines[0]}
	for _, ln := range lines[1:] {
		f := strings.Split(ln, ",")
		if len(f[ci]) > 1 {
			f[ci] = f[ci][:len(f[ci])-1] + "0"
		}
		rounded = append(rounded, strings.Join(f, ","))
	}
	extra := []string{lines[0] + ",note"}
	for _, ln := range lines[1:] {
		extra = append(extra, ln+",same")
	}
	copies := map[string][]string{
		"one row fewer":    lines[:len(lines)-1],
		"a duplicated row": append(append([]string(nil), lines...), lines[1]),
		"values rounded":   rounded,
		"an unused column": extra,
	}
	out := map[string]string{}
	dir := t.TempDir()
	for name, ls := range copies {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".csv")
		if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

// TestLedgerNearCopies: a lifetime is kept for a named dataset only
// (--lifetime-epsilon without --dataset is a usage error, exit 2), and
// every run under the name is charged to it whatever rows it read: a copy
// with one row fewer, a duplicated row, values rounded otherwise or an
// unused column added is refused once the named dataset's lifetime is
// spent, and warned about as rows that changed under the name. (On main
// each copy was a new dataset with a fresh lifetime, and the lifetime was
// accepted without a name.)
func TestLedgerNearCopies(t *testing.T) {
	t.Parallel()
	csvPath := filepath.Join(t.TempDir(), "adult_train.csv")
	writeCSV(t, "testdata/adult_train.parquet", csvPath)
	dir, tmp := t.TempDir(), t.TempDir()
	args := func(private string, extra ...string) []string {
		return append([]string{"label", "--private", private, "--label", "income", "--public", "testdata/adult_public.parquet",
			"--delta", "1e-5", "--epsilon", "1", "--teachers", "20", "--classes", "0,1", "--max-queries", "100",
			"--exclude", "note", "--ledger", dir, "-o", filepath.Join(tmp, "o.arrow")}, extra...)
	}
	// --exclude names a column of the data: the original has no "note".
	args0 := func(private string, extra ...string) []string {
		a := args(private, extra...)
		for i := range a {
			if a[i] == "--exclude" {
				return append(a[:i:i], a[i+2:]...)
			}
		}
		return a
	}
	code, _, stderr := pate(t, args0(csvPath, "--lifetime-epsilon", "1.2")...)
	if code != exitUsage || !strings.Contains(stderr, "--dataset") {
		t.Fatalf("a lifetime without --dataset: exit %d (want %d): %s", code, exitUsage, stderr)
	}
	if b := ledgerBytes(t, dir); len(b) != 0 {
		t.Fatalf("the refused run wrote to the ledger: %s", b)
	}
	if code, _, stderr := pate(t, args0(csvPath, "--lifetime-epsilon", "1.2", "--dataset", "adult")...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	} else if strings.Contains(stderr, "differ") {
		t.Errorf("the first run was warned about changed rows: %s", stderr)
	}
	before := ledgerBytes(t, dir)
	for name, path := range nearCopies(t, csvPath, "fnlwgt") {
		t.Run(name, func(t *testing.T) {
			a := args(path, "--lifetime-epsilon", "1.2", "--dataset", "adult")
			if name != "an unused column" {
				a = args0(path, "--lifetime-epsilon", "1.2", "--dataset", "adult")
			}
			code, _, stderr := pate(t, a...)
			if code != exitBudget {
				t.Fatalf("exit %d, want %d (refused: the named dataset's lifetime is spent): %s", code, exitBudget, stderr)
			}
			if !strings.Contains(stderr, "differ from those of 1 earlier run") {
				t.Errorf("no warning that the rows under the name changed: %s", stderr)
			}
		})
	}
	if after := ledgerBytes(t, dir); !bytes.Equal(before, after) {
		t.Errorf("refused runs wrote to the ledger")
	}
	if d := onlyDataset(t, dir); len(d.Runs) != 1 || !d.Named {
		t.Fatalf("the named dataset: %d runs, named %v", len(d.Runs), d.Named)
	}
}

// TestLedgerMixedUnits: a run protecting one patient's rows (here, every
// row of one age) and a run protecting one row do not compose into one
// figure: under a lifetime the second unit is refused (exit 3, nothing
// written); without one it is recorded, and pate ledger show composes
// each unit apart with no overall total. (On main the unit was not
// recorded and the two were summed into one ε.)
func TestLedgerMixedUnits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(extra ...string) (int, string) {
		code, _, stderr := pate(t, append(ledgerArgs(dir, filepath.Join(t.TempDir(), "o.arrow"), "--epsilon", "1", "--dataset", "adult"), extra...)...)
		return code, stderr
	}
	if code, stderr := run("--lifetime-epsilon", "5"); code != 0 {
		t.Fatalf("row-level run: exit %d: %s", code, stderr)
	}
	before := ledgerBytes(t, dir)
	if code, stderr := run("--lifetime-epsilon", "5", "--privacy-unit", "age"); code != exitBudget || !strings.Contains(stderr, "privacy unit") {
		t.Fatalf("a run of another unit under a lifetime: exit %d (want %d): %s", code, exitBudget, stderr)
	}
	if after := ledgerBytes(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("the refused run wrote to the ledger")
	}
	if code, stderr := run("--privacy-unit", "age"); code != 0 {
		t.Fatalf("unit-level run without a lifetime: exit %d: %s", code, stderr)
	}
	d := onlyDataset(t, dir)
	if !math.IsInf(d.Epsilon, 1) || len(d.Units) != 2 || d.Runs[1].PrivacyUnit != "age" {
		t.Fatalf("mixed units: ε %g, units %+v, runs %+v", d.Epsilon, d.Units, d.Runs)
	}
	code, stdout, stderr := pate(t, "ledger", "show", "--ledger", dir)
	if code != 0 || !strings.Contains(stdout, "runs of 2 privacy units") || !strings.Contains(stdout, "unit one value of age: 1 run(s)") {
		t.Fatalf("ledger show: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := pate(t, "ledger", "show", "--json", "--ledger", dir); code != 0 || !strings.Contains(stdout, `"units"`) {
		t.Fatalf("ledger show --json: exit %d: %s%s", code, stdout, stderr)
	}
}

// TestLedgerReleaseSS: pate analyze --release-ss is a release, recorded in
// the ledger before its noise is drawn and charged its own ε (its RDP at
// the fixed order converted at δ), and refused (exit 3, nothing printed)
// past the named dataset's lifetime. (On main it was never recorded.)
func TestLedgerReleaseSS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"analyze", "--votes", "testdata/votes/mnist_250_teachers.parquet", "--mechanism", "gnmax", "--sigma", "40",
			"--queries", "200", "--delta", "1e-5", "--release-ss", "--beta", "0.0329", "--sigma-ss", "6.23", "--ss-order", "8",
			"--ledger", dir, "--dataset", "mnist"}, extra...)
	}
	cost, _ := rdp.EpsImproved([]float64{8}, []float64{rdp.GNSSDiscreteRDP(0.0329, 6.23, 8)}, 1e-5)
	cost = rdp.RoundUp(cost, 6)
	code, stdout, stderr := pate(t, args()...)
	if code != 0 || !strings.Contains(stdout, "SMOOTH-SENSITIVITY RELEASE") || !strings.Contains(stderr, "recorded in the privacy ledger") {
		t.Fatalf("release: exit %d\n%s%s", code, stdout, stderr)
	}
	d := onlyDataset(t, dir)
	if len(d.Runs) != 1 || d.Runs[0].Mechanism != "gnmax-ss-release" || !d.Runs[0].Finished || d.Runs[0].Epsilon != cost || d.Epsilon != cost {
		t.Fatalf("the release in the ledger: %+v, total ε %g; want its ε %g", d.Runs, d.Epsilon, cost)
	}
	before := ledgerBytes(t, dir)
	code, stdout, stderr = pate(t, args("--lifetime-epsilon", strconv.FormatFloat(1.5*cost, 'g', -1, 64))...)
	if code != exitBudget || stdout != "" {
		t.Fatalf("a second release past the lifetime: exit %d (want %d)\n%s%s", code, exitBudget, stdout, stderr)
	}
	if after := ledgerBytes(t, dir); !bytes.Equal(before, after) {
		t.Errorf("the refused release wrote to the ledger")
	}
	if code, _, stderr := pate(t, "analyze", "--votes", "testdata/votes/mnist_250_teachers.parquet", "--sigma", "40", "--delta", "1e-5",
		"--dataset", "mnist"); code != exitUsage {
		t.Errorf("--dataset without --release-ss: exit %d (want %d): %s", code, exitUsage, stderr)
	}
	if code, _, stderr := pate(t, "ledger", "show", "--json", "--ledger", dir); code != 0 {
		t.Errorf("ledger show --json of an ε-only run: exit %d: %s", code, stderr)
	}
}

// TestLedgerShowReadable: pate ledger show names each named dataset by its
// name, says which mechanism ran (not the candidates of the default's
// choice) and how totals compose; --dataset NAME shows one dataset; a
// mistyped flag is a one-line usage error (exit 2); --lifetime-delta caps
// the summed δ of a named dataset's runs (exit 3 past it) and the refusal
// says how the total composes.
func TestLedgerShowReadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "o.arrow")
	run := func(extra ...string) (int, string) {
		args := append([]string{"label", "--private", badFile("sens.parquet"), "--label", "y", "--features", "x,z",
			"--public", badFile("pub.parquet"), "--classes", "0,1", "--epsilon", "1", "--delta", "1e-5",
			"--ledger", dir, "-q", "-o", out}, extra...)
		code, _, stderr := pate(t, args...)
		return code, stderr
	}
	for _, extra := range [][]string{{"--dataset", "clinic"}, {"--dataset", "bank", "--mechanism", "gnmax"}, nil} {
		if code, stderr := run(extra...); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
	}
	code, stdout, stderr := pate(t, "ledger", "show", "--ledger", dir)
	if code != 0 {
		t.Fatalf("ledger show: exit %d: %s", code, stderr)
	}
	for _, want := range []string{`dataset "clinic"`, `dataset "bank"`, "unnamed dataset", "  gnmax  ", "How totals compose", "√n·ε"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ledger show does not say %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "|") {
		t.Errorf("ledger show names a choice's candidates, not the mechanism that ran:\n%s", stdout)
	}
	code, stdout, _ = pate(t, "ledger", "show", "--ledger", dir, "--dataset", "clinic")
	if code != 0 || !strings.Contains(stdout, `dataset "clinic"`) || strings.Contains(stdout, "bank") || !strings.Contains(stdout, "1 dataset(s)") {
		t.Errorf("ledger show --dataset clinic: exit %d:\n%s", code, stdout)
	}
	for _, args := range [][]string{{"--bogus"}, {"--datset", "clinic"}, {"--dataset", "nope"}} {
		code, stdout, stderr := pate(t, append([]string{"ledger", "show", "--ledger", dir}, args...)...)
		if code != exitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("ledger show %v: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, stdout, stderr)
		}
	}
	// Two runs at δ 1e-5 fit under a lifetime δ of 2e-5; a third does not.
	for i, want := range []int{0, 0, exitBudget} {
		code, stderr := run("--dataset", "capped", "--lifetime-delta", "2e-5")
		if code != want {
			t.Fatalf("run %d under --lifetime-delta 2e-5: exit %d, want %d: %s", i+1, code, want, stderr)
		}
		if want == exitBudget && (!strings.Contains(stderr, "past its lifetime δ") || !strings.Contains(stderr, "runs compose by zCDP")) {
			t.Errorf("the refusal does not say why: %s", stderr)
		}
	}
}
