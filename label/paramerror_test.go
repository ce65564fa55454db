package label

import (
	"errors"
	"strings"
	"testing"
)

// TestParamError: validation names the parameter at fault in a ParamError
// that matches ErrInvalidInput, whose message names every parameter as
// the caller shows it.
func TestParamError(t *testing.T) {
	flag := func(p string) string { return "--" + p }
	tests := []struct {
		name    string
		cfg     Config
		param   string
		plain   string // Message(PlainName)
		asFlags string // Message(flag)
	}{
		{"teachers", Config{Teachers: 0, Delta: 1e-5, BatchSize: 1}, "teachers",
			"teachers must be at least 1, got 0", "--teachers must be at least 1, got 0"},
		{"epsilon", Config{Teachers: 3, Epsilon: -1, Delta: 1e-5, BatchSize: 1}, "epsilon",
			"epsilon must be positive, got -1", "--epsilon must be positive, got -1"},
		{"mechanism", Config{Mechanism: "nope", Teachers: 3, Delta: 1e-5, BatchSize: 1}, "mechanism",
			`mechanism "nope" is not one of ` + strings.Join(Mechanisms, ", "),
			`--mechanism "nope" is not one of ` + strings.Join(Mechanisms, ", ")},
		{"another parameter named", Config{Teachers: 3, Delta: 1e-5, BatchSize: 1, Params: MechanismParams{Sigma1: "1", Sigma2: "1"}, Labels: []string{"a"}, LabelWeights: []float64{1}}, "label-weights",
			"label-weights splits the epsilon budget; without epsilon the noise is explicit and the same for every label column",
			"--label-weights splits the --epsilon budget; without --epsilon the noise is explicit and the same for every label column"},
		{"noise neither given nor planned", Config{Teachers: 3, Delta: 1e-5, BatchSize: 1}, "epsilon",
			"give epsilon (the noise is then planned from it) or sigma1 and sigma2",
			"give --epsilon (the noise is then planned from it) or --sigma1 and --sigma2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			err := validate(&cfg)
			if err == nil {
				err = validateLabels(&cfg)
			}
			var pe *ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is no ParamError", err)
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("error %v does not match ErrInvalidInput", err)
			}
			if pe.Param != tc.param {
				t.Errorf("Param %q, want %q", pe.Param, tc.param)
			}
			if got := pe.Message(PlainName); got != tc.plain {
				t.Errorf("Message(PlainName) = %q, want %q", got, tc.plain)
			}
			if got := pe.Message(flag); got != tc.asFlags {
				t.Errorf("Message(flag) = %q, want %q", got, tc.asFlags)
			}
			if got, want := err.Error(), "invalid input: "+tc.plain; got != want {
				t.Errorf("Error() = %q, want %q", got, want)
			}
		})
	}
}
