package label

import (
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestPhases: a run reports its stages in order, from its start (reading)
// to the labelling, with the stages of its mechanism between, and
// dp-logreg counts its planned gradient steps one by one.
func TestPhases(t *testing.T) {
	tests := []struct {
		mechanism string
		want      []string // the stages, each once, in order
		steps     bool     // dp-logreg's steps counted
	}{
		{MechanismCellHistogram, []string{PhaseReading, PhaseTraining, PhaseCells, PhaseLabelling}, false},
		{MechanismDPLogReg, []string{PhaseReading, PhaseTraining, PhaseDPLogReg, PhaseLabelling}, true},
		{MechanismGNMax, []string{PhaseReading, PhaseTraining, PhaseLabelling}, false},
	}
	for _, tc := range tests {
		t.Run(tc.mechanism, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			priv, pub := syntheticPair(mem, 600, 300, 4, 3, 100)
			defer priv.release()
			defer pub.release()
			seed := uint64(5)
			var names []string
			var done []int
			total := 0
			cfg := Config{Mechanism: tc.mechanism, Epsilon: 2, Delta: 1e-5, Seed: &seed, Label: "label",
				Classes: []string{"0", "1", "2"}, Teachers: 5, Learner: "logreg", BatchSize: 100, PublicRows: 300, Allocator: mem,
				Phase: func(p Phase) {
					if len(names) == 0 || names[len(names)-1] != p.Name {
						names = append(names, p.Name)
					}
					if p.Name == PhaseDPLogReg {
						done, total = append(done, p.Done), p.Total
					}
				}}
			runCollect(t, cfg, priv, pub)
			if !slices.Equal(names, tc.want) {
				t.Errorf("stages %q, want %q", names, tc.want)
			}
			if tc.steps {
				if total < 1 || len(done) != total || done[0] != 1 || done[total-1] != total {
					t.Errorf("steps %v of %d, want 1…%d", done, total, total)
				}
			}
		})
	}
}
