//go:build ignore

// cli measures `pate label --mechanism dp-logreg` end to end on the shared
// benchmark datasets: accuracy of the released labels over all public rows
// at several ε, δ = 1e-5, seeds 1..n, and the wall time of each run. It
// reads ../shared/datasets, so it is a CI script, not a test. breast_cancer
// and digits are split 2/3 sensitive, 1/3 public with the fixed shuffle of
// utility.go; the splits are written as Arrow files to a temporary folder.
//
//	go build -o /tmp/pate . && go run .ci/dplr/cli.go -pate /tmp/pate [-data ../shared/datasets]
package main

import (
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
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/pate-tool/pate/io/arrowio"
)

func main() {
	data := flag.String("data", "../shared/datasets", "shared datasets folder")
	bin := flag.String("pate", "pate", "the pate binary")
	seeds := flag.Int("seeds", 3, "seeds per cell")
	epsList := flag.String("eps", "0.5,1,2,4", "ε values")
	sets := flag.String("sets", "adult,breast_cancer,digits,dna,vehicle,vowel", "datasets")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "dplr-cli")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	eps := strings.Split(*epsList, ",")
	fmt.Printf("| dataset | public rows | classes |")
	for _, e := range eps {
		fmt.Printf(" ε=%s |", e)
	}
	fmt.Printf(" mean wall s |\n|---|---:|---:|%s---:|\n", strings.Repeat("---:|", len(eps)))
	for _, name := range strings.Split(*sets, ",") {
		sens, pub, label, truth, err := prepare(*data, tmp, name)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		classes := classSet(truth, sens, label)
		fmt.Printf("| %s | %d | %d |", name, len(truth), len(classes))
		var wall time.Duration
		runs := 0
		for _, e := range eps {
			sum := 0.0
			for seed := 1; seed <= *seeds; seed++ {
				out := filepath.Join(tmp, "out.arrow")
				t0 := time.Now()
				cmd := exec.Command(*bin, "label", "--private", sens, "--public", pub, "--label", label, "--keep", "",
					"--mechanism", "dp-logreg", "--classes", strings.Join(classes, ","), "--epsilon", e, "--delta", "1e-5",
					"--seed", strconv.Itoa(seed), "--no-ledger", "-q", "-o", out)
				if b, err := cmd.CombinedOutput(); err != nil {
					log.Fatalf("%s ε=%s seed %d: %v: %s", name, e, seed, err, b)
				}
				wall += time.Since(t0)
				runs++
				got, err := column(out, label)
				if err != nil {
					log.Fatal(err)
				}
				ok := 0
				for i := range truth {
					if got[i] == truth[i] {
						ok++
					}
				}
				sum += float64(ok) / float64(len(truth))
			}
			fmt.Printf(" %.3f |", sum/float64(*seeds))
		}
		fmt.Printf(" %.1f |\n", wall.Seconds()/float64(runs))
	}
}

// prepare returns the sensitive and public files of a set, its label
// column and the public rows' true labels.
func prepare(dir, tmp, name string) (sens, pub, label string, truth []string, err error) {
	switch name {
	case "adult":
		label = "income"
		truth, err = column(filepath.Join(dir, "adult_test.parquet"), label)
		return filepath.Join(dir, "adult_train.parquet"), filepath.Join(dir, "adult_test.parquet"), label, truth, err
	case "breast_cancer", "digits":
		label = "label"
		recs, schema, err := readAll(filepath.Join(dir, name+".parquet"))
		if err != nil {
			return "", "", "", nil, err
		}
		if len(recs) != 1 {
			return "", "", "", nil, fmt.Errorf("%d batches, want 1", len(recs))
		}
		perm := rand.New(rand.NewPCG(20261124, 0)).Perm(int(recs[0].NumRows()))
		cut := len(perm) * 2 / 3
		sens, pub = filepath.Join(tmp, name+"_sens.arrow"), filepath.Join(tmp, name+"_pub.arrow")
		if err := write(sens, schema, recs[0], perm[:cut]); err != nil {
			return "", "", "", nil, err
		}
		if err := write(pub, schema, recs[0], perm[cut:]); err != nil {
			return "", "", "", nil, err
		}
		truth, err = column(pub, label)
		return sens, pub, label, truth, err
	default:
		label = "class"
		truth, err = column(filepath.Join(dir, name+"_public_truth.parquet"), label)
		return filepath.Join(dir, name+"_private.parquet"), filepath.Join(dir, name+"_public.parquet"), label, truth, err
	}
}

func write(path string, schema *arrow.Schema, rec arrow.Record, rows []int) error {
	w, err := arrowio.Create(path, schema, arrowio.WriteOptions{})
	if err != nil {
		return err
	}
	for _, i := range rows {
		s := rec.NewSlice(int64(i), int64(i+1))
		err := w.Write(s)
		s.Release()
		if err != nil {
			return err
		}
	}
	return w.Commit(nil)
}

// classSet is the sorted set of labels (numerically when integers): public
// in the benchmark's setting, where the classes are declared.
func classSet(truth []string, sens, label string) []string {
	ys, err := column(sens, label)
	if err != nil {
		log.Fatal(err)
	}
	seen := map[string]bool{}
	var vals []string
	for _, v := range append(append([]string(nil), ys...), truth...) {
		if !seen[v] {
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

func readAll(path string) ([]arrow.Record, *arrow.Schema, error) {
	r, err := arrowio.Open(path, arrowio.ReadOptions{})
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var out []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		rec.Retain()
		out = append(out, rec)
	}
	return out, r.Schema(), nil
}

// column returns the text of every value of column name of a file.
func column(path, name string) ([]string, error) {
	recs, _, err := readAll(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range recs {
		idx := r.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("%s: no column %q", path, name)
		}
		col := r.Column(idx[0])
		for i := 0; i < col.Len(); i++ {
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
