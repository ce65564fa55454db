package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	pateio "github.com/pate-tool/pate/io"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
	"github.com/pate-tool/pate/label/rdp"
)

// testLedger is the ledger of the tests that run pate in-process: they
// must not write to the user's (pate, the helper, gives each call a fresh
// one in its place).
var testLedger string

func init() {
	if os.Getenv("PATE_LEDGER") == "" {
		if d, err := os.MkdirTemp("", "pate-test-ledger-"); err == nil {
			os.Setenv("PATE_LEDGER", d)
			testLedger = d
		}
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// pateBinary builds the pate binary once for the tests that need a real
// process (to kill it, or to race two of them).
func pateBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pate-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "pate")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("building pate: %v", binErr)
	}
	return binPath
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
	dir, tmp := t.TempDir(), t.TempDir()
	out1, out2 := filepath.Join(tmp, "1.arrow"), filepath.Join(tmp, "2.arrow")
	if code, _, stderr := pate(t, ledgerArgs(dir, out1, "--epsilon", "1", "--lifetime-epsilon", "1.2")...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	d := onlyDataset(t, dir)
	if len(d.Runs) != 1 || !d.Runs[0].Finished || !(d.Runs[0].Rho <= d.Runs[0].MaxRho) {
		t.Fatalf("first run not recorded with its end: %+v", d.Runs)
	}
	before := ledgerBytes(t, dir)
	code, _, stderr := pate(t, ledgerArgs(dir, out2, "--epsilon", "1", "--lifetime-epsilon", "1.2")...)
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
	code, stdout, stderr := pate(t, ledgerArgs(dir, "-", "--epsilon", "1", "--lifetime-epsilon", "1.2")...)
	if code != exitBudget || len(stdout) != 0 {
		t.Fatalf("refused stream: exit %d (want %d), %d bytes on stdout: %s", code, exitBudget, len(stdout), stderr)
	}
	if after := ledgerBytes(t, dir); !bytes.Equal(before, after) {
		t.Errorf("refused stream wrote to the ledger:\n%s", after[len(before):])
	}
	// A smaller run still fits, and the report carries no dataset hash.
	rp := filepath.Join(tmp, "r.json")
	if code, _, stderr := pate(t, ledgerArgs(dir, filepath.Join(tmp, "3.arrow"), "--epsilon", "0.2", "--lifetime-epsilon", "1.2", "--report", rp)...); code != 0 {
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
	if code, stdout, _ := pate(t, "ledger", "show", "--ledger", dir); code != 0 || !bytes.Contains([]byte(stdout), []byte("runs 2")) {
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
					"--epsilon", "1", "--lifetime-epsilon", "1.2")...)
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
	w, err := pateio.Create(p, schema, pateio.WriteOptions{Format: pateio.WriteFile, Allocator: mem})
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
