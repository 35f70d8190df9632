//go:build race

package examples_test

// raceEnabled: the test runs under the race detector, so it builds the
// examples with it too.
const raceEnabled = true
