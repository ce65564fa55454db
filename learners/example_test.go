package learners_test

import (
	"fmt"

	"github.com/pate-tool/pate/learners"
)

// Fit three teachers on their own rows and count their votes on two queries.
func ExampleEnsemble_Votes() {
	parts := [][]float32{{-2, -1, 1, 2}, {-3, -1, 1, 3}, {-1, -0.5, 0.5, 1}}
	y := []int32{0, 0, 1, 1}
	lr, _ := learners.NewLearner("logreg", learners.LearnerOptions{})
	var teachers []learners.Model
	for _, p := range parts {
		m, err := lr.Fit(&learners.Matrix{Rows: 4, Cols: 1, Data: p}, y, 2)
		if err != nil {
			fmt.Println(err)
			return
		}
		teachers = append(teachers, m)
	}
	ens, err := learners.NewEnsemble(teachers, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	queries := &learners.Matrix{Rows: 2, Cols: 1, Data: []float32{-5, 4}}
	counts := make([]int32, queries.Rows*2)
	ens.Votes(queries, counts)
	fmt.Println(ens.Teachers(), counts)
	// Output: 3 [3 0 0 3]
}
