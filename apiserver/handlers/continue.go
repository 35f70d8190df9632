package handlers

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// A continue token is how a paged list resumes: base64url (no padding) of
// {"v":"meta.k8s.io/v1","rv":<revision of page one>,"start":"<key>"} where
// key is the store key to start from, minus the collection's prefix
// (list-page1-limit2.json: "/beta\u0000", the last key returned plus NUL,
// the smallest key after it). Every page of one list is read at the same
// revision, so the pages add up to one consistent snapshot; once that
// revision is compacted the token is 410 Expired. The format and its
// checks mirror k8s.io/apiserver/pkg/storage/continue.go.

// continueVersion is the token format's version tag.
const continueVersion = "meta.k8s.io/v1"

// inconsistentRV in a token means "continue at the current revision": the
// token a 410 hands out so a client can finish a list without restarting.
const inconsistentRV = -1

var errInvalidContinue = errors.New("continue key is not valid")

type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// encodeContinue builds the token for a page that ends before nextKey.
// keyPrefix is the collection's store prefix without its trailing '/', so
// the start key keeps its leading '/' as Kubernetes' does.
func encodeContinue(nextKey, keyPrefix string, rv int64) (string, error) {
	start, ok := strings.CutPrefix(nextKey, keyPrefix)
	if !ok {
		return "", fmt.Errorf("unable to encode next field: the key %q and key prefix %q do not match", nextKey, keyPrefix)
	}
	b, err := json.Marshal(continueToken{APIVersion: continueVersion, ResourceVersion: rv, StartKey: start})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// decodeContinue returns the store key to start from and the revision to
// read at. keyPrefix is the collection's store prefix with its trailing
// '/'. A start key that tries to climb out of the collection ("/../x") is
// rejected.
func decodeContinue(token, keyPrefix string) (fromKey string, rv int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	if c.APIVersion != continueVersion {
		return "", 0, fmt.Errorf("%w: server does not recognize this encoded version %v", errInvalidContinue, c.APIVersion)
	}
	if c.ResourceVersion == 0 || c.ResourceVersion < inconsistentRV {
		return "", 0, fmt.Errorf("%w: incorrect encoded start resourceVersion (version %s)", errInvalidContinue, continueVersion)
	}
	if c.StartKey == "" {
		return "", 0, fmt.Errorf("%w: encoded start key empty (version %s)", errInvalidContinue, continueVersion)
	}
	key := c.StartKey
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if path.Clean(key) != key {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, c.StartKey)
	}
	return keyPrefix + key[1:], c.ResourceVersion, nil
}
