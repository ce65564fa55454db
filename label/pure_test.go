package label

import "testing"

func TestRoundDownDecimal(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{2, "2"}, {0.0009137123, "0.0009137"}, {0.00091369999, "0.0009136"}, {1.23456, "1.234"}, {98765, "98760"},
		{1.5e-7, "1.499e-07"}, // the float64 1.5e-7 is just below 15/10⁸
	}
	for _, tc := range tests {
		if got := roundDownDecimal(tc.x, 4); got != tc.want {
			t.Errorf("roundDownDecimal(%v) = %s, want %s", tc.x, got, tc.want)
		}
	}
}
