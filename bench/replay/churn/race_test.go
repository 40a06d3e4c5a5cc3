//go:build race

package churn

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = true
