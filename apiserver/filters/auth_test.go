package filters

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAuthorized(t *testing.T) {
	cases := []struct {
		token, header string
		want          bool
	}{
		{"", "", true},
		{"", "Bearer anything", true},
		{"s3cret", "", false},
		{"s3cret", "Bearer s3cret", true},
		{"s3cret", "bearer  s3cret ", true},
		{"s3cret", "Bearer wrong", false},
		{"s3cret", "Basic s3cret", false},
		{"s3cret", "s3cret", false},
	}
	for _, c := range cases {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		assert.Equal(t, c.want, Authorized(r, c.token), "token %q, header %q", c.token, c.header)
	}
}
