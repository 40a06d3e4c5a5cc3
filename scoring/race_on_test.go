//go:build race

package scoring_test

// raceEnabled reports a build with the race detector, under which
// sync.Pool drops some of what it is given, so that a pooled buffer is
// sometimes made again.
const raceEnabled = true
