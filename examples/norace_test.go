//go:build !race

package examples_test

// raceEnabled: the test runs without the race detector.
const raceEnabled = false
