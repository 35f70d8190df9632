package watchserver

import (
	"io"
	"sync"
)

// How frames become writes. A watch event is a frame, encoded once by the
// cacher and shared by every watch that gets it; the writers copy ready
// frames together so that a burst costs one write per 64 KiB, not one per
// event, from buffers shared by all watches so an idle watch holds none.

// maxBatchBytes bounds one write: frames are copied together up to this
// size (a socket takes about this much at a time anyway).
const maxBatchBytes = 64 << 10

// batchPool holds the buffers frames are copied into for one write. They
// are shared by all watches instead of kept by each, so an idle watch holds
// no buffer at all.
var batchPool = sync.Pool{New: func() any { b := make([]byte, 0, maxBatchBytes); return &b }}

// writeFrames writes frames with as few Writes as possible: one for a lone
// frame (no copy), otherwise one per maxBatchBytes of frames.
func writeFrames(w io.Writer, frames [][]byte) (n int, err error) {
	if len(frames) == 1 {
		return w.Write(frames[0])
	}
	bp := batchPool.Get().(*[]byte)
	defer batchPool.Put(bp)
	for i := 0; i < len(frames); {
		if len(frames[i]) >= maxBatchBytes {
			m, err := w.Write(frames[i])
			n += m
			if err != nil {
				return n, err
			}
			i++
			continue
		}
		batch := (*bp)[:0]
		for i < len(frames) && len(frames[i]) < maxBatchBytes && len(batch)+len(frames[i]) <= maxBatchBytes {
			batch = append(batch, frames[i]...)
			i++
		}
		m, err := w.Write(batch)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
