//go:build ignore

// knn_digits is the embedding case of private-knn: the 1,797 digits of
// testdata/digits.parquet (UCI optical digits as shipped with scikit-learn,
// CC BY 4.0; see testdata/README.md), shuffled once with the seed the
// utility table uses and split 2/3 sensitive, 1/3 public, with the 64 pixels
// of each row as one embedding column "pixels" of type
// fixed_size_list<float32>[64] (DuckDB's FLOAT[64]). It writes
// digits_emb_private.arrow (pixels, label) and digits_emb_public.arrow
// (pixels) into -dir, computes the non-private 10-NN ceiling on the same
// public encoding pate fits (exact neighbours among every sensitive row),
// runs pate label --mechanism private-knn over seeds 1..N and prints the
// accuracy over every public row beside the ceiling.
//
//	go run .ci/bench/knn_digits.go [-dir /tmp/pate-knn-digits] [-eps 1] [-seeds 3] [-- extra pate flags]
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/learners"
)

func main() {
	dir := flag.String("dir", "/tmp/pate-knn-digits", "output folder")
	eps := flag.String("eps", "1", "ε")
	seeds := flag.Int("seeds", 3, "seeds 1..N")
	k := flag.Int("k", 10, "neighbours of the non-private ceiling")
	set := flag.String("set", "digits", "digits (its 64 pixels as FLOAT[64]) or adult (its public encoding as FLOAT[d])")
	data := flag.String("data", "../shared/datasets", "shared datasets folder (adult)")
	given := flag.Float64("ceiling", 0, "the k-NN ceiling, when known (adult's takes minutes: .ci/utility prints it)")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	var sens, pub []arrow.Record
	var truth, ys []string
	lab := "label"
	switch *set {
	case "digits":
		all, err := readAll("testdata/digits.parquet")
		if err != nil {
			log.Fatal(err)
		}
		one, err := concat(all)
		if err != nil {
			log.Fatal(err)
		}
		emb, err := embed(one, lab)
		if err != nil {
			log.Fatal(err)
		}
		perm := rand.New(rand.NewPCG(20261124, 0)).Perm(int(emb.NumRows()))
		cut := len(perm) * 2 / 3
		if sens, err = take(emb, perm[:cut]); err != nil {
			log.Fatal(err)
		}
		pubFull, err := take(emb, perm[cut:])
		if err != nil {
			log.Fatal(err)
		}
		if truth, err = column(pubFull, lab); err != nil {
			log.Fatal(err)
		}
		pub = dropColumn(pubFull, lab)
	case "adult":
		lab = "income"
		s, err := readAll(filepath.Join(*data, "adult_train.parquet"))
		if err != nil {
			log.Fatal(err)
		}
		p, err := readAll(filepath.Join(*data, "adult_test.parquet"))
		if err != nil {
			log.Fatal(err)
		}
		if truth, err = column(p, lab); err != nil {
			log.Fatal(err)
		}
		if sens, pub, err = encodeEmbedding(s, dropColumn(p, lab), lab); err != nil {
			log.Fatal(err)
		}
	default:
		log.Fatalf("-set %q: digits or adult", *set)
	}
	ys, err := column(sens, lab)
	if err != nil {
		log.Fatal(err)
	}
	private, public := filepath.Join(*dir, *set+"_emb_private.arrow"), filepath.Join(*dir, *set+"_emb_public.arrow")
	if err := write(private, sens); err != nil {
		log.Fatal(err)
	}
	if err := write(public, pub); err != nil {
		log.Fatal(err)
	}
	vals := classes(append(append([]string(nil), ys...), truth...))
	ceil := *given
	if ceil == 0 {
		if ceil, err = knnCeiling(sens, pub, ys, truth, *k); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%s as an embedding column: %d sensitive, %d public rows, %d classes\n", *set, len(ys), len(truth), len(vals))
	fmt.Printf("non-private %d-NN ceiling (public encoding, every sensitive row): %.4f\n", *k, ceil)

	bin := filepath.Join(*dir, "pate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		log.Fatalf("go build: %v\n%s", err, out)
	}
	sum := 0.0
	for seed := 1; seed <= *seeds; seed++ {
		out := filepath.Join(*dir, "out.arrow")
		args := []string{"label", "--private", private, "--label", lab, "--public", public,
			"--classes", strings.Join(vals, ","), "--mechanism", "private-knn",
			"--epsilon", *eps, "--delta", "1e-5", "-o", out, "--seed", strconv.Itoa(seed), "--no-ledger"}
		args = append(args, flag.Args()...)
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("%v: %s", err, stderr.String())
		}
		got, err := readColumn(out, lab)
		if err != nil {
			log.Fatal(err)
		}
		ok, labelled := score(got, truth)
		acc := float64(ok) / float64(len(got))
		sum += acc
		fmt.Printf("seed %d: accuracy %.4f (%d/%d right, %d labelled)\n", seed, acc, ok, len(got), labelled)
	}
	mean := sum / float64(*seeds)
	fmt.Printf("private-knn at ε = %s, δ = 1e-5: mean accuracy %.4f = %.3f of the %d-NN ceiling\n", *eps, mean, mean/ceil, *k)
	fmt.Printf("command: pate label --private %s --label %s --public %s --classes %s --mechanism private-knn --epsilon %s --delta 1e-5 -o out.arrow %s\n",
		private, lab, public, strings.Join(vals, ","), *eps, strings.Join(flag.Args(), " "))
}

