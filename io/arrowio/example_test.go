package arrowio_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/pate-tool/pate/io/arrowio"
)

// Example reads two columns of a Parquet file in batches and writes them
// to an Arrow IPC file whose report metadata is only known at the end.
func Example() {
	r, err := arrowio.Open("../../testdata/adult_train.parquet", arrowio.ReadOptions{BatchSize: 10000, Columns: []string{"age", "income"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "labels.arrow")
	md := arrow.NewMetadata([]string{"pate.version"}, []string{"0.1.0"})
	schema := arrow.NewSchema(r.Schema().Fields(), &md)
	w, err := arrowio.Create(out, schema, arrowio.WriteOptions{Zstd: true, Reserve: map[string]int{"pate.report": 256}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var rows, batches int64
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.Abort()
			fmt.Println(err)
			return
		}
		rows += rec.NumRows()
		batches++
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			w.Abort()
			fmt.Println(err)
			return
		}
	}
	if err := w.Commit(map[string]string{"pate.report": fmt.Sprintf(`{"rows":%d}`, rows)}); err != nil {
		fmt.Println(err)
		return
	}

	back, err := arrowio.Open(out, arrowio.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer back.Close()
	report, _ := back.Schema().Metadata().GetValue("pate.report")
	rec, _ := back.Read()
	defer rec.Release()
	fmt.Println(rows, "rows in", batches, "batches;", back.Format(), "columns", rec.ColumnName(0), rec.ColumnName(1))
	fmt.Printf("first age %d; report %q (%d bytes)\n", rec.Column(0).(*array.Int64).Value(0), strings.TrimRight(report, " "), len(report))
	// Output:
	// 32561 rows in 4 batches; arrow ipc file columns age income
	// first age 39; report "{\"rows\":32561}" (14 bytes)
}
