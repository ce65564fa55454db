package label

import (
	"math"
	"strconv"
	"testing"
)

func TestRoundUpDecimal(t *testing.T) {
	tests := []struct {
		x      float64
		digits int
		want   string
	}{
		{118.7712, 4, "118.8"},
		{40, 4, "40.00"},
		{0.0123451, 3, "0.0124"},
		{123456, 2, "130000"},
		{6.23, 3, "6.23"},
	}
	for _, tc := range tests {
		got := roundUpDecimal(tc.x, tc.digits)
		g, _ := strconv.ParseFloat(got, 64)
		w, _ := strconv.ParseFloat(tc.want, 64)
		if g != w || g < tc.x {
			t.Errorf("roundUpDecimal(%g, %d) = %s, want %s", tc.x, tc.digits, got, tc.want)
		}
	}
}

func TestDiscreteGaussianTailPoint(t *testing.T) {
	tests := []struct{ sigma, p float64 }{{1, 1e-3}, {10, 1e-6}, {15.9, 1e-7}, {40, 1e-9}}
	for _, tc := range tests {
		tp := discreteGaussianTailPoint(tc.sigma, tc.p)
		// Continuous Gaussian tail as a cross-check: Pr[Z ≥ t] ≈ ½erfc(t/(σ√2)).
		tail := func(t int64) float64 { return 0.5 * math.Erfc((float64(t)-0.5)/(tc.sigma*math.Sqrt2)) }
		if tail(tp) > tc.p*1.5 || tail(tp-1) < tc.p/1.5 {
			t.Errorf("σ=%g p=%g: tail point %d (tails %g, %g)", tc.sigma, tc.p, tp, tail(tp-1), tail(tp))
		}
	}
}

func TestTimelineThinsItself(t *testing.T) {
	st := &runState{filter: &unlimited{}, step: timelineStep(-1)}
	for row := int64(1); row <= 10_000_000; row++ {
		if row%st.step == 0 {
			st.mark(row)
		}
	}
	if n := len(st.timeline); n > maxTimeline || n < maxTimeline/2 {
		t.Fatalf("%d timeline points for 10M rows", n)
	}
	for i := 1; i < len(st.timeline); i++ {
		if st.timeline[i].Rows <= st.timeline[i-1].Rows {
			t.Fatalf("timeline out of order at %d", i)
		}
	}
}

func TestChoosePlan(t *testing.T) {
	adult := PlanInputs{Epsilon: 1, Delta: 1e-5, Teachers: 250, PublicRows: 16281, Labels: 1}
	with := func(f func(*PlanInputs)) PlanInputs {
		in := adult
		f(&in)
		return in
	}
	tests := []struct {
		name        string
		in          PlanInputs
		wantStudent string
		wantSelect  string
		wantMech    string
	}{
		{"default", adult, DefaultStudent, SelectUncertain, MechanismConfidentGNMax},
		{"gnmax asked for", with(func(in *PlanInputs) { in.Mechanism = MechanismGNMax }), DefaultStudent, SelectUncertain, MechanismGNMax},
		{"teachers only", with(func(in *PlanInputs) { in.TeachersOnly = true }), "", SelectFirst, MechanismConfidentGNMax},
		{"stream of unknown length", with(func(in *PlanInputs) { in.PublicRows = -1 }), "", SelectFirst, MechanismConfidentGNMax},
		{"two labels", with(func(in *PlanInputs) { in.Labels = 2 }), "", SelectFirst, MechanismConfidentGNMax},
		{"replicable", with(func(in *PlanInputs) { in.Replicable = true }), "", SelectFirst, MechanismConfidentGNMax},
		{"svt", with(func(in *PlanInputs) { in.Mechanism = MechanismSVT }), "", SelectFirst, MechanismSVT},
		{"no budget, no noise", with(func(in *PlanInputs) { in.Epsilon = 0 }), "", SelectFirst, MechanismConfidentGNMax},
		{"no budget, explicit noise", with(func(in *PlanInputs) {
			in.Epsilon, in.Mechanism, in.Params = 0, MechanismGNMax, MechanismParams{Sigma: "40"}
		}), DefaultStudent, SelectUncertain, MechanismGNMax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ChoosePlan(tc.in)
			if p.Student != tc.wantStudent || p.Select != tc.wantSelect || p.Mechanism != tc.wantMech {
				t.Fatalf("plan %+v, want student %q, select %q, mechanism %q", p, tc.wantStudent, tc.wantSelect, tc.wantMech)
			}
			if p.Why == "" {
				t.Errorf("plan %+v says nothing of why", p)
			}
			if (p.Student != "") != (p.MaxQueries > 0) {
				t.Errorf("plan %+v: a student plan has a query count, a teacher-only one none", p)
			}
		})
	}
}

