package label

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestDPLogRegDiscoversClasses: --mechanism dp-logreg without --classes
// releases the class set privately first (charged, in the report), trains
// on the classes released, and its report audits: the discovery's ρ and the
// model's both re-derived from the budget. The chooser already ran
// dp-logreg this way; asked for by name it refused.
func TestDPLogRegDiscoversClasses(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	sens := hostileRows(mem, 1500, 1, true)
	defer sens.Release()
	pub := hostileRows(mem, 200, 2, false)
	defer pub.Release()
	seed := uint64(5)
	cfg := Config{Label: "y", Mechanism: MechanismDPLogReg, Epsilon: 2, Delta: 1e-5,
		Seed: &seed, Allocator: mem, BatchSize: 1024, Teachers: 10, Learner: "logreg"}
	l, err := New(cfg, hostileSchema(true), hostileSchema(false))
	if err != nil {
		t.Fatalf("New without --classes: %v", err)
	}
	out := &collect{}
	rep, err := l.Run(context.Background(), &memReader{schema: sens.Schema(), recs: []arrow.Record{sens}},
		&memReader{schema: pub.Schema(), recs: []arrow.Record{pub}}, out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ClassDiscovery == nil || !slices.Equal(rep.Classes, []string{"0", "1"}) {
		t.Fatalf("classes %v, discovery %+v: want both classes released privately", rep.Classes, rep.ClassDiscovery)
	}
	if rep.DPLogReg == nil || len(out.labels) != 200 {
		t.Fatalf("dp_logreg section %v, %d labels", rep.DPLogReg, len(out.labels))
	}
	res, err := Audit(rep)
	if err != nil || !res.Holds {
		t.Fatalf("audit: %v (holds %v)", err, res != nil && res.Holds)
	}
	if !(float64(res.DiscoveryRho) > 0) {
		t.Errorf("the audit re-derived no discovery ρ")
	}
}
