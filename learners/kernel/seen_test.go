package kernel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// seenPattern returns which classes each of k teachers sees: teacher t
// misses class t mod c (so class 0, the last class and every other one are
// missed by some teacher), every fifth also the next class, every seventh
// sees class (t/7) mod c only, and every eleventh sees every class.
func seenPattern(k, c int) []bool {
	seen := make([]bool, k*c)
	for t := 0; t < k; t++ {
		row := seen[t*c : (t+1)*c]
		switch {
		case t%11 == 0:
			for cl := range row {
				row[cl] = true
			}
		case t%7 == 0:
			row[(t/7)%c] = true
		default:
			for cl := range row {
				row[cl] = true
			}
			row[t%c] = false
			if t%5 == 0 && c > 2 {
				row[(t+1)%c] = false
			}
		}
	}
	return seen
}

// spoilUnseen gives the classes a teacher does not see weights and biases
// that would win or flatten every vote if they were scored: huge, infinite
// or NaN, and −1e30 biases as the learners store them.
func spoilUnseen(r *rand.Rand, k, c, dim int, w, b []float32, seen []bool) {
	spoil := []float32{-1e30, 1e30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38}
	for t := 0; t < k; t++ {
		for cl := 0; cl < c; cl++ {
			if seen[t*c+cl] {
				continue
			}
			b[t*c+cl] = spoil[r.IntN(len(spoil))]
			for j := 0; j < dim; j++ {
				w[(t*c+cl)*dim+j] = spoil[r.IntN(len(spoil))]
			}
		}
	}
}

// TestVotesUnseenClasses gives teachers that each miss a different class
// (class 0 and the last class included, some missing two, some seeing one
// class only) and checks every path, both layouts, against the float64
// reference over the classes each teacher sees: a class a teacher does not
// see never gets its vote, whatever its stored weights, and the other
// classes keep their order. Rows holding NaN give each teacher's vote to
// the first class it sees.
func TestVotesUnseenClasses(t *testing.T) {
	type tc struct {
		name         string
		k, c, dim, n int
		grid         bool
	}
	var cases []tc
	for _, c := range []int{2, 3, 4, 7} {
		for _, dim := range []int{5, 64, 130} {
			for _, k := range []int{1, 7, 33, 100} {
				for _, grid := range []bool{true, false} {
					kind := "normal"
					if grid {
						kind = "grid"
					}
					cases = append(cases, tc{name: fmt.Sprintf("%s/c%d/d%d/k%d", kind, c, dim, k), k: k, c: c, dim: dim, n: 29, grid: grid})
				}
			}
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 41))
			gen := genNormal
			if tc.grid {
				gen = genGrid
			}
			w := gen(r, tc.k*tc.c*tc.dim)
			b := gen(r, tc.k*tc.c)
			seen := seenPattern(tc.k, tc.c)
			spoilUnseen(r, tc.k, tc.c, tc.dim, w, b, seen)
			x := gen(r, tc.n*tc.dim)
			nan := func(i int) bool { return i%9 == 4 }
			for i := 0; i < tc.n; i++ {
				if nan(i) {
					x[i*tc.dim+i%tc.dim] = float32(math.NaN())
				}
			}
			l, err := NewLinearSeen(tc.k, tc.c, tc.dim, w, b, seen)
			if err != nil {
				t.Fatal(err)
			}
			// Two classes: the teachers that see one class are not scored,
			// so the others' finite differences keep the certified int16
			// path (its bound needs bounded biases).
			if tc.c == 2 && tc.dim >= int16MinDim && cpuISA >= isaAVX2Int16 && l.kv > 0 && l.packed.i16 == nil {
				t.Fatal("no int16 packing: the unseen classes' values reached the certified path")
			}
			ref := refVotesSeen(tc.k, tc.c, tc.dim, w, b, seen, x, tc.n, !tc.grid)
			// The reference's NaN scores never win either; on a NaN row
			// every teacher votes its first class, as the kernels must.
			first := make([]int32, tc.c)
			for tt := 0; tt < tc.k; tt++ {
				for cl := 0; cl < tc.c; cl++ {
					if seen[tt*tc.c+cl] {
						first[cl]++
						break
					}
				}
			}
			for i := 0; i < tc.n; i++ {
				if nan(i) {
					copy(ref.counts[i*tc.c:(i+1)*tc.c], first)
					ref.ambiguous[i] = nil
				}
			}
			xt := columnMajor(x, tc.n, tc.dim, tc.n+2)
			paths(t, func(t *testing.T) {
				for _, layout := range []string{"row-major", "column-major"} {
					got := make([]int32, tc.n*tc.c)
					for j := range got {
						got[j] = -99 // Votes must overwrite
					}
					if layout == "row-major" {
						l.Votes(x, tc.n, got)
					} else {
						l.VotesColumns(xt, tc.n+2, tc.n, got)
					}
					checkVotes(t, tc.k, tc.c, tc.n, got, ref)
					// No vote for a class no teacher sees: with this
					// pattern every class is seen by some teacher, so check
					// the stronger per-class bound instead: a class gets at
					// most the votes of the teachers that see it.
					for cl := 0; cl < tc.c; cl++ {
						var can int32
						for tt := 0; tt < tc.k; tt++ {
							if seen[tt*tc.c+cl] {
								can++
							}
						}
						for row := 0; row < tc.n; row++ {
							if got[row*tc.c+cl] > can {
								t.Fatalf("%s row %d: class %d has %d votes, only %d teachers see it", layout, row, cl, got[row*tc.c+cl], can)
							}
						}
					}
				}
			})
		})
	}
}

