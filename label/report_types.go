package label

import "github.com/pate-tool/pate/label/report"

// The report's types live in package report, so that the ledger and the
// HTML report can read them without importing the engine; these aliases
// keep their names in this package.
type (
	AuditCheck          = report.AuditCheck
	AuditLabel          = report.AuditLabel
	AuditResult         = report.AuditResult
	BudgetReport        = report.BudgetReport
	BuildReport         = report.BuildReport
	ChoiceReport        = report.ChoiceReport
	ChoiceCandidate     = report.ChoiceCandidate
	ClassDiscovery      = report.ClassDiscovery
	DPLogRegReport      = report.DPLogRegReport
	CellHistogramReport = report.CellHistogramReport
	Float               = report.Float
	Guarantee           = report.Guarantee
	LabelReport         = report.LabelReport
	MechanismParams     = report.MechanismParams
	PureDPReport        = report.PureDPReport
	Queries             = report.Queries
	ReplicableGrid      = report.ReplicableGrid
	Report              = report.Report
	SelfTrainInfo       = report.SelfTrainInfo
	SourceCounts        = report.SourceCounts
	Spend               = report.Spend
	StudentReport       = report.StudentReport
	TimePoint           = report.TimePoint
)

// ReportSchemaVersion is the version of the JSON report's layout.
const ReportSchemaVersion = report.SchemaVersion
