package cacher

import "context"

// WaitFresh waits until the cache has seen revision rev, as a list at
// resourceVersion rev does: at most 3 s, then the 504 "Too large resource
// version" Status. A GET of one object at a resourceVersion uses it, so a
// revision from the future is answered as the real server answers it.
func (c *Cacher) WaitFresh(ctx context.Context, rev int64) error { return c.waitFresh(ctx, rev) }
