// Package rdp provides the privacy accountant of pate: Rényi-DP (RDP) curves
// for the PATE aggregation mechanisms (GNMax, the Confident-GNMax threshold
// step, LNMax and pure ε-DP events), the classic and improved RDP→(ε,δ)
// conversions, a zCDP budget filter that fixes a run's guarantee before the
// run, Gaussian-DP conversion, the smooth-sensitivity release of
// data-dependent bounds, the PATE 2018 Table 2 analysis (Analyze) and the
// noise planners (Plan*).
//
// The formulas follow the public reference analysis code of PATE
// (tensorflow/privacy research/pate_2017 and research/pate_2018) and are
// checked against reference values in testdata/pate_reference_dev.json.
// The package is pure math: it knows nothing of Arrow, files or learners.
package rdp
