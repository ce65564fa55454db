package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/urfave/cli/v2"

	pateio "github.com/pate-tool/pate/io"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/noise"
)

const replicateNotPrivate = "NOT PRIVATE: pate replicate splits and reads the sensitive data outside any mechanism; its figures are a diagnostic for the data owner, not for release."

func replicateCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{
		Name:  "replicate",
		Usage: "would another sample of the population give the same labels? (a diagnostic, not private)",
		UsageText: `pate replicate --private F --label COL --public F --epsilon E --delta D [--splits 2] [--repeats R] [options]

The sensitive rows are split into disjoint random parts; each part labels the same public rows with the same
mechanism and budget, once with shared randomness (the same seed for partition and noise: the coupling of
replicability) and once with independent randomness. pate reports how often the released labels of two parts
differ (an abstention counts as a label), with a 95% Wilson interval over the public rows.

Example:
   pate replicate --private testdata/adult_train.parquet --label income --public testdata/adult_public.parquet \
       --epsilon 2 --delta 1e-5 --max-queries 1500 --classes 0,1 --repeats 3`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "private", Usage: "sensitive labelled data", Required: true},
			&cli.StringFlag{Name: "label", Usage: "label column of the sensitive data", Required: true},
			&cli.StringFlag{Name: "public", Usage: "public data to label (a file: it is read once per run)", Required: true},
			&cli.StringSliceFlag{Name: "features", Usage: "feature columns (default: every sensitive column but the label)"},
			&cli.StringSliceFlag{Name: "classes", Usage: "the public class set (default: released privately by each run)"},
			&cli.IntFlag{Name: "teachers", Value: 250, Usage: "teachers per run (each part has 1/splits of the data)"},
			&cli.StringFlag{Name: "learner", Value: "logreg", Usage: "logreg, nb or tree"},
			&cli.IntFlag{Name: "splits", Value: 2, Usage: "number of disjoint parts of the sensitive data"},
			&cli.IntFlag{Name: "repeats", Value: 3, Usage: "number of random splits"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the splits and of the shared randomness"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
		}, budgetFlags()...),
		Action: func(c *cli.Context) error {
			*jsonErrors = c.Bool("json")
			if err := noPositional(c); err != nil {
				return err
			}
			return runReplicate(c, e)
		},
	}
}

// replicateResult is what pate replicate prints.
type replicateResult struct {
	Private     bool      `json:"private"`
	Note        string    `json:"note"`
	Splits      int       `json:"splits"`
	Repeats     int       `json:"repeats"`
	PublicRows  int       `json:"public_rows"`
	Shared      agreement `json:"shared_randomness"`
	Independent agreement `json:"independent_randomness"`
}

// agreement is the disagreement rate of the released labels between parts.
type agreement struct {
	Compared int     `json:"rows_compared"`
	Differ   int     `json:"rows_differing"`
	Rate     float64 `json:"disagreement"`
	Low      float64 `json:"ci95_low"`
	High     float64 `json:"ci95_high"`
}

func (a *agreement) finish() {
	a.Rate = float64(a.Differ) / float64(max(1, a.Compared))
	a.Low, a.High = wilson(a.Differ, a.Compared)
}

// wilson is the 95% Wilson score interval of k successes in n trials.
func wilson(k, n int) (float64, float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return max(0, mid-half), min(1, mid+half)
}

