package store

import (
	"crypto/rand"
	"encoding/hex"
)

// NewUID returns a random RFC 4122 version 4 UUID such as
// "0c3f1e9a-5b7d-4a61-9f0e-2d8c4b6a1e37", the form Kubernetes gives
// metadata.uid. A uid tells apart two objects that had the same name at
// different times, which is why the store, not the caller, chooses it.
func NewUID() string {
	var b [16]byte
	// crypto/rand.Read never fails (since Go 1.24 it crashes the program
	// rather than return weak bytes).
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10 (RFC 4122)

	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}
