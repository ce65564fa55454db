// Package kernel provides the fused vote kernel of pate: k stacked linear
// teachers score a batch of public rows and each teacher casts one vote, its
// argmax class, without materialising the rows × teachers score table.
//
// Scores are computed in float32. A teacher whose two best class scores are
// equal, or within float32 rounding of each other, may vote differently from
// a float64 computation; exact ties go to the lowest class index. For two
// classes a teacher votes 1 iff (w1−w0)·x + (b1−b0) > 0, evaluated in
// float32.
package kernel
