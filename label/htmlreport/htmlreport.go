package htmlreport

import (
	"bufio"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/label/report"
)

// Chart geometry (pixels).
const (
	chartW, chartH = 540, 300
	padL, padR     = 62, 18
	padT, padB     = 34, 46
)

// Colours.
const (
	colSpend     = "#1f5fbf"
	colBudget    = "#c0392b"
	colAnswered  = "#1e8449"
	colAbstained = "#d68910"
	colNotAsked  = "#7f8c8d"
	colBar       = "#5b7db1"
	colGrid      = "#e3e6ea"
	colAxis      = "#4a4f55"
)

// Write writes one self-contained HTML page for the report rep. audit is the
// result of the audit of rep (package label's Audit, which recomputes the
// claim); a report whose claim fails is still drawn, with the verdict
// shown.
//
// The page is an html/template: every figure and string of the report goes
// through its contextual escaping, so a report cannot put markup or script
// on the page whatever its strings hold.
func Write(w io.Writer, rep *report.Report, audit *report.AuditResult) error {
	if rep == nil {
		return errors.New("htmlreport: no report")
	}
	if audit == nil {
		return errors.New("htmlreport: no audit of the report")
	}
	bw := bufio.NewWriter(w)
	if err := pageTemplate.Execute(bw, newPage(rep, audit)); err != nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	return bw.Flush()
}

// num formats a figure compactly and exactly enough to compare with the
// JSON report (up to 9 significant digits).
func num(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return strconv.FormatFloat(v, 'g', 9, 64)
}