// TestVotesClassNobodySees declares a class that no teacher sees, first
// (class 0) or last: it never gets a vote, and the others get exactly the
// votes of the same teachers without it.
func TestVotesClassNobodySees(t *testing.T) {
	for _, c := range []int{3, 4, 7} {
		for _, missing := range []int{0, c - 1} {
			for _, dim := range []int{9, 100} {
				t.Run(fmt.Sprintf("c%d/missing%d/d%d", c, missing, dim), func(t *testing.T) {
					const k, n = 41, 37
					r := rand.New(rand.NewPCG(uint64(c*100+missing), uint64(dim)))
					// The teachers over the c−1 real classes, and the same
					// teachers with the class no one sees inserted at missing.
					w1, b1 := genGrid(r, k*(c-1)*dim), genGrid(r, k*(c-1))
					w := make([]float32, k*c*dim)
					b := make([]float32, k*c)
					seen := make([]bool, k*c)
					for tt := 0; tt < k; tt++ {
						for cl, src := 0, 0; cl < c; cl++ {
							if cl == missing {
								b[tt*c+cl] = -1e30
								continue
							}
							copy(w[(tt*c+cl)*dim:(tt*c+cl+1)*dim], w1[(tt*(c-1)+src)*dim:(tt*(c-1)+src+1)*dim])
							b[tt*c+cl] = b1[tt*(c-1)+src]
							seen[tt*c+cl] = true
							src++
						}
					}
					x := genGrid(r, n*dim)
					full, err := NewLinear(k, c-1, dim, w1, b1)
					if err != nil {
						t.Fatal(err)
					}
					l, err := NewLinearSeen(k, c, dim, w, b, seen)
					if err != nil {
						t.Fatal(err)
					}
					paths(t, func(t *testing.T) {
						want := make([]int32, n*(c-1))
						full.Votes(x, n, want)
						got := make([]int32, n*c)
						l.Votes(x, n, got)
						for i := 0; i < n; i++ {
							if got[i*c+missing] != 0 {
								t.Fatalf("row %d: %d votes for the class no teacher sees (%v)", i, got[i*c+missing], got[i*c:(i+1)*c])
							}
							for cl, src := 0, 0; cl < c; cl++ {
								if cl == missing {
									continue
								}
								if got[i*c+cl] != want[i*(c-1)+src] {
									t.Fatalf("row %d: votes %v, want %v without the unseen class", i, got[i*c:(i+1)*c], want[i*(c-1):(i+1)*(c-1)])
								}
								src++
							}
						}
					})
				})
			}
		}
	}
}

// TestVotesAllTeachersFixed: teachers that each see one class vote it on
// every row, with no scoring at all.
func TestVotesAllTeachersFixed(t *testing.T) {
	const k, c, dim, n = 5, 3, 4, 6
	seen := make([]bool, k*c)
	want := make([]int32, c)
	for tt := 0; tt < k; tt++ {
		seen[tt*c+(tt*2)%c] = true
		want[(tt*2)%c]++
	}
	r := rand.New(rand.NewPCG(1, 2))
	l, err := NewLinearSeen(k, c, dim, genNormal(r, k*c*dim), genNormal(r, k*c), seen)
	if err != nil {
		t.Fatal(err)
	}
	x := genNormal(r, n*dim)
	paths(t, func(t *testing.T) {
		got := make([]int32, n*c)
		l.Votes(x, n, got)
		l2 := make([]int32, n*c)
		l.VotesColumns(columnMajor(x, n, dim, n), n, n, l2)
		for i := 0; i < n; i++ {
			for cl := 0; cl < c; cl++ {
				if got[i*c+cl] != want[cl] || l2[i*c+cl] != want[cl] {
					t.Fatalf("row %d: %v and %v, want %v", i, got[i*c:(i+1)*c], l2[i*c:(i+1)*c], want)
				}
			}
		}
	})
}

func TestNewLinearSeenErrors(t *testing.T) {
	const k, c, dim = 3, 3, 2
	w, b := make([]float32, k*c*dim), make([]float32, k*c)
	if _, err := NewLinearSeen(k, c, dim, w, b, make([]bool, k*c-1)); !errors.Is(err, ErrShape) {
		t.Errorf("short seen: err = %v, want ErrShape", err)
	}
	seen := []bool{true, false, false, false, false, false, false, true, true}
	if _, err := NewLinearSeen(k, c, dim, w, b, seen); !errors.Is(err, ErrShape) {
		t.Errorf("teacher seeing no class: err = %v, want ErrShape", err)
	}
}
