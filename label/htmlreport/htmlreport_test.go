package htmlreport

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/label/report"
)

var update = flag.Bool("update", false, "rewrite the golden HTML files")

// node is a generic XML element, for walking the inline SVG.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []node     `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n *node) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (n *node) walk(fn func(*node)) {
	fn(n)
	for i := range n.Nodes {
		n.Nodes[i].walk(fn)
	}
}

// svgs parses every inline <svg> of the page as XML, by id.
func svgs(t *testing.T, page string) map[string]*node {
	t.Helper()
	out := map[string]*node{}
	re := regexp.MustCompile(`(?s)<svg .*?</svg>`)
	for _, s := range re.FindAllString(page, -1) {
		var n node
		if err := xml.Unmarshal([]byte(s), &n); err != nil {
			t.Fatalf("an inline SVG is not well-formed XML: %v", err)
		}
		id, _ := n.attr("id")
		out[id] = &n
	}
	return out
}

func find(n *node, elem, class string) []*node {
	var out []*node
	n.walk(func(m *node) {
		c, _ := m.attr("class")
		if m.XMLName.Local == elem && (class == "" || c == class) {
			out = append(out, m)
		}
	})
	return out
}

func fattr(t *testing.T, n *node, name string) float64 {
	t.Helper()
	s, ok := n.attr(name)
	if !ok {
		t.Fatalf("<%s> has no %s", n.XMLName.Local, name)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return v
}

func TestWrite(t *testing.T) {
	tests := []struct{ name, report string }{
		{"adult confident-gnmax", "adult_report.json"},
		{"lnmax without a filter", "lnmax_nofilter_report.json"},
		{"two label columns", "multilabel_report.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.report))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := label.ParseReport(b)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Write(&buf, rep, audited(t, rep)); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			golden := filepath.Join("testdata", strings.TrimSuffix(tc.report, ".json")+".html")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if page != string(want) {
				t.Errorf("page differs from %s (run go test -update and look at it)", golden)
			}
			for _, bad := range []string{"http://", "https://", "<script", "<link", "src="} {
				if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
					t.Errorf("page is not self-contained: it contains %q", bad)
				}
			}
			if !strings.Contains(page, `data-holds="true"`) {
				t.Errorf("verdict missing or failed")
			}
			charts := svgs(t, page)
			for _, id := range []string{"chart-epsilon", "chart-answered", "chart-labels", "chart-conversions"} {
				if id == "chart-labels" && len(rep.Labels) > 0 {
					continue // a multi-label run has a table per column instead
				}
				if charts[id] == nil {
					t.Fatalf("chart %s missing", id)
				}
			}

			checkEpsilonChart(t, rep, charts, page)
			checkAnsweredChart(t, rep, charts, page)
			checkReleasedLabels(t, rep, charts, page)
			checkConversions(t, rep, charts, page)
			checkParameters(t, rep, charts, page)
		})
	}
}

// checkEpsilonChart checks the ε chart: one point per timeline entry, ending at
// the ε of the realized spend; the budget line at the claim; the stop marker.
func checkEpsilonChart(t *testing.T, rep *label.Report, charts map[string]*node, page string) {
	t.Helper()
	// ε over the queries: one point per timeline entry, ending at
	// the ε of the realized spend; the budget line at the claim.
	dc := 0.0
	if rep.ClassDiscovery != nil {
		dc = float64(rep.ClassDiscovery.Delta)
	}
	for _, l := range rep.Labels {
		if l.ClassDiscovery != nil {
			dc += float64(l.ClassDiscovery.Delta)
		}
	}
	spend := find(charts["chart-epsilon"], "polyline", "spend")
	if len(spend) != 1 || int(fattr(t, spend[0], "data-n")) != len(rep.Timeline) {
		t.Fatalf("spend line: want %d points", len(rep.Timeline))
	}
	last := rep.Timeline[len(rep.Timeline)-1]
	wantEps := rdp.RoundUp(rdp.ZCDPEps(float64(last.Rho), float64(rep.Guarantee.Delta)-dc), 6)
	if got := fattr(t, spend[0], "data-final-epsilon"); got != wantEps {
		t.Errorf("final ε %v, want %v", got, wantEps)
	}
	if math.Abs(wantEps-float64(rep.Spent.EpsilonImproved)) > 1e-6 && rep.Mechanism != label.MechanismLNMax {
		t.Errorf("final ε %v far from the report's %v", wantEps, rep.Spent.EpsilonImproved)
	}
	pts := strings.Fields(mustAttr(t, spend[0], "points"))
	if len(pts) != len(rep.Timeline) {
		t.Errorf("%d points drawn, timeline has %d", len(pts), len(rep.Timeline))
	}
	budget := find(charts["chart-epsilon"], "line", "budget")
	if rep.Budget.Filter {
		if len(budget) != 1 || fattr(t, budget[0], "data-epsilon") != float64(rep.Guarantee.Epsilon) {
			t.Errorf("budget line missing or wrong")
		}
	} else if len(budget) != 0 {
		t.Errorf("budget line drawn for a run without a filter")
	}
	stop := find(charts["chart-epsilon"], "line", "stop")
	if rep.Budget.StoppedOn != (len(stop) == 1) {
		t.Errorf("stop marker: %d, stopped %v", len(stop), rep.Budget.StoppedOn)
	}
	if len(stop) == 1 && int64(fattr(t, stop[0], "data-row")) != rep.Budget.StoppedAtRow {
		t.Errorf("stop marker at row %v, want %d", fattr(t, stop[0], "data-row"), rep.Budget.StoppedAtRow)
	}
}