// attr formats a figure for a data-* attribute: the shortest decimal that
// round-trips, as in the JSON report.
func attr(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// f1 formats a coordinate.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// page is what the page template shows.
type page struct {
	rep   *report.Report
	audit *report.AuditResult

	Title      string // the document's
	Rep        *report.Report
	Audit      *report.AuditResult
	Parameters [][2]string
	Outcome    [][3]string // name, data-field, value
	Cards      []card      // the charts and tables of the grid
	Checks     []checkRow
}

// card is one card of the grid: a chart, or the table of label columns.
type card struct {
	Title  string
	Chart  *chart
	Labels []labelRow
}

type labelRow struct {
	Label, Weight, Noise                     string
	ThresholdChecks, NoisyArgmaxes, Answered int64
	Rho, Released                            string
}

type checkRow struct {
	Class, Mark, Name, Claimed, Recomputed, Detail string
}

// modelRun tells a run that labels with one model trained once under the
// budget (dp-logreg, cell-histogram, private-learner): it has no teachers,
// puts no queries and abstains on no row, so the charts and counts of
// queries would show nothing but noise words. private-knn and stable-em
// have no teachers either, but answer query by query: their charts stay.
func modelRun(rep *report.Report) bool {
	switch {
	case rep.DPLogReg != nil || rep.CellHistogram != nil:
		return true
	case rep.Teachers > 0:
		return false
	}
	return rep.Mechanism == "private-learner"
}

func newPage(rep *report.Report, audit *report.AuditResult) *page {
	p := &page{rep: rep, audit: audit, Rep: rep, Audit: audit}
	p.Title = fmt.Sprintf("pate privacy report — %s, ε = %s", rep.Mechanism, num(float64(rep.Guarantee.Epsilon)))
	p.Parameters = p.parameters()
	p.Outcome = p.outcome()
	if !modelRun(rep) {
		p.Cards = []card{
			{Title: "ε spent over the queries", Chart: p.epsilonChart()},
			{Title: "Answered and abstained over the public rows", Chart: p.answeredChart()},
		}
	}
	if rep.Sources != nil {
		p.Cards = append(p.Cards, card{Title: "Who labelled the rows", Chart: p.sourcesChart()})
	}
	if len(rep.Labels) > 0 {
		p.Cards = append(p.Cards, card{Labels: p.labelColumns()})
	} else {
		title := "Released labels"
		if src := rep.Sources; src != nil && src.Student > 0 {
			title = "Labels the teachers released (the student's are not counted)"
		}
		p.Cards = append(p.Cards, card{Title: title, Chart: p.labelsChart()})
	}
	p.Cards = append(p.Cards, card{Title: "Conversions of the realized spend", Chart: p.conversionsChart()})
	for _, c := range audit.Checks {
		r := checkRow{Class: "pass", Mark: "ok", Name: c.Name, Claimed: num(c.Claimed), Recomputed: num(c.Recomputed), Detail: c.Detail}
		if !c.OK {
			r.Class, r.Mark = "fail", "FAIL"
		}
		p.Checks = append(p.Checks, r)
	}
	return p
}

// sourceName says who labelled the rows of a pate_source value.
func (p *page) sourceName(src string) string {
	switch src {
	case "teachers":
		if modelRun(p.rep) {
			return p.rep.Mechanism
		}
		return "the teachers"
	case "student":
		if st := p.rep.Student; st != nil {
			return "the " + st.Learner + " student"
		}
		return "the student"
	}
	return "no label"
}

// Num formats a figure for the page (see num).
func (p *page) Num(v float64) string { return num(v) }

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;background:#f6f7f9;color:#1d2125}
main{max-width:1140px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:18px;margin:0 0 10px}
.sub{color:#5a6068;margin:0 0 18px}
.why{color:#5a6068;font-size:12px;margin-top:2px}
.verdict{padding:12px 16px;border-radius:6px;font-size:17px;margin-bottom:18px}
.ok{background:#e3f4e8;border:1px solid #9fd3ae}.bad{background:#fbe4e1;border:1px solid #e6a39a}
.seeded{background:#fff4d6;border:1px solid #e8c96a;padding:8px 14px;border-radius:6px;margin-bottom:18px}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:18px}
.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:14px 16px}
table{border-collapse:collapse;width:100%;font-size:14px}
td,th{padding:4px 8px;border-bottom:1px solid #eef0f2;text-align:left;vertical-align:top}
th{color:#5a6068;font-weight:600}
#parameters th,#outcome th{width:42%}
td.n{font-variant-numeric:tabular-nums}
.checks td:first-child{width:40px;font-weight:700}
.pass{color:#1e8449}.fail{color:#c0392b}
ul.explain li{margin:0 0 8px;line-height:1.45}
svg{display:block;max-width:100%;height:auto}
svg text{font-family:inherit}
footer{color:#7a8088;font-size:12px;margin-top:18px}`

// pageSource is the page. The style sheet is part of the template's text
// (not a value), and every value is escaped for its context.
const pageSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
` + css + `
</style>
</head>
<body>
<main>
<h1>pate privacy report</h1>
<p class="sub">pate {{.Rep.Command}}: private labels of column <b>{{.Rep.Label}}</b> · mechanism <b>{{.Rep.Mechanism}}</b> · pate {{.Rep.Version}} · report schema {{.Rep.SchemaVersion}}</p>
{{if .Audit.Holds -}}
<div class="verdict ok" id="verdict" data-holds="true">The claim holds: (ε = <b>{{.Num .Audit.ClaimedEpsilon}}</b>, δ = <b>{{.Num .Audit.Delta}}</b>), recomputed ε = {{.Num .Audit.Epsilon}} from the mechanism, its parameters and the event counts.</div>
{{else -}}
<div class="verdict bad" id="verdict" data-holds="false">The claim DOES NOT hold: the report claims ε = <b>{{.Num .Audit.ClaimedEpsilon}}</b>, the recomputation gives ε = <b>{{.Num .Audit.Epsilon}}</b> (see the checks below).</div>
{{end -}}
{{if .Rep.Replicable -}}
<div class="seeded">This run is <b>replicable</b>: its noise comes from a seed shared between curators ({{.Rep.ReplicableVia}}). Its guarantee holds only while the seed stays secret from the recipients of the labels, and covers this release alone.</div>
{{else if .Rep.Seeded -}}
<div class="seeded">This run was <b>seeded</b>: anyone who knows the seed can reproduce its noise. Use seeded runs for tests only.</div>
{{end -}}
<div class="grid">
<div class="card"><h2>Parameters</h2>
<table id="parameters">
{{range .Parameters -}}
<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end -}}
</table></div>
<div class="card"><h2>Outcome</h2>
<table id="outcome">
{{range .Outcome -}}
<tr><th>{{index . 0}}</th><td class="n" data-field="{{index . 1}}">{{index . 2}}</td></tr>
{{end -}}
</table></div>
{{range .Cards}}{{if .Chart -}}
<div class="card"><h2>{{.Title}}</h2>
{{template "chart" .Chart}}</div>
{{else -}}
<div class="card"><h2>Label columns (one joint query per row)</h2>
<table id="labels">
<tr><th>column</th><th>share</th><th>noise</th><th>checks</th><th>argmaxes</th><th>answered</th><th>ρ</th><th>released</th></tr>
{{range .Labels -}}
<tr><th>{{.Label}}</th><td class="n">{{.Weight}}</td><td>{{.Noise}}</td><td class="n">{{.ThresholdChecks}}</td><td class="n">{{.NoisyArgmaxes}}</td><td class="n">{{.Answered}}</td><td class="n">{{.Rho}}</td><td>{{.Released}}</td></tr>
{{end -}}
</table>
<p class="sub">ρ adds up over the columns: the run's realized ρ is their sum plus the class discoveries'. A row counts as answered when at least one of its labels was released.</p></div>
{{end}}{{end -}}
</div>
<div class="card" style="margin-top:18px"><h2>What the guarantee means</h2>
<ul class="explain" id="explanation">
{{range .Audit.Explanation -}}
<li>{{.}}</li>
{{end -}}
</ul></div>
<div class="card" style="margin-top:18px"><h2>Audit checks</h2>
<table class="checks" id="checks">
<tr><th></th><th>check</th><th>report</th><th>recomputed</th></tr>
{{range .Checks -}}
<tr><td class="{{.Class}}">{{.Mark}}</td><td>{{.Name}}{{with .Detail}}<div class="why">{{.}}</div>{{end}}</td><td class="n">{{.Claimed}}</td><td class="n">{{.Recomputed}}</td></tr>
{{end -}}
</table>
<p class="sub">Each check compares a figure of the report with its recomputation from the report's own parameters and counts, or, where the two columns differ, with the bound the rule or the budget sets for it (the line under the check's name says which).</p></div>
<footer>Self-contained page written by pate {{.Rep.Version}}; it loads nothing from the network. Every figure is a public parameter, a count of public rows or a mechanism output.</footer>
</main>
</body>
</html>
`

// chartSource draws a chart from its elements, in order. Each element is
// one of the kinds below; the page's tests parse every chart as XML.
const chartSource = `{{define "chart" -}}
<svg id="{{.ID}}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {{.W}} {{.H}}" width="{{.W}}" height="{{.H}}" role="img" aria-label="{{.Title}}">
<title>{{.Title}}</title>
{{range .Items}}{{template "item" .}}{{end -}}
</svg>
{{end}}
{{- define "item"}}
{{- with .Line}}<line{{with .Class}} class="{{.}}"{{end}}{{with .Epsilon}} data-epsilon="{{.}}"{{end}}{{with .Queries}} data-queries="{{.}}"{{end}}{{with .Row}} data-row="{{.}}"{{end}} x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}" stroke="{{.Stroke}}"{{with .Width}} stroke-width="{{.}}"{{end}}{{with .Dash}} stroke-dasharray="{{.}}"{{end}}/>
{{end}}
{{- with .Text}}<text x="{{.X}}" y="{{.Y}}" font-size="{{.Size}}"{{with .Anchor}} text-anchor="{{.}}"{{end}} fill="{{.Fill}}"{{with .Transform}} transform="{{.}}"{{end}}>{{.Text}}</text>
{{end}}
{{- with .Poly}}<polyline class="{{.Class}}" fill="none" stroke="{{.Stroke}}" stroke-width="2.2" stroke-linejoin="round" data-n="{{.N}}"{{with .FinalEpsilon}} data-final-epsilon="{{.}}"{{end}}{{with .FinalQueries}} data-final-queries="{{.}}"{{end}}{{with .Final}} data-final="{{.}}"{{end}}{{with .Dash}} stroke-dasharray="{{.}}"{{end}} points="{{.Points}}"/>
{{end}}
{{- with .Bar}}<rect class="bar" data-name="{{.Name}}"{{with .Count}} data-count="{{.}}"{{end}}{{with .Epsilon}} data-epsilon="{{.}}"{{end}} x="{{.X}}" y="{{.Y}}" width="{{.Width}}" height="22" fill="{{.Fill}}"/>
{{end}}
{{- with .Key}}<rect x="{{.X}}" y="{{.Y}}" width="14" height="4" fill="{{.Fill}}"/>{{end}}
{{- end}}`

var pageTemplate = template.Must(template.Must(template.New("page").Parse(pageSource)).Parse(chartSource))

// chart is an inline SVG of W × H pixels.
type chart struct {
	ID, Title string
	W, H      int
	Items     []item
}

// item is one element of a chart: exactly one of its fields is set.
type item struct {
	Line *line
	Text *text
	Poly *polyline
	Bar  *bar
	Key  *key // a legend's colour key, on the line of its text
}

// The data-* attributes of the elements (empty: absent) carry the figures
// drawn, for tests and scripts.

type line struct {
	Class                 string
	Epsilon, Queries, Row string // data-*
	X1, Y1, X2, Y2        string
	Stroke                string
	Width, Dash           string
}

type text struct {
	X, Y, Size, Anchor, Fill, Transform string
	Text                                string
}

type polyline struct {
	Class, Stroke                     string
	N                                 int
	FinalEpsilon, FinalQueries, Final string // data-*
	Dash                              string
	Points                            string
}

type bar struct {
	Name, Count, Epsilon string // data-*
	X, Y, Width          string
	Fill                 string
}

type key struct{ X, Y, Fill string }

func (c *chart) line(l line)         { c.Items = append(c.Items, item{Line: &l}) }
func (c *chart) text(t text)         { c.Items = append(c.Items, item{Text: &t}) }
func (c *chart) polyline(p polyline) { c.Items = append(c.Items, item{Poly: &p}) }

func itoa(v int) string { return strconv.Itoa(v) }

func (p *page) parameters() [][2]string {
	rep := p.rep
	rows := [][2]string{
		{"Mechanism", rep.Mechanism},
		{"Noise", rep.Noise},
	}
	pr := rep.Params
	for _, kv := range [][2]string{{"σ (GNMax)", pr.Sigma}, {"σ1 (threshold noise)", pr.Sigma1}, {"σ2 (argmax noise)", pr.Sigma2}, {"Laplace scale b", pr.LaplaceScale}} {
		if kv[1] != "" {
			rows = append(rows, kv)
		}
	}
	if pr.Threshold != 0 {
		rows = append(rows, [2]string{"Threshold T", strconv.FormatInt(pr.Threshold, 10)})
	}
	if d := rep.DPLogReg; d != nil { // one DP model: what its cost depends on
		rows = append(rows,
			[2]string{"σ (each gradient coordinate)", d.Sigma},
			[2]string{"Gradient steps", strconv.Itoa(d.Steps)},
			[2]string{"Squared sensitivity of one step (integer units)", strconv.FormatInt(d.SensSq, 10)},
			[2]string{"Released coordinates per step", strconv.Itoa(d.Dims)},
			[2]string{"σ (noisy row count)", d.CountSigma},
			[2]string{"Model ρ (zCDP)", num(float64(d.Rho))})
	}
	if c := rep.Choice; c != nil { // the default run's choice between PATE and dp-logreg
		rows = append(rows,
			[2]string{"Chosen by the default plan", c.Chosen},
			[2]string{"Why", c.Why},
			[2]string{"Noisy row count n̂ (released)", strconv.FormatInt(c.NoisyRows, 10)},
			[2]string{"σ (choice count)", c.CountSigma},
			[2]string{"Choice count ρ (zCDP)", num(float64(c.CountRho))})
	}
	labeller := [2]string{"Teachers", fmt.Sprintf("%d (%s)", rep.Teachers, rep.Learner)}
	if modelRun(rep) {
		labeller = [2]string{"Model", fmt.Sprintf("one, trained once under the budget: %s", rep.Learner)}
	}
	return append(rows,
		labeller,
		[2]string{"Classes", fmt.Sprintf("%s — %s", strings.Join(rep.Classes, ", "), rep.ClassesSource)},
		[2]string{"Privacy unit", rep.PrivacyUnit},
		[2]string{"Guarantee ε", num(float64(rep.Guarantee.Epsilon))},
		[2]string{"Guarantee δ", num(float64(rep.Guarantee.Delta))},
		[2]string{"Guarantee ρ (zCDP)", num(float64(rep.Guarantee.Rho))},
		[2]string{"Basis", rep.Guarantee.Basis},
		[2]string{"Seeded", strconv.FormatBool(rep.Seeded)},
		[2]string{"Replicable", strconv.FormatBool(rep.Replicable)},
	)
}

// labelColumns are the rows of a multi-label run's card: what each label
// column was planned for, cost and released.
func (p *page) labelColumns() []labelRow {
	var rows []labelRow
	for _, l := range p.rep.Labels {
		pr := l.Params
		var noise []string
		for _, kv := range [][2]string{{"σ", pr.Sigma}, {"σ1", pr.Sigma1}, {"σ2", pr.Sigma2}, {"b", pr.LaplaceScale}} {
			if kv[1] != "" {
				noise = append(noise, kv[0]+" = "+kv[1])
			}
		}
		if pr.Threshold != 0 {
			noise = append(noise, "T = "+strconv.FormatInt(pr.Threshold, 10))
		}
		var rel []string
		for _, c := range l.Classes {
			rel = append(rel, fmt.Sprintf("%s: %d", c, l.Released[c]))
		}
		rows = append(rows, labelRow{Label: l.Label, Weight: num(l.Weight), Noise: strings.Join(noise, ", "),
			ThresholdChecks: l.ThresholdChecks, NoisyArgmaxes: l.NoisyArgmaxes, Answered: l.Answered,
			Rho: num(float64(l.Rho)), Released: strings.Join(rel, ", ")})
	}
	return rows
}

func (p *page) outcome() [][3]string {
	rep := p.rep
	q, s := rep.Queries, rep.Spent
	stop := "no"
	if rep.Budget.StoppedOn {
		stop = fmt.Sprintf("yes, at row %d", rep.Budget.StoppedAtRow)
	}
	itoa64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	rows := [][3]string{{"Public rows", "public_rows", itoa64(q.PublicRows)}}
	if !modelRun(rep) {
		rows = append(rows,
			[3]string{"Queries put to the teachers", "queries", itoa64(q.Seen)},
			[3]string{"Answered by the teachers", "answered", itoa64(q.Answered)},
			[3]string{"Abstained by the threshold", "abstained_queries", itoa64(q.Seen - q.Answered)},
			[3]string{"Not queried", "not_queried", itoa64(q.NotAsked)})
	}
	if src := rep.Sources; src != nil {
		// Who labelled each row: the teachers' answers, the student or
		// the DP model, or nobody.
		if modelRun(rep) {
			rows = append(rows, [3]string{"Labelled by " + rep.Mechanism, "source_teachers", itoa64(src.Teachers)})
		} else {
			rows = append(rows, [3]string{"Labelled by the teachers", "source_teachers", itoa64(src.Teachers)})
		}
		if rep.Student != nil || src.Student > 0 {
			rows = append(rows, [3]string{"Labelled by " + p.sourceName("student"), "source_student", itoa64(src.Student)})
		}
		rows = append(rows, [3]string{"Left without a label", "source_abstained", itoa64(src.Abstained)})
	} else {
		rows = append(rows, [3]string{"Left without a label (incl. not queried)", "abstained", itoa64(q.Abstained)})
	}
	if !modelRun(rep) {
		rows = append(rows,
			[3]string{"Threshold checks", "threshold_checks", itoa64(s.ThresholdChecks)},
			[3]string{"Noisy argmaxes", "noisy_argmaxes", itoa64(s.NoisyArgmaxes)})
	}
	return append(rows, [][3]string{
		{"Realized ρ", "spent_rho", num(float64(s.Rho))},
		{"Realized ε (improved)", "epsilon_improved", fmt.Sprintf("%s at order %s", num(float64(s.EpsilonImproved)), num(float64(s.OrderImproved)))},
		{"Realized ε (classic)", "epsilon_classic", fmt.Sprintf("%s at order %s", num(float64(s.EpsilonClassic)), num(float64(s.OrderClassic)))},
		{"Stopped on the budget", "stopped", stop},
	}...)
}

// scale maps [d0, d1] to [r0, r1].
type scale struct{ d0, d1, r0, r1 float64 }

func (s scale) at(v float64) float64 {
	if s.d1 == s.d0 {
		return s.r0
	}
	return s.r0 + (v-s.d0)/(s.d1-s.d0)*(s.r1-s.r0)
}

// niceTicks returns about n round tick values covering [0, hi] and the
// rounded top.
func niceTicks(hi float64, n int) ([]float64, float64) {
	if !(hi > 0) || math.IsInf(hi, 0) {
		return []float64{0, 1}, 1
	}
	raw := hi / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	top := math.Ceil(hi/step-1e-9) * step
	var t []float64
	for v := 0.0; v <= top+step/2; v += step {
		t = append(t, math.Round(v/step)*step)
	}
	return t, top
}

func tick(v float64) string {
	if v != 0 && (math.Abs(v) >= 1e6 || math.Abs(v) < 1e-3) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// frame starts a line chart: the grid, the axes and the axis titles, and
// returns it with the scales.
func frame(id, title, xTitle, yTitle string, xMax, yMax float64) (*chart, scale, scale) {
	c := &chart{ID: id, Title: title, W: chartW, H: chartH}
	xt, xTop := niceTicks(xMax, 6)
	yt, yTop := niceTicks(yMax, 5)
	sx := scale{0, xTop, padL, chartW - padR}
	sy := scale{0, yTop, chartH - padB, padT}
	for _, v := range yt {
		y := sy.at(v)
		c.line(line{X1: itoa(padL), Y1: f1(y), X2: itoa(chartW - padR), Y2: f1(y), Stroke: colGrid})
		c.text(text{X: itoa(padL - 6), Y: f1(y + 4), Size: "12", Anchor: "end", Fill: colAxis, Text: tick(v)})
	}
	for _, v := range xt {
		x := sx.at(v)
		c.line(line{X1: f1(x), Y1: itoa(chartH - padB), X2: f1(x), Y2: itoa(chartH - padB + 5), Stroke: colAxis})
		c.text(text{X: f1(x), Y: itoa(chartH - padB + 19), Size: "12", Anchor: "middle", Fill: colAxis, Text: tick(v)})
	}
	c.line(line{X1: itoa(padL), Y1: itoa(chartH - padB), X2: itoa(chartW - padR), Y2: itoa(chartH - padB), Stroke: colAxis})
	c.line(line{X1: itoa(padL), Y1: itoa(padT), X2: itoa(padL), Y2: itoa(chartH - padB), Stroke: colAxis})
	c.text(text{X: itoa((padL + chartW - padR) / 2), Y: itoa(chartH - 8), Size: "13", Anchor: "middle", Fill: colAxis, Text: xTitle})
	mid := itoa((padT + chartH - padB) / 2)
	c.text(text{X: "14", Y: mid, Size: "13", Anchor: "middle", Fill: colAxis, Transform: "rotate(-90 14 " + mid + ")", Text: yTitle})
	return c, sx, sy
}

// points joins the scaled points of a polyline.
func points(xs, ys []float64, sx, sy scale) string {
	var b strings.Builder
	for i := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f1(sx.at(xs[i])) + "," + f1(sy.at(ys[i])))
	}
	return b.String()
}

// legend adds colour keys with their labels, one per line from (x, y).
func (c *chart) legend(x, y int, items [][2]string) {
	for i, it := range items {
		yy := y + 17*i
		c.Items = append(c.Items, item{Key: &key{X: itoa(x), Y: itoa(yy - 4), Fill: it[1]}})
		c.text(text{X: itoa(x + 19), Y: itoa(yy + 1), Size: "12", Fill: colAxis, Text: it[0]})
	}
}

// convDelta is the δ at which the run's ρ converts to ε.
func (p *page) convDelta() float64 { return p.audit.Delta - p.audit.DiscoveryDelta }

// epsilonOf converts a ρ of the run's to ε as the run's report does: at
// its conversion δ, on the Rényi orders its charges hold at (2..max_order
// when the parameters bound them: private-knn), rounded up.
func (p *page) epsilonOf(rho float64) float64 {
	e, _ := rdp.ZCDPEpsWithin(rho, p.convDelta(), float64(p.rep.Params.MaxOrder))
	return rdp.RoundUp(e, 6)
}

// pointEpsilon is the ε spent at a point of the timeline as the report
// states it: the point's own ε, and at the run's full spend never less than
// the report's spent.epsilon_improved, so that the page never shows less
// spent than the report. A point without its own ε (runs of pure events,
// reports from before points had one) converts its ρ as the report
// converts, capped by the run's whole stated spend, which bounds every
// prefix of it (releasing less is post-processing): a run of svt's pure
// events read 1.23 by zCDP where its report states 0.4998.
func (p *page) pointEpsilon(t report.TimePoint) float64 {
	s := p.rep.Spent
	stated := float64(s.EpsilonImproved) // the report's smallest reading of the whole spend
	if pure := s.EpsilonPure; pure != nil && *pure > 0 && (stated == 0 || float64(*pure) < stated) {
		stated = float64(*pure)
	}
	eps := float64(t.Epsilon)
	if eps == 0 {
		eps = p.epsilonOf(float64(t.Rho))
		if stated > 0 {
			eps = math.Min(eps, stated)
		}
	}
	if t.Rho >= s.Rho {
		eps = math.Max(eps, stated)
	}
	return eps
}

func (p *page) epsilonChart() *chart {
	rep := p.rep
	tl := rep.Timeline
	budget := float64(rep.Guarantee.Epsilon)
	xs := make([]float64, len(tl))
	ys := make([]float64, len(tl))
	yMax := budget
	for i, t := range tl {
		xs[i] = float64(t.Queries)
		ys[i] = p.pointEpsilon(t)
		yMax = math.Max(yMax, ys[i])
	}
	xMax := math.Max(float64(rep.Queries.Seen), 1)
	c, sx, sy := frame("chart-epsilon", "ε spent over the queries", "queries put", "ε spent (improved conversion)", xMax, yMax*1.08)
	if len(tl) > 0 {
		last := ys[len(ys)-1]
		c.polyline(polyline{Class: "spend", Stroke: colSpend, N: len(xs), Points: points(xs, ys, sx, sy),
			FinalEpsilon: attr(last), FinalQueries: strconv.FormatInt(tl[len(tl)-1].Queries, 10)})
	}
	items := [][2]string{{"ε spent", colSpend}}
	if rep.Budget.Filter {
		y := sy.at(budget)
		c.line(line{Class: "budget", Epsilon: attr(budget), X1: itoa(padL), Y1: f1(y), X2: itoa(chartW - padR), Y2: f1(y),
			Stroke: colBudget, Width: "1.6", Dash: "6 4"})
		c.text(text{X: itoa(chartW - padR - 4), Y: f1(y - 6), Size: "12", Anchor: "end", Fill: colBudget, Text: "budget ε = " + num(budget)})
		items = append(items, [2]string{"budget", colBudget})
	}
	if rep.Budget.StoppedOn {
		x := sx.at(float64(rep.Queries.Seen))
		row := strconv.FormatInt(rep.Budget.StoppedAtRow, 10)
		c.line(line{Class: "stop", Queries: strconv.FormatInt(rep.Queries.Seen, 10), Row: row,
			X1: f1(x), Y1: itoa(padT), X2: f1(x), Y2: itoa(chartH - padB), Stroke: colBudget, Width: "1.4"})
		c.text(text{X: f1(x - 5), Y: itoa(chartH - padB - 10), Size: "12", Anchor: "end", Fill: colBudget, Text: "stopped at row " + row})
	}
	c.legend(padL+12, padT+8, items)
	return c
}

func (p *page) answeredChart() *chart {
	rep := p.rep
	tl := rep.Timeline
	n := len(tl) + 1
	xs, ans, abs, na := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, t := range tl {
		xs[i+1] = float64(t.Rows)
		ans[i+1] = float64(t.Answered)
		abs[i+1] = float64(t.Queries - t.Answered)
		na[i+1] = float64(t.Rows - t.Queries)
	}
	yMax := 1.0
	for i := range xs {
		yMax = math.Max(yMax, math.Max(ans[i], math.Max(abs[i], na[i])))
	}
	c, sx, sy := frame("chart-answered", "Answered and abstained over the public rows", "public rows", "rows", math.Max(float64(rep.Queries.PublicRows), 1), yMax*1.08)
	last := n - 1
	c.polyline(polyline{Class: "answered", Stroke: colAnswered, N: n, Points: points(xs, ans, sx, sy), Final: attr(ans[last])})
	c.polyline(polyline{Class: "abstained", Stroke: colAbstained, N: n, Points: points(xs, abs, sx, sy), Final: attr(abs[last])})
	items := [][2]string{{fmt.Sprintf("answered (%d)", rep.Queries.Answered), colAnswered},
		{fmt.Sprintf("abstained by the threshold (%d)", rep.Queries.Seen-rep.Queries.Answered), colAbstained}}
	if rep.Queries.NotAsked > 0 {
		c.polyline(polyline{Class: "not-queried", Stroke: colNotAsked, N: n, Points: points(xs, na, sx, sy),
			Final: attr(na[last]), Dash: "5 3"})
		what := "not queried"
		if src := rep.Sources; src != nil && src.Student > 0 {
			what = "not queried: labelled by the student"
		}
		items = append(items, [2]string{fmt.Sprintf("%s (%d)", what, rep.Queries.NotAsked), colNotAsked})
	}
	c.legend(padL+12, padT+8, items)
	return c
}

// bars draws a horizontal bar chart; each bar carries its value in its
// attribute data-count, or with epsilons data-epsilon.
func bars(id, title string, names []string, values []float64, colours []string, epsilons bool, format func(float64) string, refLine float64, refLabel string) *chart {
	rowH := 34
	h := padT + rowH*len(names) + 40
	labelW := 170
	x0, x1 := float64(labelW), float64(chartW-padR-70)
	hi := refLine
	for _, v := range values {
		if !math.IsInf(v, 0) {
			hi = math.Max(hi, v)
		}
	}
	ticks, top := niceTicks(math.Max(hi, 1e-9), 5)
	sx := scale{0, top, x0, x1}
	c := &chart{ID: id, Title: title, W: chartW, H: h}
	base := float64(h - 30)
	for _, t := range ticks {
		x := sx.at(t)
		c.line(line{X1: f1(x), Y1: itoa(padT - 8), X2: f1(x), Y2: f1(base), Stroke: colGrid})
		c.text(text{X: f1(x), Y: f1(base + 16), Size: "12", Anchor: "middle", Fill: colAxis, Text: tick(t)})
	}
	for i, name := range names {
		y := padT + rowH*i
		v := values[i]
		w := math.Max(sx.at(math.Min(v, top))-x0, 0)
		col := colBar
		if colours != nil {
			col = colours[i]
		}
		c.text(text{X: itoa(labelW - 8), Y: itoa(y + 17), Size: "13", Anchor: "end", Fill: colAxis, Text: name})
		b := &bar{Name: name, X: f1(x0), Y: itoa(y + 2), Width: f1(w), Fill: col}
		if epsilons {
			b.Epsilon = attr(v)
		} else {
			b.Count = attr(v)
		}
		c.Items = append(c.Items, item{Bar: b})
		c.text(text{X: f1(x0 + w + 5), Y: itoa(y + 17), Size: "12", Fill: colAxis, Text: format(v)})
	}
	if refLine > 0 {
		x := sx.at(refLine)
		c.line(line{Class: "claim", Epsilon: attr(refLine), X1: f1(x), Y1: itoa(padT - 8), X2: f1(x), Y2: f1(base),
			Stroke: colBudget, Width: "1.6", Dash: "6 4"})
		c.text(text{X: f1(x), Y: itoa(padT - 12), Size: "12", Anchor: "middle", Fill: colBudget, Text: refLabel})
	}
	return c
}

func (p *page) labelsChart() *chart {
	rep := p.rep
	names := make([]string, 0, len(rep.Released))
	for c := range rep.Released {
		names = append(names, c)
	}
	// The class order of the report, then any other (sorted).
	order := map[string]int{}
	for i, c := range rep.Classes {
		order[c] = i
	}
	sort.Slice(names, func(i, j int) bool {
		oi, iok := order[names[i]]
		oj, jok := order[names[j]]
		if iok && jok {
			return oi < oj
		}
		if iok != jok {
			return iok
		}
		return names[i] < names[j]
	})
	vals := make([]float64, len(names))
	total := 0.0
	for i, c := range names {
		vals[i] = float64(rep.Released[c])
		total += vals[i]
	}
	format := func(v float64) string {
		if total == 0 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return fmt.Sprintf("%s (%.1f%%)", strconv.FormatFloat(v, 'f', 0, 64), 100*v/total)
	}
	return bars("chart-labels", "Released labels", names, vals, nil, false, format, 0, "")
}

// sourcesChart draws how many rows each source labelled (pate_source).
func (p *page) sourcesChart() *chart {
	src := p.rep.Sources
	names := []string{p.sourceName("teachers")}
	vals := []float64{float64(src.Teachers)}
	cols := []string{colAnswered}
	if p.rep.Student != nil || src.Student > 0 {
		names, vals, cols = append(names, p.sourceName("student")), append(vals, float64(src.Student)), append(cols, colSpend)
	}
	names, vals, cols = append(names, p.sourceName("abstained")), append(vals, float64(src.Abstained)), append(cols, colNotAsked)
	total := float64(p.rep.Queries.PublicRows)
	format := func(v float64) string {
		if total == 0 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return fmt.Sprintf("%s (%.1f%%)", strconv.FormatFloat(v, 'f', 0, 64), 100*v/total)
	}
	return bars("chart-sources", "Who labelled the rows", names, vals, cols, false, format, 0, "")
}

func (p *page) conversionsChart() *chart {
	s := p.rep.Spent
	names := []string{"improved (best order)", "classic (Mironov)"}
	vals := []float64{float64(s.EpsilonImproved), float64(s.EpsilonClassic)}
	cols := []string{colSpend, "#8e44ad"}
	if s.EpsilonGDP != nil {
		names = append(names, "Gaussian DP")
		vals = append(vals, float64(*s.EpsilonGDP))
		cols = append(cols, "#16a085")
	}
	claim := float64(p.rep.Guarantee.Epsilon)
	return bars("chart-conversions", "Conversions of the realized spend", names, vals, cols, true,
		func(v float64) string { return "ε = " + num(v) }, claim, "claim ε = "+num(claim))
}
