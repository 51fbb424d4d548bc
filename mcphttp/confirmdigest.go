package mcphttp

import (
	"crypto/sha256"
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/mrtr"
)

// What a confirmation binds. A confirmed call reaches the backend with its params as the retry
// carries them, less the requestState and inputResponses that answered the gateway: the
// arguments, and also the client's own _meta members (a vendor's "dryRun" or "environment" key
// can change what the backend does) and any member of the params the gateway does not know. So
// the digest a confirmation or an approval is bound to covers all of those: a retry that
// changes one is refused like one that changes an argument.
//
// It covers as well what the client declares of itself (declaredMetaKey: the protocol version,
// the client capabilities, the client info), which the backend receives and acts on: what it
// may ask the client in a round of its own (an elicitation, a sampling request, the roots),
// which the gateway relays only when these capabilities declare it; the shape of its result (a
// task where the tasks extension is declared); whatever it does for a client by that name. A
// call confirmed by a client that declared no sampling is never run for a retry declaring it,
// which would let the backend ask what the person confirming never saw it could.
//
// Left out are what is bound apart (the tool's name, a resource's uri is bound as the name
// too), what answered the gateway (requestState, inputResponses), and the other _meta members
// the gateway reads and validates itself (jsonrpc.ReservedMetaKey: the log level, the
// authorization-context handle, the progress token and trace context), which a client sets
// anew on each request and which decide only how the call is reported, not what it does. Of
// the client's headers the backend receives only trace context, the request id and the
// Mcp-Param-* headers, which are recomputed from the bound arguments (callHeaders): none is
// bound apart.
//
// A call with nothing beyond its arguments (a call the gateway makes itself) digests as
// mrtr.Digest of the arguments; the others digest the arguments and those members together,
// under a label of their own so that neither form can stand for the other.

// boundLabel separates the digest of arguments with other members from a digest of arguments.
const boundLabel = "mcp-gateway confirmation: arguments and forwarded params\x00"

// boundDigest is the digest of what a confirmation of a call with these params binds (above).
func boundDigest(args, params json.RawMessage) ([32]byte, error) {
	extra, err := forwardedMembers(params)
	if err != nil {
		return [32]byte{}, err
	}
	declared, err := declaredMeta(params)
	if err != nil {
		return [32]byte{}, err
	}
	if extra == nil && declared == nil {
		return mrtr.Digest(args)
	}
	whole := make([]byte, 0, len(args)+len(extra)+len(declared)+48)
	whole = append(whole, `{"arguments":`...)
	whole = appendOrNull(whole, args)
	whole = append(whole, `,"params":`...)
	whole = appendOrNull(whole, extra)
	whole = append(whole, `,"declared":`...)
	whole = append(appendOrNull(whole, declared), '}')
	d, err := mrtr.Digest(whole)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(append([]byte(boundLabel), d[:]...)), nil
}

func appendOrNull(b, v []byte) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	return append(b, v...)
}

// declaredMetaKey reports whether a _meta key is one in which the client declares itself, which
// a confirmation binds though the gateway reads it too (above).
func declaredMetaKey(key []byte) bool {
	switch string(key) {
	case jsonrpc.MetaProtocolVersion, jsonrpc.MetaClientCapabilities, jsonrpc.MetaClientInfo:
		return true
	}
	return false
}

// declaredMeta returns, as one object, the members of the params' _meta that declaredMetaKey
// names; nil when there are none.
func declaredMeta(params json.RawMessage) ([]byte, error) {
	if len(params) == 0 {
		return nil, nil
	}
	var w objectWriter
	err := jsonrpc.Members(params, func(key, val []byte) error {
		if string(key) != "_meta" || len(val) == 0 || val[0] != '{' {
			return nil
		}
		return jsonrpc.Members(val, func(k, v []byte) error {
			if declaredMetaKey(k) {
				w.add(k, v)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return w.object(), nil
}

// forwardedMembers returns, as one JSON object, the members of params that reach the backend
// and are not bound otherwise, with _meta cut to the client's own members; nil when there are
// none. params has passed the request scanner (one object, no duplicate keys, valid UTF-8).
func forwardedMembers(params json.RawMessage) ([]byte, error) {
	if len(params) == 0 {
		return nil, nil
	}
	var w objectWriter
	err := jsonrpc.Members(params, func(key, val []byte) error {
		switch string(key) {
		case "name", "arguments", "requestState", "inputResponses":
			return nil
		case "_meta":
			own, err := clientMeta(val)
			if err != nil || own == nil {
				return err
			}
			val = own
		}
		w.add(key, val)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w.object(), nil
}

// clientMeta returns the _meta members that are the client's own (not jsonrpc.ReservedMetaKey),
// as an object; nil when there are none or meta is not an object (the request stage refuses
// such a _meta before this).
func clientMeta(meta []byte) ([]byte, error) {
	if len(meta) == 0 || meta[0] != '{' {
		return nil, nil
	}
	var w objectWriter
	err := jsonrpc.Members(meta, func(key, val []byte) error {
		if !jsonrpc.ReservedMetaKey(key) {
			w.add(key, val)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w.object(), nil
}

// objectWriter writes a JSON object member by member (jsonrpc.AppendMember): decoded keys
// re-encoded, raw values.
type objectWriter struct{ b []byte }

func (w *objectWriter) add(key, val []byte) {
	if w.b == nil {
		w.b = append(w.b, '{')
	}
	w.b = jsonrpc.AppendMember(w.b, key, val)
}

// object is the object written, nil when it has no members.
func (w *objectWriter) object() []byte {
	if w.b == nil {
		return nil
	}
	return append(w.b, '}')
}
