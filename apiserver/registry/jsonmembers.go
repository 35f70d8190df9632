package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Defaulting edits JSON objects in place of Go structs: a default is
// written where it is missing, at its place in the Go struct's field
// order (where the real server's JSON has it), and everything the client
// sent keeps its bytes. members is one JSON object as its members in
// order; edit and editEach reach the objects nested in it.

// members is a JSON object as its members in order.
type members []member

type member struct {
	name string
	raw  json.RawMessage
}

// parseMembers reads a JSON object keeping its members' order.
func parseMembers(raw json.RawMessage) (members, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out members
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{name: name, raw: v})
	}
	return out, nil
}

func (m members) get(name string) json.RawMessage {
	for _, f := range m {
		if f.name == name {
			return f.raw
		}
	}
	return nil
}

// object reads a member that is an object (absent or null: an empty one).
func (m members) object(name string) (members, error) {
	raw := m.get(name)
	if raw == nil || isJSONNull(raw) {
		return members{}, nil
	}
	return parseMembers(raw)
}

// setDefault sets name to value when it is absent or null.
func (m *members) setDefault(name, value string, order []string) {
	if raw := m.get(name); raw == nil || isJSONNull(raw) {
		m.set(name, json.RawMessage(value), order)
	}
}

// set replaces a member, or inserts it before the first member that comes
// after it in order.
func (m *members) set(name string, value json.RawMessage, order []string) {
	for i := range *m {
		if (*m)[i].name == name {
			(*m)[i].raw = value
			return
		}
	}
	at := len(*m)
	if pos := slices.Index(order, name); pos >= 0 {
		for i, f := range *m {
			if p := slices.Index(order, f.name); p > pos {
				at = i
				break
			}
		}
	}
	*m = slices.Insert(*m, at, member{name: name, raw: value})
}

func (m members) marshal() json.RawMessage {
	b := []byte{'{'}
	for i, f := range m {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(f.name)
		b = append(b, name...)
		b = append(b, ':')
		b = append(b, f.raw...)
	}
	return append(b, '}')
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// edit applies fill to the member name when it is an object, and writes
// it back; an absent or null member, or one that is not an object (the
// body's type check refuses those), is left alone.
func (m *members) edit(name string, fill func(*members)) {
	raw := m.get(name)
	if raw == nil || isJSONNull(raw) {
		return
	}
	child, err := parseMembers(raw)
	if err != nil {
		return
	}
	fill(&child)
	m.set(name, child.marshal(), nil)
}

// editEach applies fill to every object in the array member name, and
// writes the array back.
func (m *members) editEach(name string, fill func(*members)) {
	raw := m.get(name)
	if raw == nil || isJSONNull(raw) {
		return
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return
	}
	for i, item := range items {
		child, err := parseMembers(item)
		if err != nil {
			continue
		}
		fill(&child)
		items[i] = child.marshal()
	}
	m.set(name, marshalArray(items), nil)
}

// array reads an array member as its raw items (absent, null or not an
// array: none).
func (m members) array(name string) []json.RawMessage {
	var items []json.RawMessage
	if raw := m.get(name); raw != nil {
		_ = json.Unmarshal(raw, &items)
	}
	return items
}

// str reads a string member ("" when absent or not a string).
func (m members) str(name string) string {
	var s string
	if raw := m.get(name); raw != nil {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// has reports whether name is present and not null.
func (m members) has(name string) bool {
	raw := m.get(name)
	return raw != nil && !isJSONNull(raw)
}

func marshalArray(items []json.RawMessage) json.RawMessage {
	b := []byte{'['}
	for i, item := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
	}
	return append(b, ']')
}

// quote is a string as a JSON value.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// setIfZero sets name to value when it is absent, null, "", 0 or false:
// the zero value of a field that is no pointer in Go, which the
// SetDefaults functions test with == "" or == 0.
func (m *members) setIfZero(name, value string, order []string) {
	switch raw := string(bytes.TrimSpace(m.get(name))); raw {
	case "", "null", `""`, "0", "false":
		m.set(name, json.RawMessage(value), order)
	}
}

// hasAny reports whether any of names is present and not null.
func (m members) hasAny(names []string) bool {
	for _, n := range names {
		if m.has(n) {
			return true
		}
	}
	return false
}
