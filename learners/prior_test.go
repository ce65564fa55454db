package learners

import (
	"math"
	"testing"
)

// rowsOf repeats each probability row n times.
func rowsOf(parts ...struct {
	n int
	p []float64
}) []float64 {
	var out []float64
	for _, pt := range parts {
		for i := 0; i < pt.n; i++ {
			out = append(out, pt.p...)
		}
	}
	return out
}

type part = struct {
	n int
	p []float64
}

func TestBalanceAlpha(t *testing.T) {
	// 80 rows sure of the majority, 20 that lean to it less: the plain
	// argmax never names the minority (expected accuracy 0.88, balanced
	// 0.5); from α = 0.25 the 20 rows go to it (0.84, 0.765).
	leaning := rowsOf(part{80, []float64{0.95, 0.05}}, part{20, []float64{0.6, 0.4}})
	tests := []struct {
		name    string
		probs   []float64
		weight  []float64
		k       int
		maxLoss float64
		alpha   float64
		acc, ba float64
	}{
		{"the minority costs too much expected accuracy", leaning, nil, 2, 0.005, 0, 0.88, 0.5},
		{"a looser guard takes the weakest α that names it", leaning, nil, 2, 0.05, 0.25, 0.84, (76.0/88 + 8.0/12) / 2},
		{"a model that cannot tell the classes apart", rowsOf(part{100, []float64{0.7, 0.3}}), nil, 2, 0.05, 0, 0.7, 0.5},
		{"weights count as repeated rows", rowsOf(part{1, []float64{0.95, 0.05}}, part{1, []float64{0.6, 0.4}}), []float64{80, 20}, 2, 0.05, 0.25, 0.84, (76.0/88 + 8.0/12) / 2},
		{"a minority the model tells apart costs nothing", rowsOf(part{90, []float64{0.99, 0.01}}, part{10, []float64{0.45, 0.55}}), nil, 2, 0.005, 0, 0.946, 0},
		{"one class", rowsOf(part{3, []float64{1}}), nil, 1, 0.05, 0, 0, 0},
		// Shares 0.725 and 0.275, above half an even share: left as they are.
		{"classes about even", rowsOf(part{50, []float64{0.9, 0.1}}, part{50, []float64{0.55, 0.45}}), nil, 2, 0.5, 0, 0.725, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := BalanceAlpha(tc.probs, tc.weight, tc.k, tc.maxLoss, 1e-3)
			if b.Alpha != tc.alpha {
				t.Fatalf("α = %g, want %g (%+v)", b.Alpha, tc.alpha, b)
			}
			if tc.k < 2 {
				return
			}
			if math.Abs(b.Acc-tc.acc) > 1e-9 || (tc.ba > 0 && math.Abs(b.BA-tc.ba) > 1e-9) {
				t.Errorf("expected accuracy %g, balanced %g; want %g, %g", b.Acc, b.BA, tc.acc, tc.ba)
			}
			if b.Acc < b.PlainAcc-tc.maxLoss || b.BA < b.PlainBA {
				t.Errorf("the guard let through %+v", b)
			}
			sum := 0.0
			for _, s := range b.Shares {
				sum += s
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("shares %v do not sum to 1", b.Shares)
			}
		})
	}
}

func TestBalancedLinear(t *testing.T) {
	// One feature: class 1's score is 3x − 2.5, class 0's 0. Rows at
	// x = 0 (80) and x = 0.75 (20): the plain argmax says 0 everywhere.
	m := &linearModel{classes: 2, dim: 1, w: []float32{0, 3}, b: []float32{0, -2.5}}
	x := NewMatrix(0, 1)
	for i := 0; i < 100; i++ {
		v := float32(0)
		if i >= 80 {
			v = 0.75
		}
		x.Data = append(x.Data, v)
		x.Rows++
	}
	for _, tc := range []struct {
		name    string
		maxLoss float64
		ones    int // rows labelled 1 after
	}{
		{"guarded", 0.001, 0},
		{"loose", 0.1, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, b, err := BalancedLinear(m, x, tc.maxLoss, 1e-3)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]int32, x.Rows)
			got.Predict(x, out)
			ones := 0
			for _, c := range out {
				ones += int(c)
			}
			if ones != tc.ones {
				t.Errorf("%d rows labelled 1, want %d (%+v)", ones, tc.ones, b)
			}
			if m.b[1] != -2.5 {
				t.Error("the model given was changed")
			}
		})
	}
	// Not linear: returned as it is.
	cm := &cellModel{}
	if got, _, err := BalancedLinear(cm, x, 0.1, 1e-3); err != nil || got != Model(cm) {
		t.Errorf("a non-linear model: %v, %v", got, err)
	}
}
