package label

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// FuzzParseReport feeds arbitrary bytes to the report parser (pate audit
// reads reports from strangers). Whatever parses must audit without a
// panic, and must survive a marshal → parse round trip unchanged.
func FuzzParseReport(f *testing.F) {
	for _, p := range []string{"testdata/report_seed.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"schema_version":1,"tool":"pate","mechanism":"gnmax","parameters":{"sigma":"40"}}`))
	f.Add([]byte(`{"schema_version":1,"tool":"pate","mechanism":"confident-gnmax","parameters":{"threshold":200,"sigma1":"150","sigma2":"40"},"spent":{"threshold_checks":10,"noisy_argmaxes":5},"guarantee":{"epsilon":"inf","delta":1e-5,"rho":1}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := ParseReport(b)
		if err != nil {
			return
		}
		_, _ = Audit(rep)
		again, err := json.Marshal(rep)
		if err != nil {
			return // a Float that JSON cannot hold is refused, not mangled
		}
		rep2, err := ParseReport(again)
		if err != nil {
			t.Fatalf("a parsed report does not parse again: %v\n%s", err, again)
		}
		again2, _ := json.Marshal(rep2)
		if !bytes.Equal(again, again2) {
			t.Fatalf("round trip changed the report:\n%s\n%s", again, again2)
		}
	})
}

// FuzzAggregateVotes builds a counts vote file from arbitrary bytes (each
// byte a signed count, 3 classes) and aggregates it: invalid rows must be
// refused with an error, valid ones labelled within the class set, and
// every row accounted for.
func FuzzAggregateVotes(f *testing.F) {
	f.Add([]byte{10, 0, 0, 5, 5, 0, 0, 0, 10}, uint8(10))
	f.Add([]byte{255, 3, 4}, uint8(7))
	f.Add([]byte{9, 9, 9}, uint8(10))
	f.Fuzz(func(t *testing.T, b []byte, teachers uint8) {
		const m = 3
		n := len(b) / m
		if n == 0 || n > 2000 || teachers == 0 {
			return
		}
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		defer mem.AssertSize(t, 0)
		fields := []arrow.Field{{Name: "class_0", Type: arrow.PrimitiveTypes.Int8}, {Name: "class_1", Type: arrow.PrimitiveTypes.Int8}, {Name: "class_2", Type: arrow.PrimitiveTypes.Int8}}
		s := arrow.NewSchema(fields, nil)
		rb := array.NewRecordBuilder(mem, s)
		valid := true
		for i := 0; i < n; i++ {
			total := 0
			for j := 0; j < m; j++ {
				v := int8(b[i*m+j])
				rb.Field(j).(*array.Int8Builder).Append(v)
				if v < 0 {
					valid = false
				}
				total += int(v)
			}
			if total > int(teachers) {
				valid = false
			}
		}
		votes := &memReader{schema: s, recs: []arrow.Record{rb.NewRecord()}}
		rb.Release()
		defer votes.release()
		seed := uint64(1)
		l, err := NewAggregate(Config{Teachers: int(teachers), Mechanism: MechanismGNMax, Params: MechanismParams{Sigma: "2"},
			Delta: 1e-5, PublicRows: int64(n), Seed: &seed, BatchSize: 7, Allocator: mem}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := &collect{}
		_, err = l.RunVotes(context.Background(), votes, nil, out)
		if valid != (err == nil) {
			t.Fatalf("valid = %v but error = %v", valid, err)
		}
		if err != nil {
			return
		}
		if len(out.labels) != n {
			t.Fatalf("%d labels for %d rows", len(out.labels), n)
		}
		for i, c := range out.labels {
			if c < -1 || c >= m || (c == -1) != (out.sources[i] != SourceTeachers) {
				t.Fatalf("row %d: label %d from %s", i, c, out.sources[i])
			}
		}
	})
}
