// Command starter is exercise 2's program: the first article's watch loop,
// against the workshop's apiserver, in your namespace. It lists ConfigMaps,
// watches from the list's resourceVersion and prints every event, until the
// server ends the watch (after --min-request-timeout × (1 + rand)).
//
//	go run ./workshop/02-rewatch/starter -server $SERVER -namespace $NS
//
// The exercise, in three edits (each marked TODO below):
//
//  1. Break it: replace the `return` on a closed channel by `continue`.
//     Predict the CPU use and the log first.
//  2. Fix it: watch again from the resourceVersion of the last event (or
//     bookmark) you handled, and ask for bookmarks. Every change must be
//     printed exactly once, across several server timeouts.
//  3. Exercise 3: survive a killed connection (it already should) and a
//     410 Expired: list again and say what was deleted while you were away.
//
// The solution is in ../solution; try first.
package main
