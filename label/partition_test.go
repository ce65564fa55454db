package label

import (
	"fmt"
	"testing"

	"github.com/pate-tool/pate/label/noise"
)

func TestPartitionerIsAFunctionOfTheUnit(t *testing.T) {
	tests := []struct {
		name  string
		k     int
		units int
	}{
		{"250 teachers", 250, 32561},
		{"3 teachers", 3, 1000},
		{"1 teacher", 1, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPartitioner(tc.k, noise.NewSeededSource(7, streamPartition))
			sizes := make([]int, tc.k)
			first := make([]int, tc.units)
			for u := 0; u < tc.units; u++ {
				id := []byte(fmt.Sprintf("unit-%d", u))
				first[u] = p.teacher(id)
				if first[u] < 0 || first[u] >= tc.k {
					t.Fatalf("teacher %d out of [0, %d)", first[u], tc.k)
				}
				sizes[first[u]]++
			}
			// The same unit always lands with the same teacher, whatever
			// else was asked in between: removing a unit moves no other.
			for u := tc.units - 1; u >= 0; u-- {
				if got := p.teacher([]byte(fmt.Sprintf("unit-%d", u))); got != first[u] {
					t.Fatalf("unit %d: teacher %d, then %d", u, first[u], got)
				}
			}
			// Balanced within a few standard deviations of a multinomial.
			mean := float64(tc.units) / float64(tc.k)
			for j, s := range sizes {
				if d := float64(s) - mean; d*d > 36*mean {
					t.Errorf("teacher %d has %d units, expected about %.0f", j, s, mean)
				}
			}
		})
	}
}

func TestPartitionerKeyDependsOnTheSeed(t *testing.T) {
	a := newPartitioner(250, noise.NewSeededSource(1, streamPartition))
	b := newPartitioner(250, noise.NewSeededSource(2, streamPartition))
	same := 0
	for u := 0; u < 1000; u++ {
		id := []byte(fmt.Sprintf("%d", u))
		if a.teacher(id) == b.teacher(id) {
			same++
		}
	}
	if same > 20 { // about 4 expected
		t.Errorf("%d of 1000 units share a teacher under two seeds", same)
	}
}
