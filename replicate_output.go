package main

import (
	"fmt"
	"io"

	"github.com/pate-tool/pate/label/replicate"
)

// printReplicate prints a replication's result as text.
func printReplicate(w io.Writer, res *replicate.Result, name string, private, truth bool) {
	fmt.Fprintf(w, "%s\n\n", res.Note)
	fmt.Fprintf(w, "%d repeats × %d disjoint parts of %s; the first %d of %d public rows (the queries) compared per pair of parts\n",
		res.Repeats, res.Splits, name, res.Queried, res.PublicRows)
	printArm(w, "", "shared randomness:     ", &res.Shared, private, truth)
	printArm(w, "", "independent randomness:", &res.Independent, private, truth)
	if rr := res.Replicable; rr != nil {
		fmt.Fprintf(w, "with --replicable (rounding grid %g σ; shared seed %s):\n", rr.Width, rr.Seed)
		printArm(w, "  ", "shared randomness:     ", &rr.Shared, private, truth)
		printArm(w, "  ", "independent randomness:", &rr.Independent, private, truth)
	}
	if p := res.Report; p != nil {
		fmt.Fprintf(w, "private report: ε = %g (pure; %g per count), sensitivity %d rows per count, discrete Laplace scale %s, |noise| ≤ %d with 97.5%%\n",
			p.Epsilon, p.EpsilonPerCount, p.Sensitivity, p.LaplaceScale, p.NoiseBound)
	}
}

// printArm prints one arm of a replication: how often the labels of two
// parts differ and, when the figures are not released privately, why.
func printArm(w io.Writer, indent, name string, a *replicate.Agreement, private, truth bool) {
	fmt.Fprintf(w, "%s%s %.4f of the released labels differ (95%% CI %.4f–%.4f)\n", indent, name, a.Rate, a.Low, a.High)
	if private {
		return
	}
	fmt.Fprintf(w, "%s    %d answer vs abstention, %d label vs label; %.4f of the queries answered", indent, a.AnswerVsAbstain, a.LabelVsLabel, a.AnsweredFrac)
	if truth {
		fmt.Fprintf(w, ", %.4f of the answers correct", a.Accuracy)
	}
	fmt.Fprintln(w)
}
