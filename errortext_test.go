package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pate-tool/pate/label"
)

// TestErrorText: a label.ParamError anywhere in an error's chain is shown
// with flags, the rest of the message left as it is.
func TestErrorText(t *testing.T) {
	pe := &label.ParamError{Param: "label-weights", Format: " splits the %v budget, got %q", Args: []any{label.ParamName("epsilon"), "--x"}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"bare", pe, `--label-weights splits the --epsilon budget, got "--x"`},
		{"wrapped", fmt.Errorf("--private data.csv: %w", pe), `--private data.csv: --label-weights splits the --epsilon budget, got "--x"`},
		{"joined", errors.Join(errors.New("first"), pe), "first\n" + `--label-weights splits the --epsilon budget, got "--x"`},
		{"nested", fmt.Errorf("invalid input: %w", &label.ParamError{Param: "gamma", Format: ": %v", Args: []any{&label.ParamError{Param: "gamma", Format: " must be positive, got %s", Args: []any{"-1"}}}}),
			"invalid input: --gamma: --gamma must be positive, got -1"},
		{"no parameter", errors.New("disk full"), "disk full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorText(tc.err); got != tc.want {
				t.Errorf("errorText = %q, want %q", got, tc.want)
			}
		})
	}
}