// TestDefaultQueries: the default query count follows n = c·k·√(ρ/r): on
// Adult's public quantities it lands where the student does best (≈300 at
// ε = 0.5, ≈600 at ε = 1, 1,000–1,500 at ε = 2), grows with ε and the
// teachers, and never exceeds half the public rows.
func TestDefaultQueries(t *testing.T) {
	tests := []struct {
		name     string
		in       PlanInputs
		min, max int64
	}{
		{"adult ε 0.5", PlanInputs{Epsilon: 0.5, Delta: 1e-5, Teachers: 250, PublicRows: 16281}, 250, 350},
		{"adult ε 1", PlanInputs{Epsilon: 1, Delta: 1e-5, Teachers: 250, PublicRows: 16281}, 550, 650},
		{"adult ε 2", PlanInputs{Epsilon: 2, Delta: 1e-5, Teachers: 250, PublicRows: 16281}, 1000, 1500},
		{"adult ε 1, classes declared", PlanInputs{Epsilon: 1, Delta: 1e-5, Teachers: 250, PublicRows: 16281, Classes: []string{"0", "1"}}, 550, 700},
		{"twice the teachers", PlanInputs{Epsilon: 1, Delta: 1e-5, Teachers: 500, PublicRows: 16281}, 1100, 1300},
		{"few public rows", PlanInputs{Epsilon: 8, Delta: 1e-5, Teachers: 250, PublicRows: 301}, 151, 151},
		{"gnmax σ 40 without a budget", PlanInputs{Mechanism: MechanismGNMax, Params: MechanismParams{Sigma: "40"}, Teachers: 250, PublicRows: 1e6}, 4700, 4750},
		{"no budget, no noise", PlanInputs{Teachers: 250, PublicRows: 16281}, 0, 0},
		{"no such mechanism", PlanInputs{Mechanism: "no such mechanism", Epsilon: 1, Delta: 1e-5, Teachers: 250, PublicRows: 16281}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if n := DefaultQueries(tc.in); n < tc.min || n > tc.max {
				t.Errorf("DefaultQueries = %d, want in [%d, %d]", n, tc.min, tc.max)
			}
		})
	}
}

func TestNoiseBeyondVotes(t *testing.T) {
	tests := []struct {
		mech     string
		p        MechanismParams
		teachers int
		want     bool
	}{
		{MechanismGNMax, MechanismParams{Sigma: "40"}, 250, false},
		{MechanismGNMax, MechanismParams{Sigma: "40"}, 20, true},
		{MechanismConfidentGNMax, MechanismParams{Sigma1: "600", Sigma2: "300"}, 250, true},
		{MechanismConfidentGNMax, MechanismParams{Sigma1: "240", Sigma2: "120"}, 250, false},
		{MechanismLNMax, MechanismParams{LaplaceScale: "400"}, 250, true}, // the σ of the same ρ per answer: 400/√2
		{MechanismLNMax, MechanismParams{LaplaceScale: "200"}, 250, false},
		{"no such mechanism", MechanismParams{Sigma: "1e6"}, 1, false},
		{MechanismSVT, MechanismParams{}, 1, false},
	}
	for _, tc := range tests {
		if _, got := NoiseBeyondVotes(tc.mech, tc.p, tc.teachers); got != tc.want {
			t.Errorf("NoiseBeyondVotes(%s, %+v, %d) = %v, want %v", tc.mech, tc.p, tc.teachers, got, tc.want)
		}
	}
}
