// Package clock is the small time interface the client side is written
// against, so that backoff, resync and watch-duration checks can be tested
// without sleeping.
//
// Real is the wall clock. Fake is a clock that moves only when a test says
// so (Step, SetTime), and that shows who is waiting on it (Waiters,
// BlockUntilWaiters): a test that wants to prove "the reflector now backs
// off for 800 ms to 1.6 s" waits until a timer of that length exists, checks
// it, and steps the clock past it. No test has to guess how long to sleep.
//
// Built with -tags slowarming, a Fake is slow to arm and stop timers
// (slowarming.go), which turns a test that steps the clock too early from a
// rare hang on a busy machine into a failure on nearly every run.
//
// It mirrors k8s.io/utils/clock (Clock, PassiveClock, Timer, Ticker) and its
// testing.FakeClock, reduced to what listwatch uses.
package clock
