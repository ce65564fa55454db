//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPty opens a pseudo-terminal pair and returns its terminal end (the
// controller end is closed with it by the test's cleanup).
func openPty(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlock pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("pseudo-terminal number: %v", e)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// TestOutputToTerminalRefusedFirst: -o - with a terminal on stdout is bad
// usage (exit 2), refused before any input is read: the sensitive file is
// never opened, hashed or charged, so the ledger stays empty, and the
// message names the flag and what to do instead.
func TestOutputToTerminalRefusedFirst(t *testing.T) {
	t.Parallel()
	tty := openPty(t)
	tests := []struct {
		name string
		args []string
	}{
		{"label", []string{"label", "--private", "testdata/bad/sens.parquet", "--label", "y", "--public", "testdata/bad/pub.parquet",
			"--features", "x,z", "--classes", "0,1", "--teachers", "3", "--epsilon", "1", "--delta", "1e-5", "-o", "-"}},
		{"label with a sensitive file that is not there", []string{"label", "--private", "absent.parquet", "--label", "y",
			"--public", "testdata/bad/pub.parquet", "--epsilon", "1", "--delta", "1e-5", "-o", "-"}},
		{"aggregate", []string{"aggregate", "--votes", "testdata/votes/mnist_250_teachers.parquet", "--teachers", "250", "--mechanism", "gnmax",
			"--sigma", "40", "--delta", "1e-5", "-o", "-"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ledgerDir := t.TempDir()
			args := append([]string{tc.args[0], "--ledger", ledgerDir}, tc.args[1:]...)
			var errb bytes.Buffer
			cmd := exec.Command(pateBinary(t), args...)
			cmd.Stdin = strings.NewReader("")
			cmd.Stdout, cmd.Stderr = tty, &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
				t.Fatalf("exit: %v, want %d; stderr %s", err, exitUsage, errb.String())
			}
			if msg := errb.String(); !strings.Contains(msg, "-o -") || !strings.Contains(msg, "terminal") || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr = %q, want one line naming -o - and the terminal", msg)
			}
			entries, err := os.ReadDir(ledgerDir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Errorf("the ledger holds %d entries after a refused run, want none", len(entries))
			}
		})
	}
}
