package reflector

import (
	"listwatch/client"
	"listwatch/fifo"
)

// The pieces the Reflector is meant to be plugged into fit, checked at
// compile time: the client's resource client is a ListerWatcher, and both
// queues are a Store.
var (
	_ ListerWatcher = (*client.ResourceClient)(nil)
	_ Store         = fifo.Queue(nil)
	_ Store         = (*fifo.DeltaFIFO)(nil)
	_ Store         = (*fifo.RealFIFO)(nil)
)
