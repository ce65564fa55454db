package kernel_test

import (
	"fmt"

	"github.com/pate-tool/pate/learners/kernel"
)

// Three one-feature teachers over two classes vote on two rows. Teacher t
// scores class 1 as (t+1)·x − 2 and class 0 as 0; on the first row teacher 1
// ties and votes class 0, the lowest index.
func Example() {
	const k, classes, dim = 3, 2, 1
	w := []float32{
		0, 1, // teacher 0: class 0, class 1
		0, 2, // teacher 1
		0, 3, // teacher 2
	}
	b := []float32{0, -2, 0, -2, 0, -2}
	l, err := kernel.NewLinear(k, classes, dim, w, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	x := []float32{1, 3} // two rows of one feature
	counts := make([]int32, 2*classes)
	l.Votes(x, 2, counts)
	fmt.Println(counts[:2], counts[2:])
	// Output: [2 1] [0 3]
}

// Two teachers over three classes, the first of which never saw class 0
// (absent from its training rows): whatever its stored bias for class 0, it
// votes between classes 1 and 2 only, and its scores for them are not
// disturbed by class 0's.
func ExampleNewLinearSeen() {
	const k, classes, dim = 2, 3, 1
	w := []float32{
		0, 1, -1, // teacher 0: classes 0, 1, 2
		0, 1, -1, // teacher 1
	}
	b := []float32{-1e30, 0, 0, 0, 0, 0}
	seen := []bool{false, true, true, true, true, true}
	l, err := kernel.NewLinearSeen(k, classes, dim, w, b, seen)
	if err != nil {
		fmt.Println(err)
		return
	}
	x := []float32{-2, 3} // two rows of one feature
	counts := make([]int32, 2*classes)
	l.Votes(x, 2, counts)
	fmt.Println(counts[:3], counts[3:])
	// Output: [0 0 2] [0 2 0]
}