// score counts the labelled rows and those labelled right.
func score(got, truth []string) (ok, labelled int) {
	for i := range got {
		if got[i] != "" {
			labelled++
		}
		if got[i] != "" && got[i] == truth[i] {
			ok++
		}
	}
	return ok, labelled
}

// embed replaces every column but lab by one fixed_size_list<float32>
// column "pixels" holding them in order.
func embed(rec arrow.Record, lab string) (arrow.Record, error) {
	var feats []int
	for i, f := range rec.Schema().Fields() {
		if f.Name != lab {
			feats = append(feats, i)
		}
	}
	d := len(feats)
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, int32(d), arrow.PrimitiveTypes.Float32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	for r := 0; r < int(rec.NumRows()); r++ {
		b.Append(true)
		for _, i := range feats {
			v, err := strconv.ParseFloat(rec.Column(i).ValueStr(r), 64)
			if err != nil {
				return nil, fmt.Errorf("column %d row %d: %w", i, r, err)
			}
			vb.Append(float32(v))
		}
	}
	col := b.NewArray()
	defer col.Release()
	li := rec.Schema().FieldIndices(lab)[0]
	s := arrow.NewSchema([]arrow.Field{{Name: "pixels", Type: col.DataType(), Nullable: true}, rec.Schema().Field(li)}, nil)
	return array.NewRecord(s, []arrow.Array{col, rec.Column(li)}, rec.NumRows()), nil
}

// encodeEmbedding encodes the sensitive and public rows with the encoder
// pate fits on the public rows (one-hot categories, scaled numbers) and
// returns them as one fixed_size_list<float32> column "emb" (plus lab on the
// sensitive side): a public map, so the sensitive file stays one row per
// row.
func encodeEmbedding(sens, pub []arrow.Record, lab string) ([]arrow.Record, []arrow.Record, error) {
	var feats []string
	for _, f := range pub[0].Schema().Fields() {
		feats = append(feats, f.Name)
	}
	enc, err := learners.FitEncoder(pub[0].Schema(), feats, pub, learners.EncoderOptions{})
	if err != nil {
		return nil, nil, err
	}
	conv := func(recs []arrow.Record, keep bool) ([]arrow.Record, error) {
		x, err := encode(enc, recs)
		if err != nil {
			return nil, err
		}
		b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, int32(x.Cols), arrow.PrimitiveTypes.Float32)
		defer b.Release()
		vb := b.ValueBuilder().(*array.Float32Builder)
		for i := 0; i < x.Rows; i++ {
			b.Append(true)
			vb.AppendValues(x.Row(i), nil)
		}
		col := b.NewArray()
		fields := []arrow.Field{{Name: "emb", Type: col.DataType(), Nullable: true}}
		cols := []arrow.Array{col}
		if keep {
			one, err := concat(recs)
			if err != nil {
				return nil, err
			}
			li := one.Schema().FieldIndices(lab)[0]
			fields, cols = append(fields, one.Schema().Field(li)), append(cols, one.Column(li))
		}
		return []arrow.Record{array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(x.Rows))}, nil
	}
	s, err := conv(sens, true)
	if err != nil {
		return nil, nil, err
	}
	p, err := conv(pub, false)
	return s, p, err
}

