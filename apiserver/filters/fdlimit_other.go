//go:build !unix

package filters

// descriptorLimit is unknown off Unix; the fallback applies.
func descriptorLimit() int64 { return 0 }
