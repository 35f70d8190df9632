// Package narrate is listwatch's one tracing switch. Every layer, server and
// client alike, takes an optional *Tracer and tells it, in one line, what it
// just did with an event: the store committed revision 42, the watch cache
// dispatched it to 3 watchers, the StreamWatcher decoded a MODIFIED frame,
// the queue took an Updated delta, the Indexer stored it, a handler got
// OnUpdate. Hand the same Tracer to every layer and you can follow one
// object from the store to a handler:
//
//	+0.412s store          rev 42 MODIFIED /registry/configmaps/default/demo
//	+0.412s watchcache     rev 42 → 1 watcher(s)
//	+0.413s streamwatcher  MODIFIED default/demo rv=42
//	...
//
// A nil *Tracer is silent and costs one nil check, so a layer calls it
// unconditionally; on hot paths guard argument formatting with Enabled().
//
// Kubernetes has no single counterpart: it spreads this across klog verbosity
// levels (-v=6 and up) in every package. One switch is easier to teach.
package narrate
