package reflector

import (
	"context"

	"listwatch/api"
	"listwatch/client"
)

// ListerWatcher is where a Reflector gets its data: one resource (in one
// namespace, or all) listed and watched. The client's resource client
// satisfies it; tests use a scripted fake. It mirrors client-go's
// tools/cache ListerWatcher (listwatch.go).
type ListerWatcher interface {
	// List returns one page of the resource, as the server answers a GET
	// on the collection with these options.
	List(ctx context.Context, opts api.ListOptions) (*api.List, error)
	// Watch opens a watch with these options.
	Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error)
}

// Store is what a Reflector writes into: the subset of fifo.Queue it uses
// (client-go's ReflectorStore). A fifo.Queue satisfies it, and so does any
// cache that wants to be a plain mirror of the server.
type Store interface {
	// Add records an ADDED event.
	Add(obj *api.Object) error
	// Update records a MODIFIED event.
	Update(obj *api.Object) error
	// Delete records a DELETED event.
	Delete(obj *api.Object) error
	// Replace hands over a complete list, consistent at resourceVersion.
	Replace(list []*api.Object, resourceVersion string) error
	// Resync asks the store to re-deliver what it holds (a no-op for
	// stores without consumers to remind).
	Resync() error
}

// BookmarkStore is a Store that also wants the resourceVersion of each
// BOOKMARK event (client-go's ReflectorBookmarkStore): an atomic
// fifo.RealFIFO queues it, so the informer's cache can tell how fresh it
// is. The Reflector checks for it; a plain Store is not told.
type BookmarkStore interface {
	Store
	Bookmark(resourceVersion string) error
}
