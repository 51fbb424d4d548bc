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
// changes one is refused like one that changes an argument. Left out are what is bound apart
// (the tool's name, a resource's uri is bound as the name too), what answered the gateway
// (requestState, inputResponses), and the _meta members the gateway reads and validates itself
// (jsonrpc.ReservedMetaKey: the protocol version, client capabilities and info, log level, the
// authorization-context handle, the progress token and trace context), which a client sets
// anew on each request and which decide only how the call is reported, not what it does.
//
// A call with nothing beyond its arguments, nearly every one, digests as mrtr.Digest of the
// arguments, as before; the others digest the arguments and those members together, under a
// label of their own so that neither form can stand for the other.

// boundLabel separates the digest of arguments with other members from a digest of arguments.
const boundLabel = "mcp-gateway confirmation: arguments and forwarded params\x00"

// boundDigest is the digest of what a confirmation of a call with these params binds (above).
func boundDigest(args, params json.RawMessage) ([32]byte, error) {
	extra, err := forwardedMembers(params)
	if err != nil {
		return [32]byte{}, err
	}
	if extra == nil {
		return mrtr.Digest(args)
	}
	whole := make([]byte, 0, len(args)+len(extra)+32)
	whole = append(whole, `{"arguments":`...)
	if len(args) == 0 {
		whole = append(whole, "null"...)
	} else {
		whole = append(whole, args...)
	}
	whole = append(whole, `,"params":`...)
	whole = append(append(whole, extra...), '}')
	d, err := mrtr.Digest(whole)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(append([]byte(boundLabel), d[:]...)), nil
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
