//go:build race

package label

// raceEnabled shrinks the trade-off audits under the race detector, which
// slows the samplers about tenfold: the audits stay sound, only weaker.
const raceEnabled = true
