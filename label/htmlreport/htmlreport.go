package htmlreport

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
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
// result of label.Audit on rep; when nil, Write runs the audit itself (a
// report whose claim fails is still drawn, with the verdict shown).
func Write(w io.Writer, rep *label.Report, audit *label.AuditResult) error {
	if rep == nil {
		return errors.New("htmlreport: no report")
	}
	if audit == nil {
		res, err := label.Audit(rep)
		if res == nil {
			return fmt.Errorf("htmlreport: %w", err)
		}
		audit = res
	}
	bw := bufio.NewWriter(w)
	p := &page{w: bw, rep: rep, audit: audit}
	p.write()
	return bw.Flush()
}

type page struct {
	w     *bufio.Writer
	rep   *label.Report
	audit *label.AuditResult
}

func (p *page) f(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

func esc(s string) string { return html.EscapeString(s) }

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

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;background:#f6f7f9;color:#1d2125}
main{max-width:1140px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:18px;margin:0 0 10px}
.sub{color:#5a6068;margin:0 0 18px}
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

func (p *page) write() {
	rep, a := p.rep, p.audit
	p.f("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	p.f("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	p.f("<title>pate privacy report — %s, ε = %s</title>\n", esc(rep.Mechanism), num(float64(rep.Guarantee.Epsilon)))
	p.f("<style>\n%s\n</style>\n</head>\n<body>\n<main>\n", css)
	p.f("<h1>pate privacy report</h1>\n")
	p.f("<p class=\"sub\">pate %s: private labels of column <b>%s</b> · mechanism <b>%s</b> · pate %s · report schema %d</p>\n",
		esc(rep.Command), esc(rep.Label), esc(rep.Mechanism), esc(rep.Version), rep.SchemaVersion)
	if a.Holds {
		p.f("<div class=\"verdict ok\" id=\"verdict\" data-holds=\"true\">The claim holds: (ε = <b>%s</b>, δ = <b>%s</b>), recomputed ε = %s from the mechanism, its parameters and the event counts.</div>\n",
			num(a.ClaimedEpsilon), num(a.Delta), num(a.Epsilon))
	} else {
		p.f("<div class=\"verdict bad\" id=\"verdict\" data-holds=\"false\">The claim DOES NOT hold: the report claims ε = <b>%s</b>, the recomputation gives ε = <b>%s</b> (see the checks below).</div>\n",
			num(a.ClaimedEpsilon), num(a.Epsilon))
	}
	if rep.Replicable {
		p.f("<div class=\"seeded\">This run is <b>replicable</b>: its noise comes from a seed shared between curators (%s). Its guarantee holds only while the seed stays secret from the recipients of the labels, and covers this release alone.</div>\n", esc(rep.ReplicableVia))
	} else if rep.Seeded {
		p.f("<div class=\"seeded\">This run was <b>seeded</b>: anyone who knows the seed can reproduce its noise. Use seeded runs for tests only.</div>\n")
	}
	p.f("<div class=\"grid\">\n")
	p.parameters()
	p.outcome()
	p.card("ε spent over the queries", p.epsilonChart())
	p.card("Answered and abstained over the public rows", p.answeredChart())
	if len(rep.Labels) > 0 {
		p.labelColumns()
	} else {
		p.card("Released labels", p.labelsChart())
	}
	p.card("Conversions of the realized spend", p.conversionsChart())
	p.f("</div>\n")
	p.f("<div class=\"card\" style=\"margin-top:18px\"><h2>What the guarantee means</h2>\n<ul class=\"explain\" id=\"explanation\">\n")
	for _, s := range a.Explanation {
		p.f("<li>%s</li>\n", esc(s))
	}
	p.f("</ul></div>\n")
	p.checks()
	p.f("<footer>Self-contained page written by pate %s; it loads nothing from the network. Every figure is a public parameter, a count of public rows or a mechanism output.</footer>\n", esc(rep.Version))
	p.f("</main>\n</body>\n</html>\n")
}

func (p *page) card(title, body string) {
	p.f("<div class=\"card\"><h2>%s</h2>\n%s</div>\n", esc(title), body)
}

func (p *page) parameters() {
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
	rows = append(rows,
		[2]string{"Teachers", fmt.Sprintf("%d (%s)", rep.Teachers, rep.Learner)},
		[2]string{"Classes", fmt.Sprintf("%s — %s", strings.Join(rep.Classes, ", "), rep.ClassesSource)},
		[2]string{"Privacy unit", rep.PrivacyUnit},
		[2]string{"Guarantee ε", num(float64(rep.Guarantee.Epsilon))},
		[2]string{"Guarantee δ", num(float64(rep.Guarantee.Delta))},
		[2]string{"Guarantee ρ (zCDP)", num(float64(rep.Guarantee.Rho))},
		[2]string{"Basis", rep.Guarantee.Basis},
		[2]string{"Seeded", strconv.FormatBool(rep.Seeded)},
		[2]string{"Replicable", strconv.FormatBool(rep.Replicable)},
	)
	p.f("<div class=\"card\"><h2>Parameters</h2>\n<table id=\"parameters\">\n")
	for _, r := range rows {
		p.f("<tr><th>%s</th><td>%s</td></tr>\n", esc(r[0]), esc(r[1]))
	}
	p.f("</table></div>\n")
}

// labelColumns is the card of a multi-label run: what each label column
// was planned for, cost and released.
func (p *page) labelColumns() {
	p.f("<div class=\"card\"><h2>Label columns (one joint query per row)</h2>\n<table id=\"labels\">\n")
	p.f("<tr><th>column</th><th>share</th><th>noise</th><th>checks</th><th>argmaxes</th><th>answered</th><th>ρ</th><th>released</th></tr>\n")
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
		p.f("<tr><th>%s</th><td class=\"n\">%s</td><td>%s</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%s</td><td>%s</td></tr>\n",
			esc(l.Label), num(l.Weight), esc(strings.Join(noise, ", ")), l.ThresholdChecks, l.NoisyArgmaxes, l.Answered,
			num(float64(l.Rho)), esc(strings.Join(rel, ", ")))
	}
	p.f("</table>\n<p class=\"sub\">ρ adds up over the columns: the run's realized ρ is their sum plus the class discoveries'. A row counts as answered when at least one of its labels was released.</p></div>\n")
}

func (p *page) outcome() {
	rep := p.rep
	q, s := rep.Queries, rep.Spent
	stop := "no"
	if rep.Budget.StoppedOn {
		stop = fmt.Sprintf("yes, at row %d", rep.Budget.StoppedAtRow)
	}
	rows := [][3]string{
		{"Public rows", "public_rows", strconv.FormatInt(q.PublicRows, 10)},
		{"Queries put", "queries", strconv.FormatInt(q.Seen, 10)},
		{"Answered", "answered", strconv.FormatInt(q.Answered, 10)},
		{"Abstained (incl. not queried)", "abstained", strconv.FormatInt(q.Abstained, 10)},
		{"Not queried", "not_queried", strconv.FormatInt(q.NotAsked, 10)},
		{"Threshold checks", "threshold_checks", strconv.FormatInt(s.ThresholdChecks, 10)},
		{"Noisy argmaxes", "noisy_argmaxes", strconv.FormatInt(s.NoisyArgmaxes, 10)},
		{"Realized ρ", "spent_rho", num(float64(s.Rho))},
		{"Realized ε (improved)", "epsilon_improved", fmt.Sprintf("%s at order %s", num(float64(s.EpsilonImproved)), num(float64(s.OrderImproved)))},
		{"Realized ε (classic)", "epsilon_classic", fmt.Sprintf("%s at order %s", num(float64(s.EpsilonClassic)), num(float64(s.OrderClassic)))},
		{"Stopped on the budget", "stopped", stop},
	}
	p.f("<div class=\"card\"><h2>Outcome</h2>\n<table id=\"outcome\">\n")
	for _, r := range rows {
		p.f("<tr><th>%s</th><td class=\"n\" data-field=\"%s\">%s</td></tr>\n", esc(r[0]), r[1], esc(r[2]))
	}
	p.f("</table></div>\n")
}

func (p *page) checks() {
	p.f("<div class=\"card\" style=\"margin-top:18px\"><h2>Audit checks</h2>\n<table class=\"checks\" id=\"checks\">\n")
	p.f("<tr><th></th><th>check</th><th>report</th><th>recomputed</th></tr>\n")
	for _, c := range p.audit.Checks {
		cls, mark := "pass", "ok"
		if !c.OK {
			cls, mark = "fail", "FAIL"
		}
		p.f("<tr><td class=\"%s\">%s</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
			cls, mark, esc(c.Name), num(c.Claimed), num(c.Recomputed))
	}
	p.f("</table></div>\n")
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

// svgFrame draws the axes, the grid and the axis titles of a line chart and
// returns the builder with the scales.
func svgFrame(id, title, xTitle, yTitle string, xMax, yMax float64) (*strings.Builder, scale, scale) {
	var b strings.Builder
	xt, xTop := niceTicks(xMax, 6)
	yt, yTop := niceTicks(yMax, 5)
	sx := scale{0, xTop, padL, chartW - padR}
	sy := scale{0, yTop, chartH - padB, padT}
	fmt.Fprintf(&b, `<svg id="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`+"\n",
		id, chartW, chartH, chartW, chartH, esc(title))
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	for _, v := range yt {
		y := sy.at(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>`+"\n", padL, y, chartW-padR, y, colGrid)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="12" text-anchor="end" fill="%s">%s</text>`+"\n", padL-6, y+4, colAxis, tick(v))
	}
	for _, v := range xt {
		x := sx.at(v)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", x, chartH-padB, x, chartH-padB+5, colAxis)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="12" text-anchor="middle" fill="%s">%s</text>`+"\n", x, chartH-padB+19, colAxis, tick(v))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>`+"\n", padL, chartH-padB, chartW-padR, chartH-padB, colAxis)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>`+"\n", padL, padT, padL, chartH-padB, colAxis)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13" text-anchor="middle" fill="%s">%s</text>`+"\n", (padL+chartW-padR)/2, chartH-8, colAxis, esc(xTitle))
	fmt.Fprintf(&b, `<text x="14" y="%d" font-size="13" text-anchor="middle" fill="%s" transform="rotate(-90 14 %d)">%s</text>`+"\n",
		(padT+chartH-padB)/2, colAxis, (padT+chartH-padB)/2, esc(yTitle))
	return &b, sx, sy
}

func polyline(b *strings.Builder, class, colour string, xs, ys []float64, sx, sy scale, extra string) {
	fmt.Fprintf(b, `<polyline class="%s" fill="none" stroke="%s" stroke-width="2.2" stroke-linejoin="round" data-n="%d"%s points="`, class, colour, len(xs), extra)
	for i := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(b, "%.1f,%.1f", sx.at(xs[i]), sy.at(ys[i]))
	}
	b.WriteString(`"/>` + "\n")
}

func legend(b *strings.Builder, x, y int, items [][2]string) {
	for i, it := range items {
		yy := y + 17*i
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="14" height="4" fill="%s"/>`, x, yy-4, it[1])
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" fill="%s">%s</text>`+"\n", x+19, yy+1, colAxis, esc(it[0]))
	}
}

// convDelta is the δ at which the run's ρ converts to ε.
func (p *page) convDelta() float64 { return p.audit.Delta - p.audit.DiscoveryDelta }

func (p *page) epsilonChart() string {
	rep := p.rep
	tl := rep.Timeline
	budget := float64(rep.Guarantee.Epsilon)
	xs := make([]float64, len(tl))
	ys := make([]float64, len(tl))
	yMax := budget
	for i, t := range tl {
		xs[i] = float64(t.Queries)
		ys[i] = rdp.RoundUp(rdp.ZCDPEps(float64(t.Rho), p.convDelta()), 6)
		yMax = math.Max(yMax, ys[i])
	}
	xMax := math.Max(float64(rep.Queries.Seen), 1)
	b, sx, sy := svgFrame("chart-epsilon", "ε spent over the queries", "queries put", "ε spent (improved conversion)", xMax, yMax*1.08)
	if len(tl) > 0 {
		last := ys[len(ys)-1]
		polyline(b, "spend", colSpend, xs, ys, sx, sy, fmt.Sprintf(` data-final-epsilon="%s" data-final-queries="%d"`, attr(last), tl[len(tl)-1].Queries))
	}
	items := [][2]string{{"ε spent", colSpend}}
	if rep.Budget.Filter {
		y := sy.at(budget)
		fmt.Fprintf(b, `<line class="budget" data-epsilon="%s" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1.6" stroke-dasharray="6 4"/>`+"\n",
			attr(budget), padL, y, chartW-padR, y, colBudget)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="12" text-anchor="end" fill="%s">budget ε = %s</text>`+"\n", chartW-padR-4, y-6, colBudget, num(budget))
		items = append(items, [2]string{"budget", colBudget})
	}
	if rep.Budget.StoppedOn {
		x := sx.at(float64(rep.Queries.Seen))
		fmt.Fprintf(b, `<line class="stop" data-queries="%d" data-row="%d" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1.4"/>`+"\n",
			rep.Queries.Seen, rep.Budget.StoppedAtRow, x, padT, x, chartH-padB, colBudget)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="12" text-anchor="end" fill="%s">stopped at row %d</text>`+"\n", x-5, chartH-padB-10, colBudget, rep.Budget.StoppedAtRow)
	}
	legend(b, padL+12, padT+8, items)
	b.WriteString("</svg>\n")
	return b.String()
}

func (p *page) answeredChart() string {
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
	b, sx, sy := svgFrame("chart-answered", "Answered and abstained over the public rows", "public rows", "rows", math.Max(float64(rep.Queries.PublicRows), 1), yMax*1.08)
	last := n - 1
	polyline(b, "answered", colAnswered, xs, ans, sx, sy, fmt.Sprintf(` data-final="%s"`, attr(ans[last])))
	polyline(b, "abstained", colAbstained, xs, abs, sx, sy, fmt.Sprintf(` data-final="%s"`, attr(abs[last])))
	items := [][2]string{{fmt.Sprintf("answered (%d)", rep.Queries.Answered), colAnswered},
		{fmt.Sprintf("abstained by the threshold (%d)", rep.Queries.Seen-rep.Queries.Answered), colAbstained}}
	if rep.Queries.NotAsked > 0 {
		polyline(b, "not-queried", colNotAsked, xs, na, sx, sy, fmt.Sprintf(` data-final="%s" stroke-dasharray="5 3"`, attr(na[last])))
		items = append(items, [2]string{fmt.Sprintf("not queried (%d)", rep.Queries.NotAsked), colNotAsked})
	}
	legend(b, padL+12, padT+8, items)
	b.WriteString("</svg>\n")
	return b.String()
}

// bars draws a horizontal bar chart.
func bars(id, title string, names []string, values []float64, colours []string, attrName string, format func(float64) string, refLine float64, refLabel string) string {
	var b strings.Builder
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
	fmt.Fprintf(&b, `<svg id="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`+"\n", id, chartW, h, chartW, h, esc(title))
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	base := float64(h - 30)
	for _, t := range ticks {
		x := sx.at(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x, padT-8, x, base, colGrid)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle" fill="%s">%s</text>`+"\n", x, base+16, colAxis, tick(t))
	}
	for i, name := range names {
		y := padT + rowH*i
		v := values[i]
		w := sx.at(math.Min(v, top)) - x0
		col := colBar
		if colours != nil {
			col = colours[i]
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13" text-anchor="end" fill="%s">%s</text>`+"\n", labelW-8, y+17, colAxis, esc(name))
		fmt.Fprintf(&b, `<rect class="bar" data-name="%s" %s="%s" x="%.1f" y="%d" width="%.1f" height="22" fill="%s"/>`+"\n",
			esc(name), attrName, attr(v), x0, y+2, math.Max(w, 0), col)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="12" fill="%s">%s</text>`+"\n", x0+math.Max(w, 0)+5, y+17, colAxis, format(v))
	}
	if refLine > 0 {
		x := sx.at(refLine)
		fmt.Fprintf(&b, `<line class="claim" data-epsilon="%s" x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.6" stroke-dasharray="6 4"/>`+"\n",
			attr(refLine), x, padT-8, x, base, colBudget)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="12" text-anchor="middle" fill="%s">%s</text>`+"\n", x, padT-12, colBudget, esc(refLabel))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func (p *page) labelsChart() string {
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
	return bars("chart-labels", "Released labels", names, vals, nil, "data-count", format, 0, "")
}

func (p *page) conversionsChart() string {
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
	return bars("chart-conversions", "Conversions of the realized spend", names, vals, cols, "data-epsilon",
		func(v float64) string { return "ε = " + num(v) }, claim, "claim ε = "+num(claim))
}
