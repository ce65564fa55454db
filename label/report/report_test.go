package report

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  string // "" = parses
	}{
		{"a report", `{"schema_version":1,"tool":"pate","command":"label","mechanism":"gnmax","guarantee":{"epsilon":"inf"}}`, ""},
		{"not json", `{`, "report: unexpected EOF"},
		{"trailing data", `{"schema_version":1,"tool":"pate","command":"label"} {}`, "report: trailing data after the JSON object"},
		{"another tool", `{"schema_version":1,"tool":"other","command":"label"}`, `report: tool "other", not a pate report`},
		{"a later schema", `{"schema_version":2,"tool":"pate","command":"label"}`, "report: unknown schema_version 2 (this pate reads 1)"},
		{"another command", `{"schema_version":1,"tool":"pate","command":"aggregate"}`, `report: command "aggregate" cannot be audited (only label)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Mechanism != "gnmax" || !math.IsInf(float64(rep.Guarantee.Epsilon), 1) {
				t.Errorf("parsed %+v", rep)
			}
		})
	}
}

func TestFloatJSON(t *testing.T) {
	tests := []struct {
		v    float64
		json string
	}{
		{1.5, "1.5"}, {0, "0"}, {math.Inf(1), `"inf"`}, {math.Inf(-1), `"-inf"`}, {math.NaN(), `"nan"`},
	}
	for _, tc := range tests {
		t.Run(tc.json, func(t *testing.T) {
			b, err := json.Marshal(Float(tc.v))
			if err != nil || string(b) != tc.json {
				t.Fatalf("Marshal = %s, %v; want %s", b, err, tc.json)
			}
			var f Float
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			if got := float64(f); got != tc.v && !(math.IsNaN(got) && math.IsNaN(tc.v)) {
				t.Errorf("round trip %v, want %v", got, tc.v)
			}
		})
	}
}

// TestReadersDoNotImportTheEngine: the packages that read reports (the
// ledger, the HTML report, this one) import neither the engine (package
// label) nor anything that imports it; they get the audit as a value.
func TestReadersDoNotImportTheEngine(t *testing.T) {
	const engine = "github.com/pate-tool/pate/label"
	for _, dir := range []string{".", "../ledger", "../htmlreport"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no Go files", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path == engine || path == engine+"/replicate" {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}
