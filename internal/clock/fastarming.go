//go:build !slowarming

package clock

// slowArming does nothing unless built with -tags slowarming
// (slowarming.go says what that is for).
func slowArming() {}
