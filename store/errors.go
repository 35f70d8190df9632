package store

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error the store returns wraps one of them, except a
// context's own error (context.Canceled, context.DeadlineExceeded), which is
// returned as-is, and an error from a GuaranteedUpdate's tryUpdate, which is
// returned unchanged.
var (
	ErrNotFound       = errors.New("key not found")
	ErrAlreadyExists  = errors.New("key already exists")
	ErrConflict       = errors.New("precondition failed")
	ErrCompacted      = errors.New("required revision has been compacted")
	ErrFutureRevision = errors.New("required revision is a future revision")
	ErrWatcherTooSlow = errors.New("watcher fell too far behind")
	ErrClosed         = errors.New("store is closed")
	// ErrInvalid reports bad input from the caller (an empty key, a nil
	// object, a negative revision or limit); nothing was changed.
	ErrInvalid = errors.New("invalid argument")
)

// CompactedError is returned (wrapping ErrCompacted) when a list or watch asks
// for a revision older than the compacted one. The apiserver turns it into
// 410 "too old resource version: Requested (Compacted)".
type CompactedError struct{ Requested, Compacted int64 }

func (e *CompactedError) Error() string {
	return fmt.Sprintf("revision %d: %v (compacted at %d)", e.Requested, ErrCompacted, e.Compacted)
}

// Unwrap makes errors.Is(err, ErrCompacted) true.
func (e *CompactedError) Unwrap() error { return ErrCompacted }

// FutureRevisionError is returned (wrapping ErrFutureRevision) when a list
// asks for a revision the store has not reached yet.
type FutureRevisionError struct{ Requested, Current int64 }

func (e *FutureRevisionError) Error() string {
	return fmt.Sprintf("revision %d: %v (current %d)", e.Requested, ErrFutureRevision, e.Current)
}

// Unwrap makes errors.Is(err, ErrFutureRevision) true.
func (e *FutureRevisionError) Unwrap() error { return ErrFutureRevision }

// The helpers below give every failure the key it is about, so a log line
// says which object was missing or stale.

func notFound(key string) error { return fmt.Errorf("%w: %s", ErrNotFound, key) }

func alreadyExists(key string) error { return fmt.Errorf("%w: %s", ErrAlreadyExists, key) }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
