package htmlreport

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pate-tool/pate/label"
)

// hostile is put in every string of a report: it closes the element and
// the attribute it lands in and opens a script.
const hostile = `x</title></b></td>"'><script>alert("pwned")</script><img src=x onerror='alert(1)'>&amp;`

// poison sets every string reachable from v (struct fields, slice
// elements, map keys, pointed-to values) to hostile, allocating nil
// pointers and adding a hostile key to every map of strings.
func poison(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if !v.IsNil() {
			poison(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				poison(v.Field(i))
			}
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(hostile)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String && v.Len() == 0 && v.CanSet() {
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		}
		for i := 0; i < v.Len(); i++ {
			poison(v.Index(i))
		}
	case reflect.Map:
		if v.Type().Key().Kind() == reflect.String {
			if v.IsNil() && v.CanSet() {
				v.Set(reflect.MakeMap(v.Type()))
			}
			v.SetMapIndex(reflect.ValueOf(hostile).Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
		}
	}
}

// TestWriteEscapesHostileReport: a report whose every string (mechanism,
// label, classes, parameters, version, label columns, released class
// names) and an audit whose check names and explanation hold markup, quotes
// and a script give a page where all of it is text: no element or
// attribute comes from the report, and the text reads back unchanged.
func TestWriteEscapesHostileReport(t *testing.T) {
	tests := []struct {
		name   string
		report string
		labels bool // give the report a label column (the multi-label card)
	}{
		{"one label", "adult_report.json", false},
		{"label columns", "multilabel_report.json", true},
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
			if tc.labels != (len(rep.Labels) > 0) {
				t.Fatalf("%s: %d label columns", tc.report, len(rep.Labels))
			}
			audit, err := label.Audit(rep)
			if err != nil {
				t.Fatal(err)
			}
			poison(reflect.ValueOf(rep))
			poison(reflect.ValueOf(audit))
			rep.Replicable = true // shows ReplicableVia too
			var buf bytes.Buffer
			if err := Write(&buf, rep, audit); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			for _, bad := range []string{"<script", "<img", `"'>`, hostile} {
				if strings.Contains(page, bad) {
					t.Errorf("page contains %q unescaped", bad)
				}
			}
			// Every shown copy of the hostile string reads back whole.
			if n := strings.Count(html.UnescapeString(page), hostile); n < 10 {
				t.Errorf("hostile string shown %d times, want it in every field shown", n)
			}
			// The charts (with hostile titles, class names in attributes)
			// still parse as XML.
			charts := svgs(t, page)
			if charts["chart-conversions"] == nil {
				t.Error("conversions chart missing")
			}
			if !tc.labels {
				bars := find(charts["chart-labels"], "rect", "bar")
				var named bool
				for _, b := range bars {
					named = named || mustAttr(t, b, "data-name") == hostile
				}
				if !named {
					t.Error("no bar carries the hostile class name as its data-name")
				}
			}
		})
	}
}
