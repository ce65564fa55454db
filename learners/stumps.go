package learners

import (
	"math"
	"slices"
	"sort"
)

// Decision stumps: the hypothesis class of the private learners of the
// seed papers (label's private-learner and stable-em). This file is their
// learning half — the class, and the errors of its members on labelled
// rows; choosing among them privately (the exponential mechanism) is the
// label package's.

// Stump predicts Left when x[Feature] ≤ Threshold, Right otherwise.
type Stump struct {
	Feature     int
	Threshold   float32
	Left, Right int32
}

// Predict returns the stump's class for one encoded row.
func (s Stump) Predict(row []float32) int32 {
	if row[s.Feature] <= s.Threshold {
		return s.Left
	}
	return s.Right
}

// Split is one (feature, threshold) pair of a class of stumps.
type Split struct {
	Feature   int
	Threshold float32
}

// PublicSplits returns, for each encoded feature, the thresholds at the
// bins−1 inner quantiles of the public sample x (deduplicated). Public data
// only: the class of stumps must not depend on the sensitive rows.
func PublicSplits(x *Matrix, bins int) []Split {
	var out []Split
	vals := make([]float32, x.Rows)
	for f := 0; f < x.Cols; f++ {
		for i := range vals {
			vals[i] = x.Data[i*x.Cols+f]
		}
		slices.Sort(vals)
		last := float32(0)
		have := false
		for b := 1; b < bins; b++ {
			if len(vals) == 0 {
				break
			}
			v := vals[min(len(vals)-1, b*len(vals)/bins)]
			if have && v == last {
				continue
			}
			if v == vals[len(vals)-1] { // everything left: a constant, not a split
				continue
			}
			out = append(out, Split{f, v})
			last, have = v, true
		}
	}
	return out
}

// Stumps lists every stump of the class of splits: each split with each ordered
// pair of distinct classes.
func Stumps(splits []Split, classes int) []Stump {
	out := make([]Stump, 0, len(splits)*classes*(classes-1))
	for _, s := range splits {
		for a := 0; a < classes; a++ {
			for b := 0; b < classes; b++ {
				if a != b {
					out = append(out, Stump{s.Feature, s.Threshold, int32(a), int32(b)})
				}
			}
		}
	}
	return out
}

// StumpErrors counts the errors of every stump of Stumps(splits,
// classes) on the rows of X whose label y is a class (y < 0 rows are left
// out: they change no score difference). Sensitive: the counts never leave
// the process; they are only the exponential mechanism's scores.
func StumpErrors(X *Matrix, y []int32, classes int, splits []Split) []int64 {
	type vc struct {
		v float32
		c int32
	}
	var rows []vc
	total := make([]int64, classes)
	for i, c := range y {
		if c >= 0 {
			total[c]++
		}
		_ = i
	}
	var n int64
	for _, t := range total {
		n += t
	}
	errs := make([]int64, 0, len(splits)*classes*(classes-1))
	left := make([]int64, classes)
	cur := -1
	j := 0
	for _, s := range splits {
		if s.Feature != cur { // splits come grouped by feature, thresholds ascending
			cur = s.Feature
			rows = rows[:0]
			for i, c := range y {
				if c >= 0 {
					rows = append(rows, vc{X.Data[i*X.Cols+cur], c})
				}
			}
			slices.SortFunc(rows, func(a, b vc) int {
				switch {
				case a.v < b.v:
					return -1
				case a.v > b.v:
					return 1
				}
				return 0
			})
			clear(left)
			j = 0
		}
		for j < len(rows) && rows[j].v <= s.Threshold {
			left[rows[j].c]++
			j++
		}
		nl := int64(j)
		for a := 0; a < classes; a++ {
			for b := 0; b < classes; b++ {
				if a != b {
					errs = append(errs, (nl-left[a])+(n-nl)-(total[b]-left[b]))
				}
			}
		}
	}
	return errs
}

// StumpIndex holds labelled rows sorted per feature with cumulative class
// counts, so that a stump's errors on them take one binary search.
type StumpIndex struct {
	X       *Matrix
	Rows    []int32 // the usable rows (label a class, y ≥ 0)
	classes int
	sorted  [][]float32 // per feature: the usable rows' values, ascending
	cum     [][]int32   // per feature: (len+1)·classes cumulative class counts
	total   []int64
}

