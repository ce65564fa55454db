//go:build !race

package label

const raceEnabled = false
