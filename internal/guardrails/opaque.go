package guardrails

import (
	"bytes"
	"errors"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// What the walker leaves unscanned is decided by where a member stands in the protocol, never
// by its name alone: a member named "data", "blob" or "requestState" can hold anything a
// backend or a client puts there (a tool's structuredContent, a log notification's data, a
// JSON-RPC error's data, an argument), and a bare credential is made of base64 characters
// (an AWS key id, a GitHub token), so a skip by name and alphabet would let it through.

// opaque reports whether the member key, whose value starts at raw[v], in the object that
// starts at raw[obj], is binary content or a round trip's opaque state, which the walker does
// not read as a string: in a result only, in its content blocks, prompt messages, resource
// contents or input requests, an image's or audio's "data" and a resource's "blob" (an object
// naming its "uri"), which are read as the bytes they decode to (blob.go), and the
// requestState of an input_required result (a member of the result object itself: the round
// trip's state, which the gateway seals and no model reads). A requestState in a result of
// another kind is no round trip's, just a member the client receives, and is scanned. The
// params of a request relayed to the client (a pre-2026 backend's sampling request) hold
// content blocks as a result does, read so. Arguments, notifications, structuredContent, _meta
// and errors carry no such content: everything in them is scanned.
func (w *walker) opaque(key []byte, obj, v, depth int) bool {
	raw := w.raw
	if !w.content || raw[v] != '"' {
		return false
	}
	switch string(decodedKey(key)) {
	case "data":
		if !w.atContent(w.path) {
			return false
		}
		t := memberValue(raw, obj, "type")
		return (bytes.Equal(t, []byte(`"image"`)) || bytes.Equal(t, []byte(`"audio"`))) && w.blob(key, obj, v)
	case "blob":
		return w.atResource() && memberValue(raw, obj, "uri") != nil && w.blob(key, obj, v)
	case "requestState":
		return w.stripMeta && depth == 1 && inputRequired(memberValue(raw, obj, "resultType"))
	}
	return false
}

// inputRequired reports whether t, the raw value of a result's resultType (nil when absent),
// is "input_required", in any spelling of its escapes (as the gateway reads it to seal the
// round trip).
func inputRequired(t []byte) bool {
	return len(t) >= 2 && t[0] == '"' && keyIs(t[1:len(t)-1], "input_required")
}

// atContent reports whether path is exactly where a content block stands: a result's
// content[i], a prompt's messages[i].content (one block or an array of them), or the same in a
// sampling request of an input_required result's inputRequests. Only the whole path counts: an
// object of a backend's own nested inside a block, or a "content" member anywhere else, is not
// a place of binary content, and everything in it is scanned.
func (w *walker) atContent(p []pathElem) bool {
	switch {
	case len(p) == 2:
		return isKey(p[0], "content") && isIdx(p[1])
	case len(p) >= 6 && isKey(p[0], "inputRequests") && !isIdx(p[1]) && isKey(p[2], "params"):
		p = p[3:] // a sampling request's params: its messages as a prompt's
	}
	if len(p) == 4 && isIdx(p[3]) {
		p = p[:3]
	}
	return len(p) == 3 && isKey(p[0], "messages") && isIdx(p[1]) && isKey(p[2], "content")
}

// atResource reports whether the walker is exactly where a resource's contents stand: a read's
// contents[i], or the resource of an embedded resource block (atContent, then "resource").
func (w *walker) atResource() bool {
	p := w.path
	if len(p) == 2 && isKey(p[0], "contents") && isIdx(p[1]) {
		return true
	}
	return len(p) > 0 && isKey(p[len(p)-1], "resource") && w.atContent(p[:len(p)-1])
}

func isKey(e pathElem, name string) bool { return e.key != nil && keyIs(e.key, name) }
func isIdx(e pathElem) bool              { return e.key == nil }

// memberValue returns the raw value of the member name of the object that starts at raw[obj],
// or nil. The text passed the strict scan: no member appears twice.
func memberValue(raw []byte, obj int, name string) []byte {
	i := skipWS(raw, obj+1)
	for i < len(raw) && raw[i] == '"' {
		kend := jsonrpc.StringEnd(raw, i)
		v := skipWS(raw, skipWS(raw, kend)+1)
		end := jsonrpc.ValueEnd(raw, v)
		if keyIs(raw[i+1:kend-1], name) {
			return raw[v:end]
		}
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return nil
}

// namedMembers are the members of a result the guardrails read by their exact name: the
// annotation's _meta, the structuredContent validated against the output schema, and isError,
// which exempts a tool error from that validation.
var namedMembers = [...]string{"_meta", "structuredContent", "isError"}

// spelling refuses, in a result, a member of the result object whose name is one of
// namedMembers under folding (jsonrpc.FoldKey: "_META", "StructuredContent", "iserror") but not
// exactly. The gateway reads the exact name, but a decoder that matches names without case
// (Go's encoding/json, for one) reads the variant as that member too, merged over it or in its
// place: a backend could forge or hide the annotation in _meta, or have the schema checked on
// one structuredContent (or skipped on isError) while the client reads another. No backend
// needs such a spelling, and which member a client reads depends on its decoder, so the check
// fails (closed) rather than guessing.
func (w *walker) spelling(depth int, key []byte) error {
	if !w.stripMeta || depth != 1 {
		return nil
	}
	if m, ok := Respelt(key); ok {
		return errors.New("guardrails: the result has a member a client may read as " + m + ", spelt otherwise")
	}
	return nil
}

// Respelt reports whether key, a member name of a result object as in the JSON text, is
// another spelling of one of the members the guardrails read by name, and which.
func Respelt(key []byte) (string, bool) {
	name := decodedKey(key)
	for _, m := range namedMembers {
		if string(name) != m && jsonrpc.FoldEqual(name, []byte(m)) {
			return m, true
		}
	}
	return "", false
}
