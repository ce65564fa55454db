package learners

import (
	"errors"
	"math"
	"testing"
)

// TestEncodeModelRoundTrip: every model a learner fits (the students and
// the DP logistic regression) decodes from its stored form into a model
// that predicts the same classes and probabilities, bit for bit.
func TestEncodeModelRoundTrip(t *testing.T) {
	x, y := blobs(400, 5, 3, 21)
	dp := func() Learner {
		p, err := PlanDPLogReg(x.Cols, 3, 400, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		return &DPLogReg{Params: p, Noise: roundedNoise(5, 10), Rand: newBits(6)}
	}
	tests := []struct {
		name string
		l    func() Learner
		kind string
	}{
		{"logreg", func() Learner { l, _ := NewLearner("logreg", LearnerOptions{}); return l }, ModelLinear},
		{"nb", func() Learner { l, _ := NewLearner("nb", LearnerOptions{}); return l }, ModelGaussianNB},
		{"tree", func() Learner { l, _ := NewLearner("tree", LearnerOptions{MaxDepth: 5}); return l }, ModelTree},
		{"dp-logreg", dp, ModelLinearRowNorm},
		{"gbt", func() Learner { return &GBT{Bins: PublicBins(x, 16), Rounds: 20} }, ModelGBT},
		{"gbt, own bins, depth 4", func() Learner { return &GBT{Rounds: 10, Depth: 4} }, ModelGBT},
		{"knn", func() Learner { l, _ := NewLearner("knn", LearnerOptions{Neighbors: 7}); return l }, ModelKNN},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.l().Fit(x, y, 3)
			if err != nil {
				t.Fatal(err)
			}
			kind, b, err := EncodeModel(m)
			if err != nil || kind != tc.kind {
				t.Fatalf("EncodeModel: kind %q, err %v; want %q", kind, err, tc.kind)
			}
			m2, err := DecodeModel(kind, b, 3, x.Cols)
			if err != nil {
				t.Fatal(err)
			}
			p1, p2 := make([]int32, x.Rows), make([]int32, x.Rows)
			m.Predict(x, p1)
			m2.Predict(x, p2)
			for i := range p1 {
				if p1[i] != p2[i] {
					t.Fatalf("row %d: class %d before storing, %d after", i, p1[i], p2[i])
				}
			}
			q1, q2 := make([]float32, 3*x.Rows), make([]float32, 3*x.Rows)
			m.(ProbModel).PredictProba(x, q1)
			m2.(ProbModel).PredictProba(x, q2)
			for i := range q1 {
				if math.Float32bits(q1[i]) != math.Float32bits(q2[i]) {
					t.Fatalf("probability %d: %g before storing, %g after", i, q1[i], q2[i])
				}
			}
			// Every cut and a wrong shape are errors, never panics.
			for n := 0; n < len(b); n += 1 + len(b)/50 {
				if _, err := DecodeModel(kind, b[:n], 3, x.Cols); !errors.Is(err, ErrModelFormat) {
					t.Fatalf("cut at %d of %d bytes: %v, want ErrModelFormat", n, len(b), err)
				}
			}
			if _, err := DecodeModel(kind, append(b, 0), 3, x.Cols); !errors.Is(err, ErrModelFormat) {
				t.Errorf("a trailing byte: %v, want ErrModelFormat", err)
			}
			if kind != ModelTree {
				if _, err := DecodeModel(kind, b, 3, x.Cols+1); !errors.Is(err, ErrModelFormat) {
					t.Errorf("wrong dim: %v, want ErrModelFormat", err)
				}
			}
			if _, err := DecodeModel(kind, b, 2, x.Cols); !errors.Is(err, ErrModelFormat) {
				t.Errorf("wrong classes: %v, want ErrModelFormat", err)
			}
		})
	}
}

// TestDecodeTreeRejectsCycles: a stored tree whose child points back up
// (a walk that would never end) or past the nodes is refused.
func TestDecodeTreeRejectsCycles(t *testing.T) {
	tests := []struct {
		name        string
		left, right int32
	}{
		{"self", 0, 1},
		{"past the end", 1, 5},
		{"negative", -3, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &treeModel{classes: 2, nodes: []treeNode{
				{feature: 0, left: tc.left, right: tc.right},
				{feature: -1, class: 1},
			}, proba: make([]float32, 4)}
			kind, b, err := EncodeModel(m)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := DecodeModel(kind, b, 2, 3); !errors.Is(err, ErrModelFormat) {
				t.Errorf("got %v, want ErrModelFormat", err)
			}
		})
	}
}
