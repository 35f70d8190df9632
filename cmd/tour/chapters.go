package main

import "fmt"

// chapterText is a chapter's heading and prose.
type chapterText struct {
	title  string
	what   string // what is about to happen
	notice string // what to look for in the lines that follow
}

// The tour's text: what each chapter is about to do, and what to notice in
// the lines that follow. The tutorial in docs/ tells each at length; the
// chapter names here match its chapters.

const intro = `listwatch guided tour: one event's trip from the store to a handler, and
what happens when the watch breaks. Every line below is printed by one
layer: time since start, the layer's name, what it just did. The lines are
filtered to the objects the tour follows (run with -all to see every line).`

func chapterStart(url, queue string) chapterText {
	return chapterText{"An apiserver, a store, an informer",
		fmt.Sprintf("We start our apiserver at %s. Behind it a versioned store plays etcd: "+
			"every write gets the next revision, and that revision is the object's resourceVersion. "+
			"In front of the store one watch cache per resource watches it once and serves every client. "+
			"We create ConfigMap default/alpha, then start a SharedIndexInformer on the configmaps of "+
			"namespace default with one handler, \"tour\". Its Reflector LISTs, hands the list to the "+
			"%s, then WATCHes from the list's resourceVersion. That is client-go as the articles knew it "+
			"(list-then-watch, DeltaFIFO); since Kubernetes 1.35 its Reflector streams the initial state "+
			"over the watch instead (watch-list), and since 1.36 its queue is an atomic RealFIFO "+
			"(go run ./examples/12-queue-evolution shows all three).", url, queue),
		"the LIST asks for resourceVersion=0 (\"whatever the watch cache has\"); the WATCH starts " +
			"at the resourceVersion the list returned and asks for bookmarks and a timeout. The handler " +
			"is told about alpha with \"initial list\"."}
}

func chapterTrip() chapterText {
	return chapterText{"One event's trip through every layer",
		"We create ConfigMap default/demo with a plain POST, as kubectl would, and follow that one " +
			"event. The store commits it at a new revision; the watch cache sends it to every watcher " +
			"it matches; the HTTP handler writes it as one chunk of the open response; on the client the " +
			"StreamWatcher decodes it onto ResultChan; the Reflector turns it into a delta in the queue; " +
			"the informer pops it, stores it in the Indexer first, and the sharedProcessor hands it to " +
			"the handler's processorListener, which calls the handler.",
		"one number travels the whole way: the store's revision is the resourceVersion in the HTTP " +
			"frame, in the delta and in the cache. The \"client read chunk\" line is the raw bytes off the " +
			"socket: a hex size line, the JSON event, CRLF."}
}

func chapterToday() chapterText {
	return chapterText{"The same change on today's default path: watch-list, atomic RealFIFO",
		"The tour's informer takes the articles' path: LIST, then WATCH, into a DeltaFIFO. client-go " +
			"v0.37.2 with its defaults takes another: its Reflector streams the initial state over the " +
			"watch (the WatchListClient feature gate, on by default since 1.35) and its queue is a RealFIFO " +
			"with atomic events (AtomicFIFO, on since 1.36). We start a second informer with those defaults " +
			"beside the first, handler \"today\", and change demo once. The rest of the tour goes on " +
			"with the articles' informer.",
		"no LIST: the second informer's first request is a WATCH with sendInitialEvents=true and " +
			"resourceVersionMatch=NotOlderThan; the server sends the objects it has as ADDED events, then a " +
			"BOOKMARK annotated k8s.io/initial-events-end, and the informer is synced at that bookmark's " +
			"resourceVersion. Then the change: one MODIFIED frame for both watches, and both handlers are " +
			"told. In the atomic RealFIFO every delta is its own item, in arrival order, never merged per key; " +
			"where it differs most is a re-list, queued as one item and applied at once " +
			"(go run ./examples/12-queue-evolution)."}
}

func chapterWebsocket(from string) chapterText {
	return chapterText{"The same watch over a websocket",
		fmt.Sprintf("A watch can also be a websocket: the same GET, with an Upgrade header, answered "+
			"with 101 Switching Protocols. The third article names both ways. We open the same watch "+
			"twice, from rv %s: once with chunked HTTP, as the informer does, "+
			"once over a websocket. The server replays demo's creation from its watch cache to both, "+
			"then we change demo once more, live, and once it has arrived the server ends both "+
			"as at their timeout.", from),
		"the same JSON event travels in both, byte for byte; only the framing differs. A chunk is its " +
			"length in hex, CRLF, the bytes, CRLF; a websocket frame is 0x81 (final, text), 0x7e " +
			"(a 16-bit length follows), the length, the bytes. At the timeout the chunked response " +
			"ends with a zero-length chunk and the websocket with a close frame, 0x88, status 1000."}
}

