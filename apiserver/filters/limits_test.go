package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadlineRecorder is a ResponseWriter that remembers the write deadlines
// set on it through http.ResponseController.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// The write deadline starts with the response, not with the request: a
// handler that works for longer than the timeout before it answers still
// gets its answer out. Once the response is over the deadline is cleared,
// for the next request on the connection.
func TestWriteDeadlineStartsWithTheResponse(t *testing.T) {
	for _, first := range []string{"WriteHeader", "Write", "Flush"} {
		t.Run(first, func(t *testing.T) {
			rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
			w, done := WriteDeadline(rec, time.Minute)
			assert.Empty(t, rec.deadlines, "no deadline while the handler works")

			before := time.Now()
			switch first {
			case "WriteHeader":
				w.WriteHeader(http.StatusOK)
			case "Write":
				_, err := w.Write([]byte("{}"))
				require.NoError(t, err)
			case "Flush":
				require.NoError(t, http.NewResponseController(w).Flush())
			}
			_, err := w.Write([]byte("more"))
			require.NoError(t, err)
			require.Len(t, rec.deadlines, 1, "set once, at the first write")
			assert.False(t, rec.deadlines[0].Before(before.Add(time.Minute)), "a minute from the first write")

			done()
			require.Len(t, rec.deadlines, 2)
			assert.True(t, rec.deadlines[1].IsZero(), "cleared for the connection's next request")
		})
	}
}

// A response that never started leaves the connection's deadline alone.
func TestWriteDeadlineUnusedIsNotCleared(t *testing.T) {
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	_, done := WriteDeadline(rec, time.Minute)
	done()
	assert.Empty(t, rec.deadlines)
}
