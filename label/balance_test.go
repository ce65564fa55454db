package label

import "testing"

func TestBalanceCells(t *testing.T) {
	// 8 cells of the majority alone, 2 mixed cells where the minority
	// holds 40%: flipping them costs 0.022 of the expected accuracy.
	var table []int64
	for i := 0; i < 8; i++ {
		table = append(table, 100, 0)
	}
	table = append(table, 30, 20, 30, 20)
	argmax := func(tab []int64) []int {
		var out []int
		for i := 0; i+1 < len(tab); i += 2 {
			c := 0
			if tab[i+1] > tab[i] {
				c = 1
			}
			out = append(out, c)
		}
		return out
	}
	defer func(v float64) { balanceMaxLoss = v }(balanceMaxLoss)
	for _, tc := range []struct {
		name    string
		maxLoss float64
		ones    int // cells whose argmax is the minority after
	}{
		{"off", 0, 0},
		{"the default guard keeps the plain argmax", 0.005, 0},
		{"a looser guard names the minority in the mixed cells", 0.05, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			balanceMaxLoss = tc.maxLoss
			got, b := balanceCells(table, 2, 1000)
			ones := 0
			for _, c := range argmax(got) {
				ones += c
			}
			if ones != tc.ones {
				t.Errorf("%d cells name the minority, want %d (%+v)", ones, tc.ones, b)
			}
			if tc.maxLoss > 0 && (len(b.Shares) != 2 || b.Shares[1] > b.Shares[0]) {
				t.Errorf("shares %v", b.Shares)
			}
			if few, _ := balanceCells(table, 2, balanceMinRows-1); argmax(few)[8] != 0 {
				t.Error("leant on fewer rows than balanceMinRows")
			}
			if table[17] != 20 {
				t.Error("the released table was changed in place")
			}
		})
	}
}
