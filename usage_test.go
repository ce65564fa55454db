package main

import (
	"strings"
	"testing"
)

// TestBadUsageEveryCommand: a flag that does not parse, in any command or
// subcommand, is bad usage: exit 2, one line on stderr naming the flag
// with its double dash, nothing on stdout (no help), and a hint: the
// nearest known flag when one is near, or what the value must be.
func TestBadUsageEveryCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string // a substring of stderr
		not  string // not in stderr
	}{
		{"unknown flag, nothing near", []string{"label", "--bogus"}, "pate: unknown flag --bogus\n", "did you mean"},
		{"misspelt flag of label", []string{"label", "--epsilo", "1"}, "unknown flag --epsilo: did you mean --epsilon?", ""},
		{"prefix of a flag", []string{"label", "--eps", "1"}, "unknown flag --eps: did you mean --epsilon?", ""},
		{"misspelt flag of audit", []string{"audit", "--jsn"}, "unknown flag --jsn: did you mean --json?", ""},
		{"audit", []string{"audit", "--bogus"}, "unknown flag --bogus", "-bogus:"},
		{"predict", []string{"predict", "--labelr", "x"}, "did you mean --labeler?", ""},
		{"aggregate", []string{"aggregate", "--vote", "x"}, "did you mean --votes?", ""},
		{"replicate", []string{"replicate", "--bogus"}, "unknown flag --bogus", ""},
		{"analyze", []string{"analyze", "--thresold", "1"}, "did you mean --threshold?", ""},
		{"plan", []string{"plan", "--bogus"}, "unknown flag --bogus", ""},
		{"ledger", []string{"ledger", "--bogus"}, "unknown flag --bogus", ""},
		{"ledger show", []string{"ledger", "show", "--bogus"}, "unknown flag --bogus", ""},
		{"top level", []string{"--bogus"}, "unknown flag --bogus", ""},
		{"a number that is not", []string{"label", "--epsilon", "abc"}, `--epsilon takes a number, got "abc" (for example --epsilon 1)`, "-epsilon:"},
		{"a whole number that is not", []string{"label", "--teachers", "many"}, `--teachers takes a whole number, got "many" (for example --teachers 250)`, ""},
		{"delta out of range", []string{"plan", "--delta", "1e999"}, `--delta: "1e999" is out of range (for example --delta 1e-5)`, ""},
		{"a boolean that is not", []string{"label", "--quiet=maybe"}, `--quiet takes true or false, got "maybe"`, ""},
		{"a value missing", []string{"plan", "--rows"}, "--rows needs a value", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := pate(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing (no help)", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q, want one line with %q", stderr, tc.want)
			}
			if tc.not != "" && strings.Contains(stderr, tc.not) {
				t.Errorf("stderr %q has %q", stderr, tc.not)
			}
		})
	}
}

// TestNearestFlag: a suggestion is made only when a flag is near.
func TestNearestFlag(t *testing.T) {
	cmd := labelCommand(&env{}, new(bool))
	tests := []struct{ typed, want string }{
		{"privat", "--private"},
		{"epsilom", "--epsilon"},
		{"lable", "--label"},
		{"bogus", ""},
		{"x", ""},
		{"teach", "--teachers"},
	}
	for _, tc := range tests {
		if got := nearestFlag(cmd.Flags, tc.typed); got != tc.want {
			t.Errorf("nearestFlag(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}
