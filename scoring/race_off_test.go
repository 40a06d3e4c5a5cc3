//go:build !race

package scoring_test

// raceEnabled reports a build with the race detector.
const raceEnabled = false
