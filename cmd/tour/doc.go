// Command tour is the guided tour of listwatch: the README's first command.
//
//	go run ./cmd/tour
//
// With nothing but Go installed, and no cluster, it starts our apiserver
// in-process on a free loopback port, starts a SharedIndexInformer on
// ConfigMaps (our client is its ListerWatcher) with one handler, and then,
// chapter by chapter:
//
//  1. lists and starts watching;
//  2. follows ONE event, the creation of ConfigMap default/demo, through
//     every layer: store revision → watch cache → chunked HTTP frame →
//     StreamWatcher → Reflector → DeltaFIFO delta → Indexer →
//     sharedProcessor/processorListener → handler;
//  3. opens the same watch over chunked HTTP and over a websocket, and
//     shows each event as both framed it, side by side (the third
//     article);
//  4. starts a second informer with client-go's defaults of today
//     (watch-list: the initial state streamed over the watch, no LIST; an
//     atomic RealFIFO) and follows a change of demo through it, while the
//     first informer gets it too; the rest of the tour keeps the
//     articles' path;
//  5. lets the server end the watch at its timeout (the first article's
//     "my watch channel closed") and shows the Reflector re-watch from the
//     last resourceVersion without re-listing;
//  6. runs the first article's `continue` loop on a closed channel and
//     prints its spin counter, then the fix: re-watch from the last
//     resourceVersion;
//  7. kills the connection, as tcpkill does in the first article;
//  8. starts a second apiserver on TLS and shows a real cluster's
//     transport: three watches of one client on one HTTP/2 connection,
//     all ended by one reset of it;
//  9. runs a RetryWatcher (the second article's fix): it resumes from the
//     last resourceVersion across a killed connection, and stops on 410
//     after a compaction;
//  10. unplugs the network while the cluster moves on (a delete, a burst of
//     writes, a compaction), so that the re-watch gets 410 Expired and the
//     informer re-lists, reporting the delete it missed as a
//     DeletedFinalStateUnknown tombstone.
//
// Last (chapter 11), it checks that the informer's cache converged on the
// server's state.
//
// Each chapter is one method of tour, listed in order by tour.steps: to
// add one, write the method (it prints its heading with t.chapter and
// returns an error if what it shows did not happen) and list it there.
// Chapters about a side story (the websocket, the hot loop, HTTP/2,
// RetryWatcher)
// narrow the narration to their own lines with spotlight.focus, so the
// informer's routine re-watches do not bury them. No line is wider than
// 100 columns: longer narration lines are folded (style.go).
//
// Every layer narrates to ONE narrate.Tracer, whose filter follows the
// objects the tour is about (see spotlight.go). Each line starts with the
// layer's name. The tour exits 0 when every stage happened, and 1 with a
// message naming the stage that did not. It takes about seven seconds.
//
// Flags: -no-color (colour is on only when stdout is a terminal anyway),
// -queue DeltaFIFO|RealFIFO|AtomicFIFO (the informer's queue), -all (do not filter:
// every line every layer prints).
//
// Files: tour.go runs the chapters; chapters.go holds their text;
// today.go is today's default path; websocket.go, hotloop.go, http2.go
// and retry.go are the side stories' chapters;
// spotlight.go is the narration filter; wiretap.go shows the raw chunked
// bytes as the client reads them off the socket; cable.go is the
// ListerWatcher wrapper that can "unplug the network"; evidence.go records
// what happened (handler calls, watches, the trip's printed lines) so the
// tour can wait for each stage and check it; style.go is the console: it
// serialises every write, prints headings and tells the tour which
// narration lines have been printed.
//
// It mirrors nothing in Kubernetes: it is the tour of everything else.
// docs/README.md is the tutorial that explains each chapter at length.
package main