// knnCeiling is the accuracy of the exact k-NN vote among every sensitive
// row, on the encoding pate fits on the public rows.
func knnCeiling(sens, pub []arrow.Record, ys, yp []string, k int) (float64, error) {
	var feats []string
	for _, f := range pub[0].Schema().Fields() {
		feats = append(feats, f.Name)
	}
	enc, err := learners.FitEncoder(pub[0].Schema(), feats, pub, learners.EncoderOptions{})
	if err != nil {
		return 0, err
	}
	xs, err := encode(enc, sens)
	if err != nil {
		return 0, err
	}
	xp, err := encode(enc, pub)
	if err != nil {
		return 0, err
	}
	ok := 0
	type nb struct {
		d float64
		i int
	}
	for q := 0; q < xp.Rows; q++ {
		a := xp.Row(q)
		nbs := make([]nb, xs.Rows)
		for i := 0; i < xs.Rows; i++ {
			var d float64
			for j, v := range xs.Row(i) {
				t := float64(v - a[j])
				d += t * t
			}
			nbs[i] = nb{d, i}
		}
		sort.Slice(nbs, func(x, y int) bool { return nbs[x].d < nbs[y].d || nbs[x].d == nbs[y].d && nbs[x].i < nbs[y].i })
		votes := map[string]int{}
		best, bestN := "", -1
		for _, n := range nbs[:k] {
			votes[ys[n.i]]++
		}
		for v, c := range votes {
			if c > bestN || c == bestN && v < best {
				best, bestN = v, c
			}
		}
		if best == yp[q] {
			ok++
		}
	}
	return float64(ok) / float64(xp.Rows), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func classes(all []string) []string {
	seen := map[string]bool{}
	var vals []string
	for _, v := range all {
		if v != "" && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	sort.Slice(vals, func(a, b int) bool {
		x, e1 := strconv.ParseInt(vals[a], 10, 64)
		y, e2 := strconv.ParseInt(vals[b], 10, 64)
		if e1 == nil && e2 == nil {
			return x < y
		}
		return vals[a] < vals[b]
	})
	return vals
}

func encode(enc *learners.Encoder, recs []arrow.Record) (*learners.Matrix, error) {
	x := &learners.Matrix{Cols: enc.Dim()}
	tmp := learners.NewMatrix(0, enc.Dim())
	for _, r := range recs {
		if err := enc.Encode(r, tmp); err != nil {
			return nil, err
		}
		x.Data = append(x.Data, tmp.Data...)
		x.Rows += tmp.Rows
	}
	return x, nil
}

func readAll(path string) ([]arrow.Record, error) {
	r, err := arrowio.Open(path, arrowio.ReadOptions{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rec.Retain()
		out = append(out, rec)
	}
}

// readColumn returns the text of column name of an output file, "" for a
// null (an unlabelled row).
func readColumn(path, name string) ([]string, error) {
	recs, err := readAll(path)
	if err != nil {
		return nil, err
	}
	return column(recs, name)
}

func column(recs []arrow.Record, name string) ([]string, error) {
	var out []string
	for _, r := range recs {
		idx := r.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("no column %q", name)
		}
		col := r.Column(idx[0])
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				out = append(out, "")
				continue
			}
			switch c := col.(type) {
			case *array.Int64:
				out = append(out, strconv.FormatInt(c.Value(i), 10))
			case *array.String:
				out = append(out, c.Value(i))
			default:
				out = append(out, c.ValueStr(i))
			}
		}
	}
	return out, nil
}

func dropColumn(recs []arrow.Record, name string) []arrow.Record {
	out := make([]arrow.Record, len(recs))
	for k, r := range recs {
		var fields []arrow.Field
		var cols []arrow.Array
		for i, f := range r.Schema().Fields() {
			if f.Name != name {
				fields = append(fields, f)
				cols = append(cols, r.Column(i))
			}
		}
		out[k] = array.NewRecord(arrow.NewSchema(fields, nil), cols, r.NumRows())
	}
	return out
}

func concat(recs []arrow.Record) (arrow.Record, error) {
	if len(recs) == 1 {
		return recs[0], nil
	}
	s := recs[0].Schema()
	cols := make([]arrow.Array, s.NumFields())
	var n int64
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for k, r := range recs {
			parts[k] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	for _, r := range recs {
		n += r.NumRows()
	}
	return array.NewRecord(s, cols, n), nil
}

// take returns the rows of rec in the given order as one record.
func take(rec arrow.Record, rows []int) ([]arrow.Record, error) {
	parts := make([]arrow.Record, len(rows))
	for k, i := range rows {
		parts[k] = rec.NewSlice(int64(i), int64(i+1))
	}
	one, err := concat(parts)
	if err != nil {
		return nil, err
	}
	return []arrow.Record{one}, nil
}

func write(path string, recs []arrow.Record) error {
	w, err := arrowio.Create(path, recs[0].Schema(), arrowio.WriteOptions{Format: arrowio.WriteFile})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Commit(nil)
}
