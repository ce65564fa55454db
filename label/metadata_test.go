package label

import (
	"encoding/json"
	"testing"
)

// TestOutputMetadata: without a budget ε is pending and room is kept for
// it; the embedded report fits its reserve however long the timeline, and
// keeps the timeline's last point.
func TestOutputMetadata(t *testing.T) {
	tests := []struct {
		name        string
		epsilon     float64
		points      int
		wantEpsilon string
		wantReserve int // keys reserved
	}{
		{"budget, short timeline", 2, 200, "2", 1},
		{"no budget, long timeline", 0, 100_000, "pending", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Epsilon: tc.epsilon, Delta: 1e-5, Mechanism: MechanismGNMax, Version: "test"}
			meta := OutputMetadata(cfg)
			if got := meta.Values()[meta.FindKey("pate.epsilon")]; got != tc.wantEpsilon {
				t.Errorf("pate.epsilon %q, want %q", got, tc.wantEpsilon)
			}
			reserve := MetadataReserve(cfg)
			if len(reserve) != tc.wantReserve {
				t.Errorf("reserved %v", reserve)
			}
			rep := &Report{}
			for i := 0; i < tc.points; i++ {
				rep.Timeline = append(rep.Timeline, TimePoint{Rows: int64(i) * 1000, Queries: int64(i), Answered: int64(i), Rho: Float(i) / 7})
			}
			final := FinalMetadata(cfg, rep)
			if len(final) != len(reserve) {
				t.Errorf("final keys %d, reserved %d", len(final), len(reserve))
			}
			for k, v := range final {
				if len(v) > reserve[k] {
					t.Errorf("%s: %d bytes, reserved %d", k, len(v), reserve[k])
				}
			}
			var back Report
			if err := json.Unmarshal([]byte(final["pate.report"]), &back); err != nil {
				t.Fatal(err)
			}
			last := back.Timeline[len(back.Timeline)-1]
			if last != rep.Timeline[len(rep.Timeline)-1] {
				t.Errorf("last point %+v, want %+v", last, rep.Timeline[len(rep.Timeline)-1])
			}
			if tc.points <= 200 && len(back.Timeline) != tc.points {
				t.Errorf("a short timeline was thinned to %d points", len(back.Timeline))
			}
		})
	}
}

// TestChosenMechanismReserved: a run that chooses its mechanism keeps room
// for pate.mechanism and completes it with the mechanism that ran (the
// report's); any mechanism's name fits the room.
func TestChosenMechanismReserved(t *testing.T) {
	cfg := Config{Epsilon: 1, Delta: 1e-5, Mechanism: MechanismConfidentGNMax, Choose: true, Version: "test"}
	reserve := MetadataReserve(cfg)
	for _, mech := range Mechanisms {
		final := FinalMetadata(cfg, &Report{Mechanism: mech})
		if got := final["pate.mechanism"]; got != mech || len(got) > reserve["pate.mechanism"] {
			t.Errorf("pate.mechanism %q (room %d), want %q", got, reserve["pate.mechanism"], mech)
		}
	}
	cfg.Choose = false
	if _, ok := FinalMetadata(cfg, &Report{Mechanism: MechanismGNMax})["pate.mechanism"]; ok {
		t.Errorf("a run that does not choose patches pate.mechanism")
	}
}
