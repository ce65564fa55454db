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
		{"bare", pe, `invalid input: --label-weights splits the --epsilon budget, got "--x"`},
		{"wrapped", fmt.Errorf("--private data.csv: %w", pe), `--private data.csv: invalid input: --label-weights splits the --epsilon budget, got "--x"`},
		{"joined", errors.Join(errors.New("first"), pe), "first\n" + `invalid input: --label-weights splits the --epsilon budget, got "--x"`},
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
