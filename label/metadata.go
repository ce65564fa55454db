package label

import (
	"encoding/json"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
)

// The output's metadata contract. An output carries, in its schema
// metadata, the version, the mechanism, ε and δ of the run that made it,
// and its privacy report. The output is created before the run starts (so
// an unwritable target fails at once): it is created with OutputMetadata,
// which keeps room (MetadataReserve) for what only the end of the run
// knows, and completed with FinalMetadata.

// reportReserve is the room kept in the output's schema metadata for the
// final JSON report (its timeline is thinned to fit: see EmbeddedReport). A
// report with its ~200-point timeline is about 17 KB.
const reportReserve = 64 << 10

// OutputMetadata is the metadata an output is created with, before the run:
// the final report and, without a budget, ε are pending.
func OutputMetadata(cfg Config) arrow.Metadata {
	eps := "pending"
	if cfg.Epsilon > 0 {
		eps = strconv.FormatFloat(cfg.Epsilon, 'g', -1, 64)
	}
	initial, _ := json.Marshal(map[string]any{
		"tool": "pate", "version": cfg.Version, "command": "label", "mechanism": cfg.Mechanism,
		"status":  "streamed: the complete report is in the --report file",
		"epsilon": cfg.Epsilon, "delta": cfg.Delta,
	})
	return arrow.MetadataFrom(map[string]string{
		"pate.version":   cfg.Version,
		"pate.mechanism": cfg.Mechanism,
		"pate.epsilon":   eps,
		"pate.delta":     strconv.FormatFloat(cfg.Delta, 'g', -1, 64),
		"pate.report":    string(initial),
	})
}

// mechanismReserve is the room kept for pate.mechanism when the run
// chooses its mechanism (Config.Choose): the placeholder and the longest
// name fit.
const mechanismReserve = 48

// MetadataReserve lists the metadata known only at the end of the run, with
// the room kept for each: the report, ε when no budget fixed it in
// advance, and the mechanism when the run chooses it.
func MetadataReserve(cfg Config) map[string]int {
	r := map[string]int{"pate.report": reportReserve}
	if cfg.Epsilon == 0 {
		r["pate.epsilon"] = 32
	}
	if cfg.Choose {
		r["pate.mechanism"] = mechanismReserve
	}
	return r
}

// FinalMetadata is the metadata that completes the output when the run
// ends: the values of MetadataReserve's keys. A run that chose its
// mechanism writes the one that ran (the report's), not the planned one.
func FinalMetadata(cfg Config, rep *Report) map[string]string {
	final := map[string]string{"pate.report": string(EmbeddedReport(rep))}
	if cfg.Epsilon == 0 {
		final["pate.epsilon"] = strconv.FormatFloat(float64(rep.Guarantee.Epsilon), 'g', -1, 64)
	}
	if cfg.Choose {
		final["pate.mechanism"] = rep.Mechanism
	}
	return final
}

// EmbeddedReport is the compact JSON report written into the output's
// metadata. A long timeline (a stream of unknown length gets a point every
// 1,000 rows, so millions of rows make a report of megabytes) is halved until
// the report fits its reserve, keeping the last point; the --report file
// keeps every point. Without this the run failed at the very end, after all
// its work and spend, with "exceeds its reserve".
func EmbeddedReport(rep *Report) []byte {
	b, _ := json.Marshal(rep)
	thin := *rep
	for len(b) > reportReserve && len(thin.Timeline) > 2 {
		tl := thin.Timeline
		out := make([]TimePoint, 0, len(tl)/2+1)
		for i := 0; i < len(tl); i += 2 {
			out = append(out, tl[i])
		}
		if last := tl[len(tl)-1]; out[len(out)-1] != last {
			out = append(out, last)
		}
		thin.Timeline = out
		b, _ = json.Marshal(&thin)
	}
	return b
}
