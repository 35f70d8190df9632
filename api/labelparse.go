package api

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file reads label selectors. It works in two passes, as Kubernetes'
// parser does: the lexer cuts the whole string into tokens, then a
// recursive-descent parser walks them with one token of lookahead. The
// behaviour that shows through (what is accepted, and every error message)
// matches k8s.io/apimachinery/pkg/labels/selector.go of v1.32, the version
// the recorded server runs; the tests compare the two on a few hundred
// selectors.

type labelTokenKind int

const (
	tokEnd labelTokenKind = iota
	tokIdent
	tokComma
	tokOpenParen
	tokCloseParen
	tokNot         // !
	tokEquals      // =
	tokDoubleEq    // ==
	tokNotEquals   // !=
	tokGreaterThan // >
	tokLessThan    // <
	tokIn          // in
	tokNotIn       // notin
)

type labelToken struct {
	kind labelTokenKind
	text string // what the error messages quote; "" for the end
}

// isLabelSpace reports the whitespace the lexer skips between tokens.
func isLabelSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// isLabelSymbol reports the characters that make up operators and
// punctuation; any other non-space character belongs to an identifier.
func isLabelSymbol(c byte) bool {
	switch c {
	case '=', '!', '(', ')', ',', '>', '<':
		return true
	}
	return false
}

// lexLabelSelector cuts s into tokens, ending with a tokEnd.
func lexLabelSelector(s string) []labelToken {
	var toks []labelToken
	i := 0
	for {
		for i < len(s) && isLabelSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return append(toks, labelToken{kind: tokEnd})
		}
		start := i
		if isLabelSymbol(s[i]) {
			// Longest match: "==" and "!=" are the only two-character
			// operators, so "===" is "==" followed by "=".
			i++
			if i < len(s) && s[i] == '=' && (s[start] == '=' || s[start] == '!') {
				i++
			}
			toks = append(toks, labelToken{kind: symbolKind(s[start:i]), text: s[start:i]})
			continue
		}
		for i < len(s) && !isLabelSymbol(s[i]) && !isLabelSpace(s[i]) {
			i++
		}
		word := s[start:i]
		kind := tokIdent
		switch word {
		case "in":
			kind = tokIn
		case "notin":
			kind = tokNotIn
		}
		toks = append(toks, labelToken{kind: kind, text: word})
	}
}

func symbolKind(sym string) labelTokenKind {
	switch sym {
	case ",":
		return tokComma
	case "(":
		return tokOpenParen
	case ")":
		return tokCloseParen
	case "!":
		return tokNot
	case "=":
		return tokEquals
	case "==":
		return tokDoubleEq
	case "!=":
		return tokNotEquals
	case ">":
		return tokGreaterThan
	default: // "<"
		return tokLessThan
	}
}

// labelParser walks the tokens. Where a value is expected, the keywords
// "in" and "notin" are ordinary words: "x in (in)" and "notin=in" are fine.
type labelParser struct {
	toks []labelToken
	pos  int
}

// peek returns the next token without taking it; asValue reads in and
// notin as identifiers.
func (p *labelParser) peek(asValue bool) labelToken {
	t := p.toks[p.pos]
	if asValue && (t.kind == tokIn || t.kind == tokNotIn) {
		t.kind = tokIdent
	}
	return t
}

// next takes the next token. The final tokEnd is never passed.
func (p *labelParser) next(asValue bool) labelToken {
	t := p.peek(asValue)
	if p.pos < len(p.toks)-1 {
		p.pos++
	}
	return t
}

func selectorErrorf(format string, args ...any) error {
	return &selectorError{msg: fmt.Sprintf(format, args...)}
}

// requirementError is a problem inside one requirement; the parser adds
// Kubernetes' "unable to parse requirement: " in front.
type requirementError string

func parseLabelRequirements(s string) ([]LabelRequirement, error) {
	p := &labelParser{toks: lexLabelSelector(s)}
	var reqs []LabelRequirement
	for {
		switch t := p.peek(true); t.kind {
		case tokEnd:
			return reqs, nil
		case tokIdent, tokNot:
			r, msg := p.requirement()
			if msg != "" {
				return nil, selectorErrorf("unable to parse requirement: %s", msg)
			}
			reqs = append(reqs, r)
			switch t := p.next(true); t.kind {
			case tokEnd:
				return reqs, nil
			case tokComma:
				if t2 := p.peek(true); t2.kind != tokIdent && t2.kind != tokNot {
					return nil, selectorErrorf("found '%s', expected: identifier after ','", t2.text)
				}
			default:
				return nil, selectorErrorf("found '%s', expected: ',' or 'end of string'", t.text)
			}
		default:
			return nil, selectorErrorf("found '%s', expected: !, identifier, or 'end of string'", t.text)
		}
	}
}

