package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pate-tool/pate/io/arrowio"
)

// TestMain makes the test binary double as the pate command: run as
// "pate" (a script's `pate …` line, or pateBinary for the tests that signal
// or race real processes) it runs main, and so run with main's signal
// handling. The scripts thus test the real command line (exit code, stdout,
// stderr, files) without a separate build.
func TestMain(m *testing.M) {
	testscript.Main(removeFallbackLedger{m}, map[string]func(){"pate": main})
}

// removeFallbackLedger removes, once the tests have run, the ledger
// directory this process made for itself (see init in ledger_test.go).
type removeFallbackLedger struct{ m *testing.M }

func (r removeFallbackLedger) Run() int {
	code := r.m.Run()
	if fallbackLedger != "" {
		os.RemoveAll(fallbackLedger)
	}
	return code
}

// TestScripts runs the command-line cases in testdata/script, one case per
// .txtar file. Each script runs in its own work directory with its own
// privacy ledger ($PATE_LEDGER) and a link ./testdata to this package's
// testdata, so the cases name the committed inputs as the README does.
//
// Besides testscript's own commands, the scripts may use:
//
//	exitcode N pate ARGS…   run pate and require exit code N; a failure
//	                        must not look like a panic
//	oneline                 the last command's stderr is one line
//	emptydir DIR            DIR holds nothing (no output, no temporary file)
//	failedruns-charged      every failed run in the ledger is closed at zero
//	                        or, never closed, charged its maximum
//	ledger-spent            the ledger charges some ρ > 0
//	halve SRC DST           DST is the first half of SRC (a truncated file)
//	gzip SRC DST            DST is SRC gzip-compressed
func TestScripts(t *testing.T) {
	t.Parallel()
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	// The committed bad-input corpus is read-only input: no run may leave a
	// file beside it. Checked once every script has run.
	t.Cleanup(func() { checkCorpusUntouched(t) })
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireUniqueNames:  true,
		RequireExplicitExec: false,
		Setup: func(env *testscript.Env) error {
			ledgerDir := filepath.Join(env.WorkDir, ".ledger")
			if err := os.Mkdir(ledgerDir, 0o755); err != nil {
				return err
			}
			env.Setenv("PATE_LEDGER", ledgerDir)
			return os.Symlink(testdata, filepath.Join(env.WorkDir, "testdata"))
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":           cmdExitCode,
			"oneline":            cmdOneLine,
			"emptydir":           cmdEmptyDir,
			"failedruns-charged": cmdFailedRunsCharged,
			"ledger-spent":       cmdLedgerSpent,
			"halve":              cmdHalve,
			"gzip":               cmdGzip,
			"replace":            cmdReplace,
			"same-labels":        cmdSameLabels,
		},
	})
}

// tsT lets the ledger checks shared with the Go tests fail a script.
type tsT struct{ ts *testscript.TestScript }

func (t tsT) Helper()                      {}
func (t tsT) Fatalf(f string, args ...any) { t.ts.Fatalf(f, args...) }
func (t tsT) Errorf(f string, args ...any) { t.ts.Fatalf(f, args...) }

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
	if got != 0 {
		msg := ts.ReadFile("stderr")
		if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
			ts.Fatalf("message looks like a panic: %q", msg)
		}
	}
}

func cmdOneLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: oneline")
	}
	if msg := strings.TrimSpace(ts.ReadFile("stderr")); strings.Contains(msg, "\n") {
		ts.Fatalf("message is not one line: %q", msg)
	}
}

func cmdEmptyDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: emptydir DIR")
	}
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	for _, e := range entries {
		ts.Fatalf("left %s behind", e.Name())
	}
}

func cmdFailedRunsCharged(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: failedruns-charged")
	}
	checkFailedRunsCharged(tsT{ts}, ts.Getenv("PATE_LEDGER"))
}

func cmdLedgerSpent(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 0 {
		ts.Fatalf("usage: [!] ledger-spent")
	}
	spent := ledgerCharge(tsT{ts}, ts.Getenv("PATE_LEDGER")) > 0
	if spent == neg {
		ts.Fatalf("ledger-spent: the ledger charges ρ > 0 is %v", spent)
	}
}

func cmdHalve(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: halve SRC DST")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b[:len(b)/2], 0o644))
}

// cmdSameLabels checks that two labelled outputs hold the same label
// column, row for row: same-labels A B.
func cmdSameLabels(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: same-labels A B")
	}
	read := func(path string) []string {
		r, err := arrowio.Open(ts.MkAbs(path), arrowio.ReadOptions{})
		ts.Check(err)
		defer r.Close()
		var out []string
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return out
			}
			ts.Check(err)
			idx := rec.Schema().FieldIndices("label")
			if len(idx) != 1 {
				ts.Fatalf("%s: no label column", path)
			}
			col := rec.Column(idx[0])
			for i := 0; i < col.Len(); i++ {
				out = append(out, col.ValueStr(i))
			}
			rec.Release()
		}
	}
	a, b := read(args[0]), read(args[1])
	if same := slices.Equal(a, b); same == neg {
		ts.Fatalf("%s and %s: same labels %v (%d and %d rows)", args[0], args[1], same, len(a), len(b))
	}
}

// cmdReplace edits a file: replace FILE REGEXP NEW, every match (at least one).
func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE REGEXP NEW")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	if !re.Match(b) {
		ts.Fatalf("replace: no match for %q in %s", args[1], args[0])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), re.ReplaceAll(b, []byte(args[2])), 0o644))
}

func cmdGzip(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gzip SRC DST")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err = w.Write(b)
	ts.Check(err)
	ts.Check(w.Close())
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), buf.Bytes(), 0o644))
}
