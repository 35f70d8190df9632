package handlers

import (
	"fmt"
	"strings"

	"listwatch/api"
)

// checkPathName refuses a name no object can have because it cannot be a
// path segment ("." and "..", anything with "/" or "%"), with the real
// server's 400 (registry/generic/registry/store.go NamespaceKeyFunc and
// path.IsValidPathSegmentName): `GET configmaps/..` is not a lookup of an
// object called "..".
func checkPathName(name string) error {
	var msgs []string
	if name == "." || name == ".." {
		msgs = append(msgs, fmt.Sprintf("may not be '%s'", name))
	} else {
		for _, bad := range []string{"/", "%"} {
			if strings.Contains(name, bad) {
				msgs = append(msgs, fmt.Sprintf("may not contain '%s'", bad))
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return api.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", name, strings.Join(msgs, ";")))
}