// NewStumpIndex indexes the rows of X whose label y is a class (y < 0 rows
// are left out).
func NewStumpIndex(X *Matrix, y []int32, classes int) *StumpIndex {
	s := &StumpIndex{X: X, classes: classes, total: make([]int64, classes)}
	for i, c := range y {
		if c >= 0 {
			s.Rows = append(s.Rows, int32(i))
			s.total[c]++
		}
	}
	n := len(s.Rows)
	s.sorted = make([][]float32, X.Cols)
	s.cum = make([][]int32, X.Cols)
	idx := make([]int32, n)
	for f := 0; f < X.Cols; f++ {
		copy(idx, s.Rows)
		slices.SortFunc(idx, func(a, b int32) int {
			va, vb := X.Data[int(a)*X.Cols+f], X.Data[int(b)*X.Cols+f]
			switch {
			case va < vb:
				return -1
			case va > vb:
				return 1
			}
			return 0
		})
		vals := make([]float32, n)
		cum := make([]int32, (n+1)*classes)
		for k, r := range idx {
			vals[k] = X.Data[int(r)*X.Cols+f]
			copy(cum[(k+1)*classes:(k+2)*classes], cum[k*classes:(k+1)*classes])
			cum[(k+1)*classes+int(y[r])]++
		}
		s.sorted[f], s.cum[f] = vals, cum
	}
	return s
}

// Errors counts the errors of a stump on the usable rows.
func (s *StumpIndex) Errors(h Stump) int64 {
	vals := s.sorted[h.Feature]
	nl := sort.Search(len(vals), func(i int) bool { return vals[i] > h.Threshold })
	if math.IsInf(float64(h.Threshold), -1) {
		nl = 0
	}
	left := s.cum[h.Feature][nl*s.classes : (nl+1)*s.classes]
	n := int64(len(vals))
	return (int64(nl) - int64(left[h.Left])) + (n - int64(nl)) - (s.total[h.Right] - int64(left[h.Right]))
}

// Labellings returns one stump per distinct labelling of the rows s1 by
// the stump class (Zobrist hashes of the labellings, 128 bits, with keys
// drawn from src, independent of the data; constant labellings come from
// the thresholds ±Inf). The set depends on s1 only.
func (s *StumpIndex) Labellings(s1 []int32, src interface{ Uint64() uint64 }) []Stump {
	m := len(s1)
	z := make([][2]uint64, m*s.classes)
	for i := range z {
		z[i] = [2]uint64{src.Uint64(), src.Uint64()}
	}
	xor := func(a, b [2]uint64) [2]uint64 { return [2]uint64{a[0] ^ b[0], a[1] ^ b[1]} }
	seen := make(map[[2]uint64]struct{})
	var cands []Stump
	order := make([]int, m)
	prefix := make([][2]uint64, (m+1)*s.classes) // prefix[p*C+c]: XOR of z[order[k]][c], k < p
	all := make([][2]uint64, s.classes)
	for c := 0; c < s.classes; c++ {
		for k := 0; k < m; k++ {
			all[c] = xor(all[c], z[k*s.classes+c])
		}
	}
	cols := s.X.Cols
	for f := 0; f < cols; f++ {
		for k := range order {
			order[k] = k
		}
		val := func(k int) float32 { return s.X.Data[int(s1[order[k]])*cols+f] }
		sort.Slice(order, func(a, b int) bool {
			return s.X.Data[int(s1[order[a]])*cols+f] < s.X.Data[int(s1[order[b]])*cols+f]
		})
		for c := 0; c < s.classes; c++ {
			prefix[c] = [2]uint64{}
		}
		for k := 0; k < m; k++ {
			for c := 0; c < s.classes; c++ {
				prefix[(k+1)*s.classes+c] = xor(prefix[k*s.classes+c], z[order[k]*s.classes+c])
			}
		}
		for p := 0; p <= m; p++ {
			if p > 0 && p < m && val(p-1) == val(p) {
				continue // no threshold separates equal values
			}
			var thr float32
			switch {
			case p == 0:
				thr = float32(math.Inf(-1))
			case p == m:
				thr = float32(math.Inf(1))
			default:
				thr = val(p-1) + (val(p)-val(p-1))/2
				if thr >= val(p) { // float32 midpoint rounding
					thr = val(p - 1)
				}
			}
			for a := 0; a < s.classes; a++ {
				for b := 0; b < s.classes; b++ {
					if a == b {
						continue
					}
					// Left rows labelled a, right rows b.
					h := xor(prefix[p*s.classes+a], xor(all[b], prefix[p*s.classes+b]))
					if _, dup := seen[h]; dup {
						continue
					}
					seen[h] = struct{}{}
					cands = append(cands, Stump{f, thr, int32(a), int32(b)})
				}
			}
		}
	}
	return cands
}
