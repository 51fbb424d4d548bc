package guardrails

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// decodeTrusted decodes JSON text that has passed the gateway's strict scan (valid, no
// duplicate members, bounded depth) into the values encoding/json would give (objects as
// map[string]any, numbers as float64), for the schema validator. A number that parsers read as
// different values is a *numberError: the validator would judge another value than the
// backend's. It does not validate the text
// again, and copies a string without escapes as it is: on a call's arguments it costs a third
// of json.Unmarshal, which re-checks every byte first.
func decodeTrusted(raw []byte) (any, error) {
	v, _, err := decodeValue(raw, skipWS(raw, 0), 0)
	return v, err
}

// numberError is a number the validator cannot judge as written: one beyond the doubles, or
// one a decimal-exact parser reads as another value than the double the validator reads
// (jsonrpc.NumberAsDouble). path is its JSON pointer in the instance, built as the decode
// unwinds.
type numberError struct{ path string }

func (e *numberError) Error() string { return "guardrails: a number parsers read as different values" }

// within prefixes the pointer of a numberError err with the step to the value that holds it.
func within(err error, step string) error {
	var ne *numberError
	if errors.As(err, &ne) {
		ne.path = "/" + step + ne.path
	}
	return err
}

func decodeValue(raw []byte, i, depth int) (any, int, error) {
	if depth > maxDepth {
		return nil, 0, errTooDeep
	}
	switch raw[i] {
	case '{':
		m := map[string]any{}
		i = skipWS(raw, i+1)
		for raw[i] == '"' {
			kend := jsonrpc.StringEnd(raw, i)
			key := decodeString(raw[i:kend])
			v, end, err := decodeValue(raw, skipWS(raw, skipWS(raw, kend)+1), depth+1)
			if err != nil {
				return nil, 0, within(err, escapeToken(key))
			}
			m[key] = v
			if i = skipWS(raw, end); raw[i] == ',' {
				i = skipWS(raw, i+1)
			}
		}
		return m, i + 1, nil
	case '[':
		a := []any{}
		i = skipWS(raw, i+1)
		for raw[i] != ']' {
			v, end, err := decodeValue(raw, i, depth+1)
			if err != nil {
				return nil, 0, within(err, strconv.Itoa(len(a)))
			}
			a = append(a, v)
			if i = skipWS(raw, end); raw[i] == ',' {
				i = skipWS(raw, i+1)
			}
		}
		return a, i + 1, nil
	case '"':
		end := jsonrpc.StringEnd(raw, i)
		return decodeString(raw[i:end]), end, nil
	case 't':
		return true, i + 4, nil
	case 'f':
		return false, i + 5, nil
	case 'n':
		return nil, i + 4, nil
	}
	end := i
	for end < len(raw) && bytes.IndexByte([]byte("+-.0123456789eE"), raw[end]) >= 0 {
		end++
	}
	f, alike := jsonrpc.NumberAsDouble(raw[i:end])
	if !alike {
		return nil, 0, &numberError{}
	}
	return f, end, nil
}

// decodeString decodes the quoted JSON string q.
func decodeString(q []byte) string {
	body := q[1 : len(q)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	var s string
	_ = json.Unmarshal(q, &s)
	return s
}
