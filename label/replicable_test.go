package label

import (
	"math"
	"testing"

	"github.com/pate-tool/pate/label/noise"
)

func TestCell(t *testing.T) {
	tests := []struct{ v, off, w, want int64 }{
		{0, 0, 10, 0}, {9, 0, 10, 0}, {10, 0, 10, 1}, {-1, 0, 10, -1}, {-10, 0, 10, -1}, {-11, 0, 10, -2},
		{3, 3, 10, 0}, {2, 3, 10, -1}, {12, 3, 10, 0}, {13, 3, 10, 1}, {5, 0, 1, 5}, {-5, 0, 1, -5},
	}
	for _, tc := range tests {
		if got := cell(tc.v, tc.off, tc.w); got != tc.want {
			t.Errorf("cell(%d, off %d, width %d) = %d, want %d", tc.v, tc.off, tc.w, got, tc.want)
		}
	}
}

// TestRoundedCheck: the noisy top vote is replaced by the midpoint of its
// cell, compared with T.
func TestRoundedCheck(t *testing.T) {
	tests := []struct {
		name      string
		noisyTop  int64
		threshold int64
		off, w    int64
		want      bool
	}{
		{"cell [3,13) has midpoint 8 ≥ 8", 3, 8, 3, 10, true},
		{"top of the same cell", 12, 8, 3, 10, true},
		{"cell [-7,3) has midpoint -2 < 8", 2, 8, 3, 10, false},
		{"midpoint 8 < 9 though 12 ≥ 9", 12, 9, 3, 10, false},
		{"odd width: cell [0,7) midpoint 3.5 ≥ 3", 0, 3, 0, 7, true},
		{"odd width: cell [0,7) midpoint 3.5 < 4", 6, 4, 0, 7, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rr := &rounding{check: tc.w}
			if got := rr.passes(tc.noisyTop, tc.threshold, roundDraw{offCheck: tc.off}); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRoundedArgmax: the highest cell wins; within a cell the row's random
// priority decides, and over many rows each tied class wins about as often.
func TestRoundedArgmax(t *testing.T) {
	r := &rounding{answer: 10}
	zero := []int64{0, 0, 0}
	if got := r.argmax([]int32{5, 25, 15}, zero, roundDraw{}); got != 1 {
		t.Errorf("distinct cells: got class %d, want 1", got)
	}
	wins := make([]int, 3)
	src := noise.NewSeededSource(1, 1)
	const rows = 30000
	for range rows {
		wins[r.argmax([]int32{11, 19, 3}, zero, roundDraw{tie: src.Uint64()})]++
	}
	if wins[2] != 0 {
		t.Errorf("class 2 (a lower cell) won %d times", wins[2])
	}
	for j := 0; j < 2; j++ {
		if f := float64(wins[j]) / rows; math.Abs(f-0.5) > 0.02 {
			t.Errorf("tied class %d wins %.3f of the rows, want 0.5", j, f)
		}
	}
}

// TestReplicableAgreement is the point of --replicable: two curators whose
// top votes on a row differ by Δ, with the same key, disagree on the
// threshold check with probability at most Δ/W with the rounding (W the grid
// width), and more often without it (the shared noise alone is a random
// threshold with density up to 1/(σ√(2π))). Checked over 40,000 keyed rows
// against the exact values.
func TestReplicableAgreement(t *testing.T) {
	const (
		rows  = 40000
		sigma = 40
		tt    = 150
	)
	a, err := newAggregator(MechanismConfidentGNMax, 2, MechanismParams{Threshold: tt, Sigma1: "40", Sigma2: "20"})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("a key shared by two curators")
	tests := []struct {
		name       string
		topA, topB int32
		width      float64
	}{
		{"Δ = 8 at T, grid 4σ", 150, 158, 4},
		{"Δ = 8 at T, grid 8σ", 150, 158, 8},
		{"Δ = 4 below T, grid 4σ", 120, 124, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := newRounding(a, MechanismParams{Sigma1: "40", Sigma2: "20"}, tc.width, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.check != int64(tc.width*sigma) || r.answer != 0 {
				t.Fatalf("grid %+v, want check %g votes and no argmax grid", r, tc.width*sigma)
			}
			a.round = r
			plain, rounded := 0, 0
			check := make([]int64, 1)
			answer := make([]int64, 2)
			for row := range rows {
				src := noise.NewKeyedSource(key, uint64(row))
				a.noiseFor(src, check, answer)
				rd := r.draw(src)
				if a.passes(int64(tc.topA)+check[0], nil) != a.passes(int64(tc.topB)+check[0], nil) {
					plain++
				}
				if a.passes(int64(tc.topA)+check[0], &rd) != a.passes(int64(tc.topB)+check[0], &rd) {
					rounded++
				}
			}
			delta := float64(tc.topB - tc.topA)
			bound := delta / float64(r.check)
			// Without rounding: P(T − topB ≤ z < T − topA) for z ~ N(0, σ²).
			phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/(sigma*math.Sqrt2)) }
			wantPlain := phi(float64(tt-tc.topA)) - phi(float64(tt-tc.topB))
			fp, fr := float64(plain)/rows, float64(rounded)/rows
			se := func(p float64) float64 { return 4 * math.Sqrt(p*(1-p)/rows) }
			t.Logf("%s: disagreement %.4f without rounding (exact %.4f), %.4f with (bound Δ/W = %.4f)", tc.name, fp, wantPlain, fr, bound)
			if math.Abs(fp-wantPlain) > se(wantPlain) {
				t.Errorf("shared noise: %.4f, want %.4f", fp, wantPlain)
			}
			if fr > bound+se(bound) {
				t.Errorf("rounded: %.4f exceeds Δ/W = %.4f", fr, bound)
			}
			if tc.topA >= tt && fr >= fp {
				t.Errorf("rounding does not lower the disagreement near T: %.4f vs %.4f", fr, fp)
			}
		})
	}
	a.round = nil
}
