// Package report holds what a pate run releases about itself, as data: the
// JSON report (Report and its sections), the exact decimals of its noise
// parameters, and the result of an audit of a report (AuditResult). It
// computes nothing: package label fills a Report in and recomputes an
// AuditResult from one; the ledger and the HTML report read them without
// importing the engine.
package report