func runReplicate(c *cli.Context, e *env) error {
	splits, repeats := c.Int("splits"), c.Int("repeats")
	if splits < 2 {
		return usagef("--splits must be at least 2, got %d", splits)
	}
	if repeats < 1 {
		return usagef("--repeats must be at least 1, got %d", repeats)
	}
	if eps := c.Float64("epsilon"); c.IsSet("epsilon") && !(eps > 0 && eps <= math.MaxFloat64) {
		return usagef("--epsilon must be a positive finite number, got %g", eps)
	}
	if d := c.Float64("delta"); !(d > 0 && d < 1) {
		return usagef("--delta must be in (0, 1), got %g", d)
	}
	if c.String("public") == "-" || c.String("private") == "-" {
		return usagef("pate replicate reads its inputs several times: give files, not stdin")
	}
	mem := memory.DefaultAllocator
	sens, err := pateio.Open(c.String("private"), pateio.ReadOptions{Allocator: mem})
	if err != nil {
		return fmt.Errorf("--private: %w", err)
	}
	defer sens.Close()
	var recs []arrow.Record
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for {
		rec, err := sens.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("--private: %w", err)
		}
		recs = append(recs, rec)
	}
	table := array.NewTableFromRecords(sens.Schema(), recs)
	defer table.Release()
	n := int(table.NumRows())
	if n < splits {
		return fmt.Errorf("%w: %s has %d rows, fewer than --splits %d", label.ErrInvalidInput, c.String("private"), n, splits)
	}

	res := replicateResult{Private: false, Note: replicateNotPrivate, Splits: splits, Repeats: repeats}
	base := c.Uint64("seed")
	for r := 0; r < repeats; r++ {
		parts := splitRows(n, splits, noise.NewSeededSource(base, uint64(1000+r)))
		shared := make([][]string, splits)
		indep := make([][]string, splits)
		for p := range parts {
			sub, err := takeRows(mem, table, parts[p])
			if err != nil {
				return err
			}
			s1 := base + uint64(r)*1_000_003
			s2 := base + uint64(r)*1_000_003 + uint64(p+1)*7919
			shared[p], err = replicateRun(c, sub, s1)
			if err == nil {
				indep[p], err = replicateRun(c, sub, s2)
			}
			sub.Release()
			if err != nil {
				return fmt.Errorf("repeat %d, part %d: %w", r, p, err)
			}
		}
		for a := 0; a < splits; a++ {
			for b := a + 1; b < splits; b++ {
				compare(&res.Shared, shared[a], shared[b])
				compare(&res.Independent, indep[a], indep[b])
			}
		}
		res.PublicRows = len(shared[0])
	}
	res.Shared.finish()
	res.Independent.finish()
	if c.Bool("json") {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	w := e.stdout
	fmt.Fprintf(w, "%s\n\n", replicateNotPrivate)
	fmt.Fprintf(w, "%d repeats × %d disjoint parts of %s; %d public rows compared per pair of parts\n",
		repeats, splits, c.String("private"), res.PublicRows)
	fmt.Fprintf(w, "shared randomness:      %.4f of the released labels differ (95%% CI %.4f–%.4f)\n", res.Shared.Rate, res.Shared.Low, res.Shared.High)
	fmt.Fprintf(w, "independent randomness: %.4f of the released labels differ (95%% CI %.4f–%.4f)\n", res.Independent.Rate, res.Independent.Low, res.Independent.High)
	return nil
}

func compare(a *agreement, x, y []string) {
	for i := range x {
		a.Compared++
		if x[i] != y[i] {
			a.Differ++
		}
	}
}

// splitRows deals the row indices 0..n-1 into k disjoint parts of nearly
// equal size, in a random order drawn from src.
func splitRows(n, k int, src noise.Source) [][]int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(noise.UniformUint64(src, uint64(i+1)))
		perm[i], perm[j] = perm[j], perm[i]
	}
	parts := make([][]int, k)
	for i, r := range perm {
		parts[i%k] = append(parts[i%k], r)
	}
	return parts
}

