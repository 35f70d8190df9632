package protobuf

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// meta/v1 Duration is in no served kind, so it is checked on its own:
// Go's duration string in JSON, nanoseconds in protobuf.
func TestDurationMapping(t *testing.T) {
	s := Default()
	d := customTypes[metaV1+"Duration"]
	m := dynamicpb.NewMessage(s.messageDesc(metaV1 + "Duration"))
	require.NoError(t, d.fromJSON(m, []byte(`"1h2m3s"`)))
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	require.NoError(t, err)
	want := protowire.AppendVarint([]byte{0x08}, uint64(time.Hour+2*time.Minute+3*time.Second))
	assert.Equal(t, want, b, "field 1, varint, nanoseconds")
	out, err := d.toJSON(nil, m)
	require.NoError(t, err)
	assert.Equal(t, `"1h2m3s"`, string(out))
	assert.Error(t, d.fromJSON(m, []byte(`5`)))
}

// Every custom line of the generated table has a mapping, and every
// mapping is used: the table and kubetypes.go agree.
func TestEveryCustomTypeHasAMapping(t *testing.T) {
	s := Default()
	for name, m := range s.messages {
		if m.custom != nil {
			assert.Same(t, customTypes[name], m.custom, "%s", name)
		}
	}
}
