package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// This file holds the small JSON toolkit the wire types are built on. The
// types keep every field they do not model as raw bytes, in the order it
// arrived, so an object read from a real kube-apiserver and written back is
// unchanged. encoding/json cannot do that (a map loses order), so we walk the
// top level of an object ourselves and hand each member's bytes on untouched.

// ErrInvalidJSON is wrapped by every error the decoders in this package
// return: bad syntax, a member of the wrong type, nesting too deep. Test for
// it with errors.Is to tell "these bytes are not a valid object" from, say, a
// broken connection. (Through json.Unmarshal, malformed syntax is reported
// by encoding/json itself, as a *json.SyntaxError, before our decoders run.)
var ErrInvalidJSON = errors.New("invalid JSON")

// errSyntax is the name the scanner uses for ErrInvalidJSON.
var errSyntax = ErrInvalidJSON

// eachMember calls fn for every member of the JSON object in data, in order,
// with the decoded key and the raw bytes of the value (whitespace trimmed).
// data must be the object alone, give or take whitespace.
func eachMember(data []byte, fn func(key string, val []byte) error) error {
	end, err := walkObject(data, skipSpace(data, 0), func(key string, data []byte, i int) (int, error) {
		end, err := skipValue(data, i)
		if err != nil {
			return 0, err
		}
		return end, fn(key, data[i:end])
	})
	if err != nil {
		return err
	}
	if skipSpace(data, end) != len(data) {
		return fmt.Errorf("%w: data after the object", errSyntax)
	}
	return nil
}

// walkObject walks the JSON object that starts at data[i] and returns the
// offset just past it; what follows is not looked at. For each member it
// calls member with the decoded key and the offset of the value, and
// member returns the offset just past the value: it may skip the value
// (skipValue) or decode it where it lies, so a value is scanned only once.
func walkObject(data []byte, i int, member func(key string, data []byte, i int) (int, error)) (int, error) {
	if i >= len(data) || data[i] != '{' {
		return 0, fmt.Errorf("%w: expected an object", errSyntax)
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return 0, fmt.Errorf("%w: expected a member name at offset %d", errSyntax, i)
		}
		end, err := skipString(data, i)
		if err != nil {
			return 0, err
		}
		key, err := unquote(data[i:end])
		if err != nil {
			return 0, err
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return 0, fmt.Errorf("%w: expected ':' after %q", errSyntax, key)
		}
		i = skipSpace(data, i+1)
		if i >= len(data) {
			return 0, fmt.Errorf("%w: unexpected end of input", errSyntax)
		}
		if i, err = member(key, data, i); err != nil {
			return 0, err
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return 0, fmt.Errorf("%w: unexpected end of object", errSyntax)
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, fmt.Errorf("%w: expected ',' or '}' at offset %d", errSyntax, i)
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 1000

// skipValue returns the offset just past the JSON value starting at data[i].
// It checks structure (brackets, strings, literals) but leaves full number
// and escape validation to whoever decodes the value.
func skipValue(data []byte, i int) (int, error) { return skipNested(data, i, 0) }

func skipNested(data []byte, i, depth int) (int, error) {
	if i >= len(data) {
		return 0, fmt.Errorf("%w: unexpected end of input", errSyntax)
	}
	switch c := data[i]; {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return 0, fmt.Errorf("%w: nested too deeply", errSyntax)
		}
		return skipContainer(data, i, depth+1)
	case c == '"':
		return skipString(data, i)
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(data, i)
	case c == 't' && hasLiteral(data, i, "true"):
		return i + 4, nil
	case c == 'f' && hasLiteral(data, i, "false"):
		return i + 5, nil
	case c == 'n' && hasLiteral(data, i, "null"):
		return i + 4, nil
	default:
		return 0, fmt.Errorf("%w: unexpected %q at offset %d", errSyntax, c, i)
	}
}

// skipContainer skips an object or array whose opening bracket is data[i].
func skipContainer(data []byte, i, depth int) (int, error) {
	isObject := data[i] == '{'
	closing := byte(']')
	if isObject {
		closing = '}'
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == closing {
		return i + 1, nil
	}
	for {
		if isObject {
			if i >= len(data) || data[i] != '"' {
				return 0, fmt.Errorf("%w: expected a member name at offset %d", errSyntax, i)
			}
			j, err := skipString(data, i)
			if err != nil {
				return 0, err
			}
			i = skipSpace(data, j)
			if i >= len(data) || data[i] != ':' {
				return 0, fmt.Errorf("%w: expected ':' at offset %d", errSyntax, i)
			}
			i = skipSpace(data, i+1)
		}
		j, err := skipNested(data, i, depth)
		if err != nil {
			return 0, err
		}
		i = skipSpace(data, j)
		if i >= len(data) {
			return 0, fmt.Errorf("%w: unexpected end of input", errSyntax)
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case closing:
			return i + 1, nil
		default:
			return 0, fmt.Errorf("%w: expected ',' or %q at offset %d", errSyntax, closing, i)
		}
	}
}

// skipNumber checks the JSON number grammar, -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?,
// because unknown fields are written back verbatim: a sloppy "01" or "1."
// accepted here would come out the other side as invalid JSON.
func skipNumber(data []byte, i int) (int, error) {
	start := i
	bad := func() (int, error) {
		end := min(i+1, len(data))
		return 0, fmt.Errorf("%w: invalid number %.20q at offset %d", errSyntax, data[start:end], start)
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = skipDigits(data, i)
	default:
		return bad()
	}
	if i < len(data) && data[i] == '.' {
		if i+1 >= len(data) || !isDigit(data[i+1]) {
			return bad()
		}
		i = skipDigits(data, i+1)
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return bad()
		}
		i = skipDigits(data, i)
	}
	return i, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func skipDigits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}

func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}