func chapterTimeout(timeoutSeconds int) chapterText {
	return chapterText{"The server ends the watch: a timeout",
		fmt.Sprintf("We do nothing and wait. Every watch has a timeout: the Reflector asked for "+
			"timeoutSeconds=%d (client-go asks for 300 to 600), and the server ends the response when it "+
			"runs out. A watch that asks for none ends too, after kube-apiserver's --min-request-timeout: "+
			"30 to 60 minutes. That is the first article's \"watch channel closed\": the StreamWatcher "+
			"reads EOF and closes ResultChan, and nothing more happens unless someone watches again.",
			timeoutSeconds),
		"no error anywhere, just a clean end. The Reflector re-watches at once from the last " +
			"resourceVersion it saw, without re-listing. Then we change demo and it arrives through the " +
			"new watch."}
}

func chapterContinue() chapterText {
	return chapterText{"The wrong fix: continue on a closed channel",
		"The first article's service returned when the channel closed, so its author changed " +
			"`return` to `continue` and ran it again. We run that loop on a real watch that the server " +
			"ends as at its timeout once our change has arrived (a real server: after 30 to 60 minutes), " +
			"and count what happens once it has.",
		"a receive from a closed channel never blocks: it returns the zero value and ok=false at once. " +
			"So the loop spins, millions of times a second, on one core, and no event will ever come: " +
			"nothing reopens the watch. The fix is to leave the loop and watch again from the last " +
			"resourceVersion seen, which is what the Reflector did in the chapter before."}
}

func chapterRetryWatcher() chapterText {
	return chapterText{"RetryWatcher: resume from the last resourceVersion, stop on 410",
		"The second article's fix is client-go's RetryWatcher: one channel that stays open across " +
			"many watches. We start one from the current resourceVersion (through a cable of its own), " +
			"change demo, then kill its connection and change demo again while it is away. Last, we " +
			"kill it once more and compact the store while it is away.",
		"after the kill it watches again from the last resourceVersion it delivered, so the change " +
			"made while it was away arrives, and nothing arrives twice. After the compaction that " +
			"resourceVersion is too old: the server answers 410, and the RetryWatcher forwards the " +
			"ERROR and closes its channel. It cannot know what it missed; only a new LIST can, which " +
			"is what an informer does next."}
}

func chapterKill() chapterText {
	return chapterText{"The connection dies: tcpkill",
		"The first article cut the watch's connection with tcpkill. The apiserver's " +
			"Faults().KillWatchConnections does the same from the server side: it resets the TCP " +
			"connection mid-stream, with no terminating chunk.",
		"\"connection reset by peer\" is a probable EOF (client-go's net.IsProbableEOF), so the " +
			"StreamWatcher closes ResultChan without an ERROR event, exactly as after a timeout, and the " +
			"Reflector recovers the same way: re-watch from the last resourceVersion."}
}

func chapterHTTP2(watches int) chapterText {
	return chapterText{"A real cluster's transport: HTTP/2",
		fmt.Sprintf("A real cluster speaks TLS, and client-go and the apiserver then agree on HTTP/2: "+
			"every watch of a process becomes a stream of one TCP connection. We start a second "+
			"apiserver with a generated certificate, open %d watches from one client, ask its debug "+
			"view which connections carry them, and reset that connection.", watches),
		"one connection, so one tcpkill ends every watch at once. The other side of the coin: a " +
			"connection that goes silent is found by an HTTP/2 PING (client-go: after 30 s without a " +
			"frame, 15 s to answer), which HTTP/1.1 has no equivalent of; examples/15-http2 shows it."}
}

func chapterExpired(burst, history int) chapterText {
	return chapterText{"Away too long: 410 Expired, re-list, tombstone",
		fmt.Sprintf("We unplug the informer's network and kill its watch, so its next request waits. "+
			"Meanwhile the cluster moves on: default/alpha is deleted, demo changes, and someone writes "+
			"%d times to default/busy. The watch cache keeps only the last %d events (Kubernetes keeps "+
			"about 75 seconds' worth), and we also compact the store, as etcd's compactor does every five "+
			"minutes. Then we plug the cable back in.", burst, history),
		"the re-watch from the old resourceVersion gets 410 Expired inside the stream, after a 200. " +
			"A watch is served from the watch cache, so it is the cache's window that decides (the " +
			"compaction is what a continue token, or a list at an exact old resourceVersion, would run into). " +
			"A RetryWatcher would stop here; the Reflector backs off and re-lists. The queue's Replace " +
			"compares the new list with what the informer knows: demo comes back as Replaced, and alpha, " +
			"whose DELETED event was lost, as a Deleted delta carrying a DeletedFinalStateUnknown tombstone."}
}

func chapterConverged() chapterText {
	return chapterText{"Converged",
		"Last, we read the server's state with a fresh LIST and compare it with the informer's " +
			"cache, object by object and resourceVersion by resourceVersion.",
		"after a timeout, a reset and a 410, the cache holds exactly what the server holds. That is " +
			"the informer's promise: eventually consistent, never silently stale."}
}

const outro = `Every chapter of the tour is told at length in docs/ (start at
docs/README.md) and shown on its own by a program in examples/. Run the tour
again with -all to see every line every layer prints, or with -queue RealFIFO
(or AtomicFIFO).
To see it live in a browser: go run ./cmd/apiserver, then open http://127.0.0.1:8080/ui/`
