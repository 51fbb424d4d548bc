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
// starts at raw[obj], is binary content or a round trip's opaque state, which no detector reads
// as text: in a result only, in its content blocks, prompt messages, resource contents or input
// requests, an image's or audio's base64 "data" and a resource's base64 "blob" (an object
// naming its "uri"), and the result's own "requestState" (a member of the result object
// itself). Arguments, notifications, structuredContent, _meta and errors carry no such content:
// everything in them is scanned.
func (w *walker) opaque(key []byte, obj, v, depth int) bool {
	raw := w.raw
	if !w.stripMeta || raw[v] != '"' {
		return false
	}
	switch string(decodedKey(key)) {
	case "data":
		if !w.inContent() {
			return false
		}
		t := memberValue(raw, obj, "type")
		return (bytes.Equal(t, []byte(`"image"`)) || bytes.Equal(t, []byte(`"audio"`))) && w.base64At(v)
	case "blob":
		return w.inContent() && memberValue(raw, obj, "uri") != nil && w.base64At(v)
	case "requestState":
		return depth == 1
	}
	return false
}

// inContent reports whether the walker is inside a result's content blocks ("content"), a
// prompt's "messages", a resource's "contents" or an input_required result's "inputRequests"
// (a sampling request's messages), where binary content stands.
func (w *walker) inContent() bool {
	if len(w.path) < 2 || w.path[0].key == nil {
		return false
	}
	switch string(decodedKey(w.path[0].key)) {
	case "content", "contents", "messages", "inputRequests":
		return true
	}
	return false
}

// base64At reports whether the string at raw[v] holds only base64 characters.
func (w *walker) base64At(v int) bool {
	return base64Only(w.raw[v+1 : jsonrpc.StringEnd(w.raw, v)-1])
}

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
