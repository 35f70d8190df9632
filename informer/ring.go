package informer

// ring is an unbounded FIFO of notifications in a circular slice that
// doubles when full (client-go's k8s.io/utils/buffer.RingGrowing). It is
// the buffer between a listener's add and its handler: however slow the
// handler, add never waits. The price is memory: a stuck handler's ring
// grows without limit, which is why Pending exposes its length.
type ring struct {
	buf   []notification
	start int // index of the oldest element
	n     int // number of elements
}

func newRing(capacity int) ring { return ring{buf: make([]notification, capacity)} }

func (r *ring) len() int { return r.n }

func (r *ring) write(v notification) {
	if r.n == len(r.buf) {
		grown := make([]notification, max(2*len(r.buf), 1))
		// Unroll the wrapped contents into the front of the new slice.
		k := copy(grown, r.buf[r.start:])
		copy(grown[k:], r.buf[:r.start])
		r.buf, r.start = grown, 0
	}
	r.buf[(r.start+r.n)%len(r.buf)] = v
	r.n++
}

func (r *ring) read() (notification, bool) {
	if r.n == 0 {
		return notification{}, false
	}
	v := r.buf[r.start]
	r.buf[r.start] = notification{} // let the objects be collected
	r.start = (r.start + 1) % len(r.buf)
	r.n--
	return v, true
}
