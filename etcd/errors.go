package etcd

import (
	"errors"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"listwatch/store"
)

// isCompacted reports etcd's "mvcc: required revision has been compacted".
func isCompacted(err error) bool { return errors.Is(err, rpctypes.ErrCompacted) }

// isFutureRev reports etcd's "mvcc: required revision is a future revision".
func isFutureRev(err error) bool { return errors.Is(err, rpctypes.ErrFutureRev) }

func notFound(key string) error { return fmt.Errorf("%w: %s", store.ErrNotFound, key) }

func alreadyExists(key string) error { return fmt.Errorf("%w: %s", store.ErrAlreadyExists, key) }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", store.ErrInvalid, fmt.Sprintf(format, args...))
}

// formatRevision is the resourceVersion of a revision: its decimal string.
func formatRevision(rev int64) string { return strconv.FormatInt(rev, 10) }
