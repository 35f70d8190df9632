// Command solution is exercises 2 and 3 solved: the article's watch loop
// made to miss nothing. It watches from the resourceVersion of the last
// event or bookmark it handled whenever the channel closes (a server
// timeout, a killed connection), and lists again when the server says 410
// Expired, working out what was deleted while it was away.
//
//	go run ./workshop/02-rewatch/solution -server $SERVER -namespace $NS
//
// It is client-go's tools/watch.RetryWatcher plus the Reflector's re-list,
// by hand (chapters 05 and 06).
package main