// checkAnsweredChart checks the answered and abstained lines against the report.
func checkAnsweredChart(t *testing.T, rep *label.Report, charts map[string]*node, page string) {
	t.Helper()
	// Answered and abstained.
	ans := find(charts["chart-answered"], "polyline", "answered")
	abs := find(charts["chart-answered"], "polyline", "abstained")
	if len(ans) != 1 || len(abs) != 1 {
		t.Fatalf("answered/abstained lines missing")
	}
	if got := int64(fattr(t, ans[0], "data-final")); got != rep.Queries.Answered {
		t.Errorf("answered %d, report %d", got, rep.Queries.Answered)
	}
	notq := int64(0)
	if nq := find(charts["chart-answered"], "polyline", "not-queried"); len(nq) == 1 {
		notq = int64(fattr(t, nq[0], "data-final"))
	}
	if got := int64(fattr(t, abs[0], "data-final")) + notq; got != rep.Queries.Abstained {
		t.Errorf("abstained %d, report %d", got, rep.Queries.Abstained)
	}
}

// checkReleasedLabels checks a bar per class, or with several label columns a
// table row per column.
func checkReleasedLabels(t *testing.T, rep *label.Report, charts map[string]*node, page string) {
	t.Helper()
	// Released labels: a bar per class, or with several label
	// columns a table row per column.
	for _, l := range rep.Labels {
		row := regexp.MustCompile(`<tr><th>` + regexp.QuoteMeta(l.Label) + `</th>.*?</tr>`).FindString(page)
		for _, want := range []string{fmt.Sprintf(">%d<", l.Answered), fmt.Sprintf(">%d<", l.NoisyArgmaxes), "σ2 = " + l.Params.Sigma2} {
			if !strings.Contains(row, want) {
				t.Errorf("label column %s: row %q lacks %q", l.Label, row, want)
			}
		}
	}
	var barsL []*node
	if len(rep.Labels) == 0 {
		barsL = find(charts["chart-labels"], "rect", "bar")
	}
	if len(barsL) != len(rep.Released) {
		t.Fatalf("%d label bars, %d classes released", len(barsL), len(rep.Released))
	}
	for _, b := range barsL {
		name := mustAttr(t, b, "data-name")
		if got := int64(fattr(t, b, "data-count")); got != rep.Released[name] {
			t.Errorf("class %s: bar %d, report %d", name, got, rep.Released[name])
		}
	}
}

// checkConversions checks the conversion bars and the claim line.
func checkConversions(t *testing.T, rep *label.Report, charts map[string]*node, page string) {
	t.Helper()
	// Conversions.
	wantConv := map[string]float64{
		"improved (best order)": float64(rep.Spent.EpsilonImproved),
		"classic (Mironov)":     float64(rep.Spent.EpsilonClassic),
	}
	if rep.Spent.EpsilonGDP != nil {
		wantConv["Gaussian DP"] = float64(*rep.Spent.EpsilonGDP)
	}
	barsC := find(charts["chart-conversions"], "rect", "bar")
	if len(barsC) != len(wantConv) {
		t.Fatalf("%d conversion bars, want %d", len(barsC), len(wantConv))
	}
	for _, b := range barsC {
		name := mustAttr(t, b, "data-name")
		if got := fattr(t, b, "data-epsilon"); got != wantConv[name] {
			t.Errorf("%s: bar %v, report %v", name, got, wantConv[name])
		}
	}
	claim := find(charts["chart-conversions"], "line", "claim")
	if len(claim) != 1 || fattr(t, claim[0], "data-epsilon") != float64(rep.Guarantee.Epsilon) {
		t.Errorf("claim line missing or wrong")
	}
}

