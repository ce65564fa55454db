package main

import (
	_ "github.com/apache/arrow/go/v15/arrow/ipc"
	_ "github.com/apache/arrow/go/v15/parquet/pqarrow"
	_ "github.com/apache/arrow/go/v15/arrow/csv"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/sys/cpu"
	_ "golang.org/x/term"
	_ "gonum.org/v1/gonum/optimize"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/gonum/stat/distuv"
)

func main() {}
