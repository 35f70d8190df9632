package fifo

import (
	"errors"
	"fmt"

	"listwatch/api"
)

// ErrNoKey is wrapped by the error KeyOf (and every queue method handed such
// an object) returns for something that has no "namespace/name" key: a nil
// object, one without a name, or a value of an unsupported type.
var ErrNoKey = errors.New("fifo: object has no key")

// KeyOf returns the "namespace/name" key of an *api.Object or a tombstone.
// It also accepts a Delta or a non-empty Deltas, whose key is that of their
// (newest) object, so a consumer can key whatever Pop handed it.
func KeyOf(obj any) (string, error) {
	switch o := obj.(type) {
	case *api.Object:
		if o == nil {
			return "", fmt.Errorf("%w: nil *api.Object", ErrNoKey)
		}
		if o.Metadata.Name == "" {
			return "", fmt.Errorf("%w: %s in namespace %q has no name", ErrNoKey, kindOf(o), o.Metadata.Namespace)
		}
		return o.Key(), nil
	case DeletedFinalStateUnknown:
		if o.Key == "" {
			return "", fmt.Errorf("%w: tombstone with an empty key", ErrNoKey)
		}
		return o.Key, nil
	case *DeletedFinalStateUnknown:
		if o == nil {
			return "", fmt.Errorf("%w: nil *DeletedFinalStateUnknown", ErrNoKey)
		}
		return KeyOf(*o)
	case Delta:
		return KeyOf(o.Object)
	case Deltas:
		if len(o) == 0 {
			return "", fmt.Errorf("%w: empty Deltas", ErrNoKey)
		}
		return KeyOf(o.Newest().Object)
	case nil:
		return "", fmt.Errorf("%w: nil", ErrNoKey)
	}
	return "", fmt.Errorf("%w: unsupported type %T", ErrNoKey, obj)
}

func kindOf(o *api.Object) string {
	if o.Kind == "" {
		return "object"
	}
	return o.Kind
}

// KnownObjects is what the queue may consult to know which keys the
// consumer's cache holds (the informer's Indexer), so Replace can emit
// tombstones for keys the new list no longer has. It is client-go's
// KeyListerGetter.
//
// The queue calls it while holding its own lock, and Pop runs the consumer's
// process function under that same lock: a consumer that updates the cache
// from process therefore never lets Replace or Resync see the cache halfway
// through an item.
type KnownObjects interface {
	ListKeys() []string
	GetByKey(key string) (*api.Object, bool)
}
