package learners

import (
	"math"
	"math/rand/v2"
	"testing"
)

func stumpMatrix(rows [][]float32) *Matrix {
	m := NewMatrix(len(rows), len(rows[0]))
	for i, r := range rows {
		copy(m.Row(i), r)
	}
	return m
}

func TestPublicSplits(t *testing.T) {
	tests := []struct {
		name string
		x    [][]float32
		bins int
		want []Split
	}{
		{"quartiles", [][]float32{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}}, 4, []Split{{0, 3}, {0, 5}, {0, 7}}},
		{"binary feature", [][]float32{{0, 5}, {1, 5}, {0, 5}, {1, 5}}, 32, []Split{{0, 0}}}, // a constant feature has no split
		{"duplicates merge", [][]float32{{1}, {1}, {1}, {2}}, 4, []Split{{0, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PublicSplits(stumpMatrix(tc.x), tc.bins)
			if len(got) != len(tc.want) {
				t.Fatalf("splits %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("split %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestStumpErrors checks the sweep against a brute-force count of every
// hypothesis's errors.
func TestStumpErrors(t *testing.T) {
	rows := [][]float32{{0.5, 3}, {1, 1}, {2, 2}, {2, 0}, {3, 5}, {4, 1}, {5, 4}}
	y := []int32{0, 2, 1, -1, 1, 0, 2} // -1: a label outside the class set
	X := stumpMatrix(rows)
	splits := []Split{{0, 1}, {0, 2}, {0, 4.5}, {1, 0.5}, {1, 2}, {1, 4}}
	const classes = 3
	errs := StumpErrors(X, y, classes, splits)
	hyps := Stumps(splits, classes)
	if len(errs) != len(hyps) || len(hyps) != len(splits)*classes*(classes-1) {
		t.Fatalf("%d errors for %d hypotheses", len(errs), len(hyps))
	}
	for i, h := range hyps {
		var want int64
		for r, row := range rows {
			if y[r] >= 0 && h.Predict(row) != y[r] {
				want++
			}
		}
		if errs[i] != want {
			t.Errorf("hypothesis %+v: %d errors, want %d", h, errs[i], want)
		}
	}
}

// TestStumpIndexLabellings: the candidates are exactly one stump per
// distinct labelling of S1 by the stump class (brute force over every
// threshold and class pair), and their errors are counted right.
func TestStumpIndexLabellings(t *testing.T) {
	rows := [][]float32{{0, 3}, {1, 1}, {1, 2}, {2, 0}, {3, 5}, {4, 1}, {5, 4}, {5, 5}}
	y := []int32{0, 2, 1, -1, 1, 0, 2, 2}
	const classes = 3
	s := NewStumpIndex(stumpMatrix(rows), y, classes)
	for _, s1 := range [][]int32{{0, 1, 2, 3, 4, 5, 6, 7}, {1, 2}, {4}, {}} {
		cands := s.Labellings(s1, rand.New(rand.NewPCG(1, 2)))
		key := func(h Stump) string {
			b := make([]byte, len(s1))
			for i, r := range s1 {
				b[i] = byte(h.Predict(rows[r]))
			}
			return string(b)
		}
		got := map[string]bool{}
		for _, h := range cands {
			k := key(h)
			if got[k] {
				t.Errorf("S1 %v: labelling %v twice", s1, []byte(k))
			}
			got[k] = true
		}
		want := map[string]bool{}
		for f := 0; f < 2; f++ {
			thrs := []float32{float32(math.Inf(-1)), float32(math.Inf(1))}
			for _, r := range rows {
				thrs = append(thrs, r[f])
			}
			for _, thr := range thrs {
				for a := int32(0); a < classes; a++ {
					for b := int32(0); b < classes; b++ {
						if a != b {
							want[key(Stump{f, thr, a, b})] = true
						}
					}
				}
			}
		}
		if len(got) != len(want) {
			t.Errorf("S1 %v: %d distinct labellings, brute force %d", s1, len(got), len(want))
		}
		for k := range want {
			if !got[k] {
				t.Errorf("S1 %v: labelling %v missing", s1, []byte(k))
			}
		}
		for _, h := range cands {
			var e int64
			for r, row := range rows {
				if y[r] >= 0 && h.Predict(row) != y[r] {
					e++
				}
			}
			if s.Errors(h) != e {
				t.Errorf("stump %+v: %d errors, brute force %d", h, s.Errors(h), e)
			}
		}
	}
}
