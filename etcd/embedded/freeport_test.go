package embedded

import (
	"net"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FreeURL chooses below the kernel's ephemeral range, where no listener on
// port 0 and no outgoing connection can take its port, and the port is
// free when it returns.
func TestFreeURLIsBelowTheEphemeralRange(t *testing.T) {
	for range 20 {
		u, err := FreeURL()
		require.NoError(t, err)
		pu, err := url.Parse(u)
		require.NoError(t, err)
		port, err := strconv.Atoi(pu.Port())
		require.NoError(t, err)
		assert.GreaterOrEqual(t, port, freePortFloor)
		assert.Less(t, port, ephemeralLow())
		l, err := net.Listen("tcp", pu.Host)
		require.NoError(t, err, "FreeURL gave a port that is taken")
		require.NoError(t, l.Close())
	}
}
