package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// writeBigPublic writes a public Parquet file of rows rows (x, z float64)
// in row groups of 64 Ki rows.
func writeBigPublic(t *testing.T, path string, rows int) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "z", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithAllocator(mem))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	const group = 1 << 16
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for done := 0; done < rows; done += group {
		n := min(group, rows-done)
		xb := b.Field(0).(*array.Float64Builder)
		zb := b.Field(1).(*array.Float64Builder)
		for i := range n {
			r := done + i
			xb.Append(float64(r%19) - 9)
			zb.Append(float64(r % 7))
		}
		rec := b.NewRecord()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeBigCSV writes a public CSV of rows rows (x, z): its length is not
// known in advance, like a stream's.
func writeBigCSV(t *testing.T, path string, rows int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("x,z\n")
	var line []byte
	for r := range rows {
		line = strconv.AppendInt(line[:0], int64(r%19-9), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(r%7), 10)
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInterrupt drives the real binary: a SIGINT or SIGTERM during a run
// must end it promptly with exit 130, leave no temporary file, and leave a
// previous file at the output path untouched.
func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	if runtime.GOOS == "windows" {
		t.Skip("signals are POSIX")
	}
	bin := pateBinary(t)
	const rows = 3_000_000
	pq := filepath.Join(dir, "public.parquet")
	writeBigPublic(t, pq, rows)
	csv := filepath.Join(dir, "public.csv")
	writeBigCSV(t, csv, rows)
	args := func(public, out string) []string {
		return []string{"label", "-o", out, "--private", badFile("sens.parquet"), "--label", "y", "--public", public,
			"--features", "x,z", "--teachers", "3", "--classes", "0,1", "--mechanism", "gnmax", "--sigma", "40",
			"--delta", "1e-5", "--batch-size", "8192", "--max-queries", strconv.Itoa(rows), "--teachers-only", "--quiet"}
	}
	ledger := t.TempDir()

	// The same runs, not interrupted, complete: the baseline the signals
	// cut short (and a check that a long stream's report fits the output).
	for _, public := range []string{pq, csv} {
		if testing.Short() {
			break // 6 s of 3-million-row runs: the full run only
		}
		out := filepath.Join(t.TempDir(), "labeled.arrow")
		cmd := exec.Command(bin, args(public, out)...)
		cmd.Env = append(os.Environ(), "PATE_LEDGER="+ledger)
		start := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("uninterrupted run on %s: %v\n%s", filepath.Base(public), err, b)
		}
		info, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("uninterrupted run on %s: %v, %d MB written", filepath.Base(public), time.Since(start).Round(time.Millisecond), info.Size()>>20)
	}

	tests := []struct {
		name   string
		public string
		sig    syscall.Signal
		stdout bool // -o - rather than a file
	}{
		{"SIGINT to a file", pq, syscall.SIGINT, false},
		{"SIGTERM to a file", pq, syscall.SIGTERM, false},
		{"SIGINT on stdout", pq, syscall.SIGINT, true},
		{"SIGINT to a file from a csv", csv, syscall.SIGINT, false},
		{"SIGTERM on stdout from a csv", csv, syscall.SIGTERM, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			interruptRun(t, bin, func(out string) []string { return args(tc.public, out) }, ledger, tc.sig, tc.stdout)
		})
	}
}

