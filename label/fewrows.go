package label

// FewRowsSigmas is how many standard deviations of its noise a released
// row count n̂ must reach before the labels can be told from those of an
// empty sensitive file: below, a run warns that no mechanism can be
// expected to beat naming the most common class. An empty file releases a
// count below 3σc with probability above 0.998.
const FewRowsSigmas = 3

// warnFewRows warns, from the released count n̂ and its σc alone
// (post-processing: free), when n̂ cannot be told from an empty file.
func (l *Labeler) warnFewRows(noisy int64, sigmaC float64) {
	if !(float64(noisy) < FewRowsSigmas*sigmaC) {
		return
	}
	l.note("the noisy count of sensitive rows, %d (σ %.3g), is below %d σ: it cannot be told from an empty file, "+
		"and no mechanism can be expected to label better than naming the most common class everywhere; "+
		"more sensitive rows or a larger --epsilon would", noisy, sigmaC, FewRowsSigmas)
}
