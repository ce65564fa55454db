//go:build race

package kernel

// raceEnabled shrinks the heaviest reference checks under the race detector,
// which slows the float64 reference and the pure-Go path about tenfold.
const raceEnabled = true
