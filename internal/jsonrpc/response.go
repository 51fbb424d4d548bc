package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrBadMessage is returned by DecodeMessage for a backend message that is not one JSON-RPC 2.0
// object of a known kind.
var ErrBadMessage = errors.New("malformed JSON-RPC message")

// Message is any JSON-RPC message a backend may send: a response (Result or Error set), a
// notification (Method set, ID nil) or a server-to-client request (Method and ID set).
type Message struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
	// noURIKey: DecodeMessage found no object member named "uri", "resourceUri" or
	// "ui/resourceUri" in the message.
	noURIKey bool
}

// IsResponse reports whether m is a response (success or error).
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// MayHaveURIKey reports whether an object anywhere in m may have a member named "uri" (or, for
// MCP Apps, "resourceUri" or "ui/resourceUri"), its escapes decoded (so "\u0075ri" is one, as for every client's decoder): false only when
// DecodeMessage read m and found none. It is what lets a result that names no resource be
// relayed without another pass over it. A Message built any other way answers true, so work
// skipped on false is never skipped wrongly. The answer is about the message DecodeMessage read:
// a Result replaced afterwards by one that may name a "uri" needs a Message built anew (a copy
// keeps the answer).
func (m *Message) MayHaveURIKey() bool { return !m.noURIKey }

// DecodeMessage parses a message received from a backend. It is as strict about JSON as Decode
// (a backend's garbage must never reach a client as if it were valid) but accepts responses and
// tolerates unknown members. Errors wrap ErrBadMessage.
func DecodeMessage(body []byte, lim Limits) (*Message, error) {
	uriKey, err := scan(body, lim, false)
	if err != nil {
		return nil, errors.Join(ErrBadMessage, err)
	}
	m := Message{noURIKey: !uriKey}
	var version bool
	err = Members(body, func(key, val []byte) error {
		switch string(key) {
		case "jsonrpc":
			version = string(val) == `"2.0"`
		case "id":
			if string(val) != "null" {
				m.ID = val
			}
		case "method":
			if val[0] == '"' && bytes.IndexByte(val, '\\') < 0 {
				// Scanned already: quoted, valid UTF-8, nothing to unescape. Every relayed
				// notification has one.
				m.Method = string(val[1 : len(val)-1])
				return nil
			}
			return json.Unmarshal(val, &m.Method)
		case "params":
			m.Params = val
		case "result":
			m.Result = val
		case "error":
			var err error
			m.Error, err = decodeError(val)
			return err
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, errors.Join(ErrBadMessage, err)
	case !version:
		return nil, errors.Join(ErrBadMessage, errors.New(`jsonrpc is not "2.0"`))
	case m.Method == "" && m.Result == nil && m.Error == nil:
		return nil, errors.Join(ErrBadMessage, errors.New("neither method, result nor error"))
	case m.Result != nil && m.Result[0] != '{':
		return nil, errors.Join(ErrBadMessage, errors.New("result is not an object"))
	case m.Result != nil && m.Error != nil:
		// JSON-RPC 2.0 §5: exactly one of them. Relaying either would pick for the backend.
		return nil, errors.Join(ErrBadMessage, errors.New("both result and error"))
	}
	return &m, nil
}

// decodeError reads a backend's error object (JSON-RPC 2.0 §5.1) as the SDKs' clients read it:
// an object with an integer "code" and a string "message", both present and named exactly
// (the TypeScript SDK refuses a message without them; the Go SDK matches names exactly), and
// "data" kept as sent. Anything else ("error": null, {}, a "Code" for "code") is no error
// object: relayed, it would reach a client as an error the backend never sent, code 0 and no
// message, or with the code of a member the backend's own clients do not read.
func decodeError(val []byte) (*Error, error) {
	if val[0] != '{' {
		return nil, errors.New("error is not an object")
	}
	e := &Error{}
	var code, msg bool
	err := Members(val, func(key, v []byte) error {
		switch string(key) {
		case "code":
			if v[0] == 'n' {
				return errors.New("error code is null")
			}
			code = true
			return json.Unmarshal(v, &e.Code)
		case "message":
			if v[0] != '"' {
				return errors.New("error message is not a string")
			}
			msg = true
			return json.Unmarshal(v, &e.Message)
		case "data":
			// A copy, as the message may be kept after the buffer it was read from is reused.
			e.Data = bytes.Clone(v)
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case !code || !msg:
		return nil, errors.New("error object without a code and a message")
	}
	return e, nil
}

// Answers reports whether response m answers the request sent with id: its id is the same
// JSON-RPC id as a peer reads it (CanonicalID: the same string, or the same integer as
// JavaScript peers round it above 2^53), or it is an error with a null or absent id, which
// JSON-RPC 2.0 §5 allows when the peer could not read the request's id.
func (m *Message) Answers(id json.RawMessage) bool {
	switch {
	case m.ID == nil:
		return m.Error != nil
	case bytes.Equal(m.ID, id):
		return true
	}
	a, okA := CanonicalID(m.ID)
	b, okB := CanonicalID(id)
	return okA && okB && a == b
}
