package client

import "listwatch/api"

// Watcher is an open watch, as client-go's watch.Interface: events arrive on
// ResultChan until the stream ends, and then the channel is closed. A closed
// channel is not an error the watcher reports; it is the signal to watch
// again (the first article's bug is not noticing it).
type Watcher interface {
	// ResultChan delivers the events. It is closed when the watch ends.
	ResultChan() <-chan api.Event
	// Stop ends the watch and closes ResultChan. Idempotent; safe from any
	// goroutine.
	Stop()
}