// checkParameters checks the parameters and the explanation on the page.
func checkParameters(t *testing.T, rep *label.Report, charts map[string]*node, page string) {
	t.Helper()
	// Parameters and explanation.
	for _, s := range []string{rep.Mechanism, rep.Params.Sigma1, rep.Params.Sigma2, rep.Params.Sigma, rep.Params.LaplaceScale,
		`data-field="answered">` + strconv.FormatInt(rep.Queries.Answered, 10) + "<", "What the guarantee means", "neighbours"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

func mustAttr(t *testing.T, n *node, name string) string {
	t.Helper()
	s, ok := n.attr(name)
	if !ok {
		t.Fatalf("<%s> has no %s", n.XMLName.Local, name)
	}
	return s
}

func TestWriteRefusesNothing(t *testing.T) {
	if err := Write(&bytes.Buffer{}, nil, nil); err == nil {
		t.Fatal("Write(nil report) succeeded")
	}
}

// TestWriteDPLogReg: the page of a dp-logreg run lists the parameters its
// cost depends on, and the default plan's choice that picked it.
func TestWriteDPLogReg(t *testing.T) {
	rep := &label.Report{SchemaVersion: label.ReportSchemaVersion, Tool: "pate", Command: "label", Mechanism: label.MechanismDPLogReg,
		Classes: []string{"0", "1"}, Released: map[string]int64{"0": 3, "1": 2},
		Queries:  label.Queries{PublicRows: 5, Seen: 5, Answered: 5},
		DPLogReg: &label.DPLogRegReport{Sigma: "30210", CountSigma: "18.1", Steps: 137, SensSq: 264931, Dims: 226, Rho: 0.0305},
		Choice: &label.ChoiceReport{Chosen: label.MechanismDPLogReg, CountSigma: "17.9", NoisyRows: 379,
			Why: "n̂/(T·C) = 0.76 < 10"}}
	var b strings.Builder
	if err := Write(&b, rep, &label.AuditResult{Mechanism: rep.Mechanism, Holds: true}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"30210", "18.1", ">137<", "264931", ">226<", "17.9", ">379<", "0.76 &lt; 10"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

// audited is the audit of rep by package label (the tests only: the
// package itself takes the audit as given).
func audited(t *testing.T, rep *report.Report) *report.AuditResult {
	t.Helper()
	res, err := label.Audit(rep)
	if res == nil {
		t.Fatal(err)
	}
	return res
}

// TestPageNeverShowsLessThanTheReport: the ε the page draws as spent at
// the run's full spend is never below the report's stated
// spent.epsilon_improved, whether the timeline records its ε (taken as
// stated) or not (a report from before: its ρ converted by the page),
// and whatever the page's own conversion would give.
func TestPageNeverShowsLessThanTheReport(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "adult_report.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		stated float64 // added to the report's stated ε
		points bool    // the timeline records each point's ε
	}{
		{"as recorded", 0, false},
		{"stated above the page's conversion", 0.05, false},
		{"points with their ε, stated above", 0.05, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := label.ParseReport(b)
			if err != nil {
				t.Fatal(err)
			}
			rep.Spent.EpsilonImproved += label.Float(tc.stated)
			if tc.points {
				for i := range rep.Timeline {
					rep.Timeline[i].Epsilon = label.Float(0.5 * float64(i+1) / float64(len(rep.Timeline)))
				}
			}
			var buf bytes.Buffer
			if err := Write(&buf, rep, audited(t, rep)); err != nil {
				t.Fatal(err)
			}
			spend := find(svgs(t, buf.String())["chart-epsilon"], "polyline", "spend")
			if len(spend) != 1 {
				t.Fatal("no spend line")
			}
			if got := fattr(t, spend[0], "data-final-epsilon"); got < float64(rep.Spent.EpsilonImproved) {
				t.Errorf("the page's final ε %v is below the report's %v", got, rep.Spent.EpsilonImproved)
			}
		})
	}
}
