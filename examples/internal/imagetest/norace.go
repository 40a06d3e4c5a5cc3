//go:build !race

package imagetest

// race is whether the tests run under the race detector (CI's mode).
const race = false