// interruptRun starts a run whose output would replace a previous file (or
// go to stdout), signals it once it is under way, and checks that it stops
// promptly with the interrupted exit code, one line on stderr, the previous
// file kept and nothing else left behind.
func interruptRun(t *testing.T, bin string, args func(out string) []string, ledger string, sig syscall.Signal, stdout bool) {
	t.Helper()
	outDir := t.TempDir()
	out := filepath.Join(outDir, "labeled.arrow")
	previous := []byte("the previous run's output\n")
	if err := os.WriteFile(out, previous, 0o644); err != nil {
		t.Fatal(err)
	}
	target := out
	if stdout {
		target = "-"
	}
	cmd := exec.Command(bin, args(target)...)
	cmd.Env = append(os.Environ(), "PATE_LEDGER="+ledger)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	// Wait until the run is under way: output bytes on stdout, or a
	// temporary file beside the target that has grown.
	var first int64
	if stdout {
		k, err := io.ReadFull(pipe, make([]byte, 4<<20))
		if err != nil {
			t.Fatalf("no output on stdout (%d bytes): %v; stderr: %s", k, err, stderr.String())
		}
		first = int64(k)
	}
	got := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(io.Discard, pipe)
		got <- first + n
	}()
	if !stdout {
		waitFor(t, 20*time.Second, func() bool { return tempGrown(outDir) })
	}
	ranFor := time.Since(started)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	err = cmd.Wait()
	stopped := time.Since(signalled)
	n := <-got
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the run finished before the signal (after %v; %d bytes on stdout): %v; stderr: %s", ranFor, n, err, stderr.String())
	}
	if code := ee.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitInterrupted, stderr.String())
	}
	t.Logf("signalled after %v, stopped %v later; %d bytes on stdout; stderr: %s",
		ranFor.Round(time.Millisecond), stopped.Round(time.Millisecond), n, strings.TrimSpace(stderr.String()))
	if stopped > 5*time.Second {
		t.Errorf("took %v to stop after the signal", stopped)
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Count(msg, "\n") > 0 || !strings.Contains(msg, "interrupted") {
		t.Errorf("want one line saying the run was interrupted, got %q", msg)
	}
	// A previous file at the path survives; nothing else is left.
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(b, previous) {
		t.Errorf("the previous output was not kept: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(outDir)
	for _, e := range entries {
		if e.Name() != filepath.Base(out) {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

// tempGrown reports whether a temporary output file in dir holds data.
func tempGrown(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			if info, err := e.Info(); err == nil && info.Size() > 4<<20 {
				return true
			}
		}
	}
	return false
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not start within %v", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInterruptChargesShownFigures: the progress bar shows "answered N,
// ε spent X", figures derived from the noise drawn. A run interrupted after
// the bar showed them has released them: the ledger charges the spend the
// run had realized when it stopped (ρ > 0, at most its maximum), not the
// "released nothing" ρ = 0 that made repeated interrupts free noisy answer
// counts on main. A run interrupted with no bar (stderr not a terminal)
// showed nothing and is still charged nothing; so is a DP model's run
// (cell-histogram), whose bar shows only public figures — the rows it
// labelled (all of them) and the ε planned before the run — and which was
// charged its whole budget on main.
func TestInterruptChargesShownFigures(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("signals are POSIX")
	}
	t.Parallel()
	bin := pateBinary(t)
	const rows = 2_000_000
	pq := filepath.Join(t.TempDir(), "public.parquet")
	writeBigPublic(t, pq, rows)
	gnmax := []string{"--mechanism", "gnmax", "--sigma", "40", "--teachers", "3", "--max-queries", strconv.Itoa(rows), "--teachers-only"}
	cells := []string{"--mechanism", "cell-histogram", "--epsilon", "1"}
	tests := []struct {
		name     string
		mech     []string
		bar      bool
		shown    string // what the bar shows before the signal
		wantRho  bool   // charged a positive ρ
		wantSaid string
	}{
		{"the bar showed noisy figures", gnmax, true, `answered [1-9][0-9]*, ε spent`, true, "charged the spend realized so far"},
		{"no bar", gnmax, false, "", false, "charged nothing"},
		{"a model's public figures", cells, true, `labelled by the model [1-9][0-9]*, ε [0-9.]+ on release`, false, "charged nothing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, outDir := t.TempDir(), t.TempDir()
			out := filepath.Join(outDir, "labeled.arrow")
			args := append([]string{"label", "-o", out, "--private", badFile("sens.parquet"), "--label", "y", "--public", pq,
				"--features", "x,z", "--classes", "0,1", "--delta", "1e-5", "--batch-size", "8192", "--ledger", dir}, tc.mech...)
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "PATE_PROGRESS=never")
			if tc.bar {
				cmd.Env = append(os.Environ(), "PATE_PROGRESS=always")
			}
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.bar {
				shown := regexp.MustCompile(tc.shown)
				waitFor(t, 20*time.Second, func() bool { return shown.MatchString(stderr.String()) })
			} else {
				waitFor(t, 20*time.Second, func() bool { return tempGrown(outDir) })
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("want exit %d after the signal, got %v; stderr: %s", exitInterrupted, err, stderr.String())
			}
			d := onlyDataset(t, dir)
			if len(d.Runs) != 1 || !d.Runs[0].Finished {
				t.Fatalf("the interrupted run in the ledger: %+v", d.Runs)
			}
			r := d.Runs[0]
			if tc.wantRho != (r.Rho > 0) || r.Rho > r.MaxRho {
				t.Fatalf("interrupted run charged ρ = %g (maximum %g); want a positive ρ: %v", r.Rho, r.MaxRho, tc.wantRho)
			}
			if !strings.Contains(stderr.String(), tc.wantSaid) {
				t.Errorf("stderr does not say %q: %s", tc.wantSaid, stderr.String())
			}
			if strings.Contains(stderr.String(), "context canceled") {
				t.Errorf("stderr says %q, not what happened: %s", "context canceled", stderr.String())
			}
		})
	}
}
