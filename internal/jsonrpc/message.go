package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Version is the only JSON-RPC version MCP speaks.
const Version = "2.0"

// Request is one decoded client message: a request (ID set) or a notification (ID nil). Params
// stay raw so they can be forwarded byte for byte unless a name or URI must change.
type Request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

// IsNotification reports whether the message carries no id.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Decode parses body as exactly one JSON-RPC 2.0 request or notification, strictly: well-formed
// UTF-8 JSON within lim, no duplicate keys anywhere (neither exact duplicates nor keys equal
// under FoldKey, which case-insensitive decoders read as one member), case-sensitive member
// names, no unknown top-level members, no batches and no responses. The error is always an
// *Error carrying the code the client should see.
func Decode(body []byte, lim Limits) (*Request, error) {
	req, _, err := DecodeClient(body, lim)
	return req, err
}

// DecodeClient is Decode that also reads, in the same pass, a body Decode refuses only for being
// a response: a pre-2026 client's answer to one of the server's requests. answer is set, beside
// Decode's refusal, only for one JSON-RPC 2.0 response with an id, no method, and a "result"
// object or an "error" object, not both; for anything else it is nil. The body is never
// decoded twice.
func DecodeClient(body []byte, lim Limits) (req *Request, answer *Message, err error) {
	if err := scanStrict(body, lim); err != nil {
		return nil, nil, scanToRPC(err)
	}
	i := skipSpace(body, 0)
	switch body[i] {
	case '{':
	case '[':
		return nil, nil, NewError(CodeInvalidRequest, "Invalid Request: batches are not supported")
	default:
		return nil, nil, NewError(CodeInvalidRequest, "Invalid Request: a message must be a JSON object")
	}
	var r Request
	var result, errVal json.RawMessage
	var version, response bool
	err = Members(body, func(key, val []byte) error {
		switch string(key) {
		case "jsonrpc":
			version = bytes.Equal(val, []byte(`"2.0"`))
		case "id":
			if !validID(val) {
				return NewError(CodeInvalidRequest, "Invalid Request: id must be a string or an integer")
			}
			r.ID = val
		case "method":
			return decodeString(val, &r.Method, "Invalid Request: method must be a string")
		case "params":
			if val[0] != '{' {
				return NewError(CodeInvalidParams, "Invalid params: params must be an object")
			}
			r.Params = val
		case "result":
			response, result = true, val
		case "error":
			response, errVal = true, val
		default:
			return NewError(CodeInvalidRequest, "Invalid Request: unknown member "+quoteForMessage(string(key)))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	switch {
	case response:
		return nil, clientAnswer(version, &r, result, errVal), NewError(CodeInvalidRequest, "Invalid Request: clients must not send responses")
	case !version:
		return nil, nil, NewError(CodeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
	case r.Method == "":
		return nil, nil, NewError(CodeInvalidRequest, "Invalid Request: method is required")
	}
	return &r, nil, nil
}

// clientAnswer is the response DecodeClient read, members already scanned strictly: nil unless
// it is one a server can take as an answer (DecodeClient).
func clientAnswer(version bool, r *Request, result, errVal json.RawMessage) *Message {
	if !version || r.Method != "" || r.ID == nil || (result != nil) == (errVal != nil) ||
		(result != nil && result[0] != '{') {
		return nil
	}
	m := &Message{ID: r.ID, Result: result}
	if errVal != nil {
		// Read as a backend's error is (decodeError): code and message, named exactly.
		var err error
		if m.Error, err = decodeError(errVal); err != nil {
			return nil
		}
	}
	return m
}

func scanToRPC(err error) *Error {
	var se *ScanError
	if !errors.As(err, &se) {
		return NewError(CodeParseError, "Parse error")
	}
	switch {
	case errors.Is(se.Err, ErrSyntax):
		return NewError(CodeParseError, "Parse error: invalid JSON")
	case (errors.Is(se.Err, ErrDuplicateKey) || errors.Is(se.Err, ErrFoldedKey) || errors.Is(se.Err, ErrSurrogateKey)) && se.Depth > 1:
		return NewError(CodeInvalidParams, "Invalid params: "+se.Error())
	default:
		return NewError(CodeInvalidRequest, "Invalid Request: "+se.Error())
	}
}

// trustedLimits are the limits of a scan that only finds its way through text (IDOf, Members):
// any token, and nesting to MaxScanDepth, never deeper, since the scan recurses once per level.
func trustedLimits() Limits {
	return Limits{MaxDepth: MaxScanDepth, MaxTokenBytes: 1 << 30}
}

// IDOf recovers the id of a request whose top level is well-formed JSON even though Decode
// refused it (a duplicate key or a limit broken inside params), so the error response can echo
// the id as clients expect. It returns nil when no valid id can be read, and for a body nested
// deeper than MaxScanDepth: the body is the client's, of any shape.
func IDOf(body []byte) json.RawMessage {
	s := scanner{data: body, lim: trustedLimits(), trusted: true}
	i := skipSpace(body, 0)
	if end, err := s.value(i, 0); err != nil || i >= len(body) || body[i] != '{' || skipSpace(body, end) != len(body) {
		return nil
	}
	var id json.RawMessage
	_ = Members(body, func(key, val []byte) error {
		if string(key) == "id" && validID(val) {
			id = val
		}
		return nil
	})
	return id
}

// validID accepts a JSON string or an integer (MCP forbids null ids and fractional ids).
func validID(val []byte) bool {
	switch c := val[0]; {
	case c == '"':
		return true
	case c == '-' || (c >= '0' && c <= '9'):
		return !bytes.ContainsAny(val, ".eE")
	}
	return false
}

func decodeString(val []byte, dst *string, msg string) error {
	if val[0] != '"' {
		return NewError(CodeInvalidRequest, msg)
	}
	if bytes.IndexByte(val, '\\') < 0 {
		*dst = string(val[1 : len(val)-1])
		return nil
	}
	if err := json.Unmarshal(val, dst); err != nil {
		return NewError(CodeInvalidRequest, msg)
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// Members calls fn for each member of the JSON object obj, in order, with the decoded key and the
// raw value. obj must already have passed Scan; Members does not re-validate it. It stops at the
// first error fn returns.
func Members(obj []byte, fn func(key, val []byte) error) error {
	s := scanner{data: obj, lim: trustedLimits(), trusted: true}
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return NewError(CodeInvalidParams, "Invalid params: expected an object")
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		kend, escaped, err := s.str(i, 0)
		if err != nil {
			return err
		}
		key := obj[i+1 : kend-1]
		if escaped {
			var dec string
			_ = json.Unmarshal(obj[i:kend], &dec)
			key = []byte(dec)
		}
		vstart := skipSpace(obj, skipSpace(obj, kend)+1)
		vend, err := s.value(vstart, 0)
		if err != nil {
			return err
		}
		if err := fn(key, obj[vstart:vend]); err != nil {
			return err
		}
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return nil
}