// requirement reads one "[!]key [op values]".
func (p *labelParser) requirement() (LabelRequirement, requirementError) {
	key, op, msg := p.keyAndUnaryOperator()
	if msg != "" {
		return LabelRequirement{}, msg
	}
	if op == OpExists || op == OpDoesNotExist {
		// "!key" followed by more than a comma is left for the caller
		// to complain about, as Kubernetes does.
		return LabelRequirement{Key: key, Operator: op}, ""
	}
	op, msg = p.binaryOperator()
	if msg != "" {
		return LabelRequirement{}, msg
	}
	var values []string
	if op == OpIn || op == OpNotIn {
		values, msg = p.valueSet()
	} else {
		values, msg = p.exactValue()
	}
	if msg != "" {
		return LabelRequirement{}, msg
	}
	slices.Sort(values)
	values = slices.Compact(values)
	r := LabelRequirement{Key: key, Operator: op, Values: values}
	return r, r.validateValues()
}

// keyAndUnaryOperator reads "[!]key" and says whether that is the whole
// requirement (exists / does-not-exist) or an operator follows (op "").
func (p *labelParser) keyAndUnaryOperator() (string, Operator, requirementError) {
	var op Operator
	t := p.next(true)
	if t.kind == tokNot {
		op = OpDoesNotExist
		t = p.next(true)
	}
	if t.kind != tokIdent {
		return "", "", requirementError(fmt.Sprintf("found '%s', expected: identifier", t.text))
	}
	if errs := IsQualifiedName(t.text); len(errs) > 0 {
		// Kubernetes checks the key with no field path, hence "<nil>".
		return "", "", requirementError(FieldInvalid("<nil>", t.text, strings.Join(errs, "; ")).String())
	}
	if k := p.peek(true).kind; (k == tokEnd || k == tokComma) && op == "" {
		op = OpExists
	}
	return t.text, op, ""
}

func (p *labelParser) binaryOperator() (Operator, requirementError) {
	t := p.next(false)
	switch t.kind {
	case tokIn:
		return OpIn, ""
	case tokNotIn:
		return OpNotIn, ""
	case tokEquals:
		return OpEquals, ""
	case tokDoubleEq:
		return OpDoubleEquals, ""
	case tokNotEquals:
		return OpNotEquals, ""
	case tokGreaterThan:
		return OpGreaterThan, ""
	case tokLessThan:
		return OpLessThan, ""
	}
	return "", requirementError(fmt.Sprintf("found '%s', expected: in, notin, =, ==, !=, gt, lt", t.text))
}

// valueSet reads "(v1, v2, ...)". Empty entries are the empty value:
// "()" and "(,a)" both contain "".
func (p *labelParser) valueSet() ([]string, requirementError) {
	if t := p.next(true); t.kind != tokOpenParen {
		return nil, requirementError(fmt.Sprintf("found '%s' expected: '('", t.text))
	}
	switch t := p.peek(true); t.kind {
	case tokCloseParen:
		p.next(true)
		return []string{""}, ""
	case tokIdent, tokComma:
		// valueList stops only in front of the ')', which we take here.
		values, msg := p.valueList()
		if msg == "" {
			p.next(true)
		}
		return values, msg
	default:
		return nil, requirementError(fmt.Sprintf("found '%s', expected: ',', ')' or identifier", t.text))
	}
}

// valueList reads the inside of a value set up to (not including) the ')'.
// Two commas in a row stand for an empty value and are both taken at once;
// so, as in Kubernetes v1.32, "(a,,)" is an error while "(a,,b)" is not.
func (p *labelParser) valueList() ([]string, requirementError) {
	var values []string
	for {
		switch t := p.next(true); t.kind {
		case tokIdent:
			values = append(values, t.text)
			switch t2 := p.peek(true); t2.kind {
			case tokComma:
			case tokCloseParen:
				return values, ""
			default:
				return nil, requirementError(fmt.Sprintf("found '%s', expected: ',' or ')'", t2.text))
			}
		case tokComma:
			if len(values) == 0 {
				values = append(values, "")
			}
			switch p.peek(true).kind {
			case tokCloseParen:
				return append(values, ""), ""
			case tokComma:
				p.next(true)
				values = append(values, "")
			}
		default:
			return nil, requirementError(fmt.Sprintf("found '%s', expected: ',', or identifier", t.text))
		}
	}
}

// exactValue reads the value after =, ==, !=, > or <; nothing (end or a
// comma) is the empty value.
func (p *labelParser) exactValue() ([]string, requirementError) {
	if k := p.peek(true).kind; k == tokEnd || k == tokComma {
		return []string{""}, ""
	}
	t := p.next(true)
	if t.kind != tokIdent {
		return nil, requirementError(fmt.Sprintf("found '%s', expected: identifier", t.text))
	}
	return []string{t.text}, ""
}

// validateValues checks the values of a requirement whose key is already
// known to be good, and words the problems as Kubernetes' NewRequirement
// does: field paths values[i] (in sorted order) and values[i][key].
func (r *LabelRequirement) validateValues() requirementError {
	var msgs []string
	if r.Operator == OpGreaterThan || r.Operator == OpLessThan {
		for i, v := range r.Values {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				msgs = append(msgs, FieldInvalid(fmt.Sprintf("values[%d]", i), v,
					"for 'Gt', 'Lt' operators, the value must be an integer").String())
			}
		}
	}
	for i, v := range r.Values {
		if errs := IsValidLabelValue(v); len(errs) > 0 {
			msgs = append(msgs, FieldInvalid(fmt.Sprintf("values[%d][%s]", i, r.Key), v, strings.Join(errs, "; ")).String())
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return requirementError(aggregate(msgs))
}