// skipString returns the offset just past the string starting at data[i].
// It rejects what encoding/json rejects (raw control characters, unknown
// escapes), for the same reason skipNumber is strict; invalid UTF-8 is let
// through, as encoding/json lets it through.
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return 0, fmt.Errorf("%w: control character %q in string at offset %d", errSyntax, c, j)
		case c == '\\':
			j++
			if j >= len(data) {
				return 0, fmt.Errorf("%w: unterminated string", errSyntax)
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) || !isHex(data[j+1]) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) {
					return 0, fmt.Errorf("%w: invalid \\u escape at offset %d", errSyntax, j-1)
				}
				j += 4
			default:
				return 0, fmt.Errorf("%w: invalid escape %q at offset %d", errSyntax, data[j-1:j+1], j-1)
			}
		}
	}
	return 0, fmt.Errorf("%w: unterminated string", errSyntax)
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// unquote decodes a JSON string. The common case, no escapes, is a plain
// conversion; anything else goes through encoding/json.
func unquote(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", fmt.Errorf("%w: expected a string, got %.20q", errSyntax, raw)
	}
	inner := raw[1 : len(raw)-1]
	simple := true
	for _, c := range inner {
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple {
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %w", errSyntax, err)
	}
	return s, nil
}

func isNull(raw []byte) bool { return string(raw) == "null" }

const hexDigits = "0123456789abcdef"

// InvalidUTF8 is how AppendJSONString writes a byte that is not part of
// valid UTF-8.
type InvalidUTF8 uint8

const (
	// EscapeInvalidUTF8 writes the escape \ufffd, as encoding/json does
	// (and so a Go-based kube-apiserver).
	EscapeInvalidUTF8 InvalidUTF8 = iota
	// ReplaceInvalidUTF8 writes U+FFFD itself, as a character: api/protobuf
	// writes a string's JSON this way, so that it reads back to the same
	// string.
	ReplaceInvalidUTF8
)

// AppendJSONString appends s as a JSON string, escaped exactly as
// encoding/json escapes it (HTML-safe: <, > and & as \u003c, \u003e,
// \u0026, and U+2028 and U+2029 escaped too), so our output matches what a
// Go-based kube-apiserver writes; invalid says how a byte that is not
// valid UTF-8 is written.
func AppendJSONString(dst []byte, s string, invalid InvalidUTF8) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1 && invalid == ReplaceInvalidUTF8:
			dst = append(dst, s[start:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