// takeRows copies the given rows of t into one record.
func takeRows(mem memory.Allocator, t arrow.Table, rows []int) (arrow.Record, error) {
	rec := array.NewTableReader(t, t.NumRows())
	defer rec.Release()
	if !rec.Next() {
		return nil, errors.New("empty sensitive data")
	}
	whole := rec.Record()
	b := array.NewRecordBuilder(mem, t.Schema())
	defer b.Release()
	for j := 0; j < int(whole.NumCols()); j++ {
		col := whole.Column(j)
		fb := b.Field(j)
		for _, r := range rows {
			if err := appendValue(fb, col, r); err != nil {
				return nil, fmt.Errorf("column %q: %w", t.Schema().Field(j).Name, err)
			}
		}
	}
	return b.NewRecord(), nil
}

func appendValue(b array.Builder, a arrow.Array, i int) error {
	if a.IsNull(i) {
		b.AppendNull()
		return nil
	}
	switch col := a.(type) {
	case *array.Int64:
		b.(*array.Int64Builder).Append(col.Value(i))
	case *array.Int32:
		b.(*array.Int32Builder).Append(col.Value(i))
	case *array.Float64:
		b.(*array.Float64Builder).Append(col.Value(i))
	case *array.Float32:
		b.(*array.Float32Builder).Append(col.Value(i))
	case *array.String:
		b.(*array.StringBuilder).Append(col.Value(i))
	case *array.Boolean:
		b.(*array.BooleanBuilder).Append(col.Value(i))
	default:
		return fmt.Errorf("type %s is not supported by pate replicate", a.DataType())
	}
	return nil
}

// oneRecord serves a single record.
type oneRecord struct {
	rec  arrow.Record
	done bool
}

func (o *oneRecord) Schema() *arrow.Schema { return o.rec.Schema() }
func (o *oneRecord) Read() (arrow.Record, error) {
	if o.done {
		return nil, io.EOF
	}
	o.done = true
	o.rec.Retain()
	return o.rec, nil
}

// labelsOf collects the released label of every row as text ("" when the
// row abstained).
type labelsOf struct{ out []string }

func (l *labelsOf) Write(rec arrow.Record) error {
	n := int(rec.NumCols())
	lab, src := rec.Column(n-2), rec.Column(n-1).(*array.String)
	for i := 0; i < int(rec.NumRows()); i++ {
		v := ""
		if src.Value(i) != label.SourceAbstained && !lab.IsNull(i) {
			v = lab.ValueStr(i)
		}
		l.out = append(l.out, v)
	}
	return nil
}

// replicateRun labels the public file with the sensitive rows of sub.
func replicateRun(c *cli.Context, sub arrow.Record, seed uint64) ([]string, error) {
	mem := memory.DefaultAllocator
	pub, err := pateio.Open(c.String("public"), pateio.ReadOptions{BatchSize: 16384, Allocator: mem})
	if err != nil {
		return nil, fmt.Errorf("--public: %w", err)
	}
	defer pub.Close()
	cfg := label.Config{
		Label:            c.String("label"),
		Classes:          nilIfEmpty(splitList(c.StringSlice("classes"))),
		Features:         nilIfEmpty(splitList(c.StringSlice("features"))),
		Keep:             []string{},
		Teachers:         c.Int("teachers"),
		Learner:          c.String("learner"),
		Mechanism:        c.String("mechanism"),
		Epsilon:          c.Float64("epsilon"),
		Delta:            c.Float64("delta"),
		MaxQueries:       c.Int64("max-queries"),
		PublicRows:       pub.NumRows(),
		Params:           mechanismParams(c),
		AnsweredFraction: c.Float64("answered-fraction"),
		SigmaRatio:       c.Float64("sigma-ratio"),
		SensitiveName:    inputName(c.String("private")),
		PublicName:       inputName(c.String("public")),
		Seed:             &seed,
		BatchSize:        16384,
		Allocator:        mem,
		Version:          version,
	}
	lab, err := label.New(cfg, sub.Schema(), pub.Schema())
	if err != nil {
		return nil, err
	}
	out := &labelsOf{}
	if _, err := lab.Run(c.Context, &oneRecord{rec: sub}, pub, out); err != nil {
		return nil, err
	}
	return out.out, nil
}
