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

// nextBatch is the one batching rule of every writer: the frames from i
// up to j (excluded) go out in one write, size bytes. A frame of
// maxBatchBytes or more goes alone, and alone is set: the writer writes it
// as it is, without copying it into a batch. Otherwise the batch takes
// frames while they fit in maxBatchBytes together.
func nextBatch(frames [][]byte, i int) (j, size int, alone bool) {
	if len(frames[i]) >= maxBatchBytes {
		return i + 1, len(frames[i]), true
	}
	for j = i; j < len(frames) && len(frames[j]) < maxBatchBytes && size+len(frames[j]) <= maxBatchBytes; j++ {
		size += len(frames[j])
	}
	return j, size, false
}

// writeFrames writes frames with as few Writes as possible: one for a lone
// frame (no copy), otherwise one per batch (nextBatch).
func writeFrames(w io.Writer, frames [][]byte) (n int, err error) {
	if len(frames) == 1 {
		return w.Write(frames[0])
	}
	bp := batchPool.Get().(*[]byte)
	defer batchPool.Put(bp)
	for i := 0; i < len(frames); {
		j, _, alone := nextBatch(frames, i)
		var m int
		if alone {
			m, err = w.Write(frames[i])
		} else {
			batch := (*bp)[:0]
			for _, f := range frames[i:j] {
				batch = append(batch, f...)
			}
			m, err = w.Write(batch)
		}
		n += m
		if err != nil {
			return n, err
		}
		i = j
	}
	return n, nil
}
