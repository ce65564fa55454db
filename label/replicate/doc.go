// Package replicate measures how replicable pate's labels are: it splits
// the sensitive rows into disjoint random parts, labels the same public rows
// with each part (with shared and with independent randomness, and
// optionally with replicable rounding), and counts how often the released
// labels of two parts differ, with Wilson intervals.
//
// The figures are computed from the sensitive data outside any mechanism:
// they are NOT PRIVATE, a diagnostic for the data owner, unless they are
// released with (*Result).Release, which replaces the disagreement counts
// by discrete Laplace noisy counts calibrated to their sensitivity to one
// sensitive row, charged to the privacy ledger before any noise is drawn.
package replicate
