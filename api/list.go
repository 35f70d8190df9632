package api

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// ListMeta is the metadata of a list: the revision the list was read at and,
// for paged lists, where to continue.
type ListMeta struct {
	// ResourceVersion is the revision the whole list is consistent with.
	// Start a watch here to see every change after the list.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Continue is the opaque token for the next page; empty on the last page.
	Continue string `json:"continue,omitempty"`
	// RemainingItemCount is how many items follow this page, when known.
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

// List is a collection of objects of one kind, such as a ConfigMapList.
type List struct {
	APIVersion string
	Kind       string
	Metadata   ListMeta
	// Items never marshal as null: an empty list is "items":[].
	Items []*Object
}

// MarshalJSON writes kind, apiVersion, metadata, items, as Kubernetes does.
func (l *List) MarshalJSON() ([]byte, error) { return l.AppendJSON(make([]byte, 0, 1024)), nil }

// AppendJSON appends the list's JSON to dst.
func (l *List) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":`...)
	dst = AppendJSONString(dst, l.Kind, EscapeInvalidUTF8)
	dst = append(dst, `,"apiVersion":`...)
	dst = AppendJSONString(dst, l.APIVersion, EscapeInvalidUTF8)
	dst = append(dst, `,"metadata":`...)
	dst = l.Metadata.appendJSON(dst)
	dst = append(dst, `,"items":[`...)
	for i, item := range l.Items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = item.AppendJSON(dst)
	}
	return append(dst, "]}"...)
}

func (m *ListMeta) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	sep := ""
	if m.ResourceVersion != "" {
		dst = append(dst, `"resourceVersion":`...)
		dst = AppendJSONString(dst, m.ResourceVersion, EscapeInvalidUTF8)
		sep = ","
	}
	if m.Continue != "" {
		dst = append(dst, sep+`"continue":`...)
		dst = AppendJSONString(dst, m.Continue, EscapeInvalidUTF8)
		sep = ","
	}
	if m.RemainingItemCount != nil {
		dst = append(dst, sep+`"remainingItemCount":`...)
		dst = strconv.AppendInt(dst, *m.RemainingItemCount, 10)
	}
	return append(dst, '}')
}

// UnmarshalJSON reads a list. Items that arrive without kind and apiVersion
// (as real list items do) keep them empty.
func (l *List) UnmarshalJSON(data []byte) error {
	*l = List{}
	err := eachMember(data, func(key string, val []byte) error {
		switch key {
		case "kind":
			return unquoteInto(&l.Kind, key, val)
		case "apiVersion":
			return unquoteInto(&l.APIVersion, key, val)
		case "metadata":
			if isNull(val) {
				return nil
			}
			if err := json.Unmarshal(val, &l.Metadata); err != nil {
				return fmt.Errorf("metadata: %w: %w", errSyntax, err)
			}
			return nil
		case "items":
			return decodeItems(&l.Items, val)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("decoding list: %w", err)
	}
	return nil
}

func decodeItems(dst *[]*Object, val []byte) error {
	items := []*Object{}
	if isNull(val) {
		*dst = items
		return nil
	}
	i := skipSpace(val, 0)
	if i >= len(val) || val[i] != '[' {
		return fmt.Errorf("%w: items must be an array", errSyntax)
	}
	i = skipSpace(val, i+1)
	for i < len(val) && val[i] != ']' {
		end, err := skipValue(val, i)
		if err != nil {
			return err
		}
		obj := &Object{}
		if err := obj.UnmarshalJSON(val[i:end]); err != nil {
			return fmt.Errorf("items[%d]: %w", len(items), err)
		}
		items = append(items, obj)
		i = skipSpace(val, end)
		if i < len(val) && val[i] == ',' {
			i = skipSpace(val, i+1)
		}
	}
	*dst = items
	return nil
}
