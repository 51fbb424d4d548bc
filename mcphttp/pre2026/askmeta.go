package pre2026

import (
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A pre-2026 client is asked the requests an input_required result carries, not given the
// result: the guardrails' annotation in that result's _meta (what a rule flagged or redacted in
// the requests, an elicitation's message say) would never reach it. So each request takes the
// annotation along, in its params' _meta under the same key.

// withAnnotation puts the guardrails' annotation of result, if it has one, into the _meta of
// every request of reqs.
func withAnnotation(result []byte, reqs []era.InputRequest) {
	a := annotationOf(result)
	if a == nil {
		return
	}
	for i := range reqs {
		reqs[i].Params = withMetaMember(reqs[i].Params, a)
	}
}

// annotationOf returns the raw value of result._meta[guardrails.MetaKey], or nil.
func annotationOf(result []byte) []byte {
	var meta, a []byte
	_ = jsonrpc.Members(result, func(k, v []byte) error {
		if string(k) == "_meta" && len(v) > 0 && v[0] == '{' {
			meta = v
		}
		return nil
	})
	if meta == nil {
		return nil
	}
	_ = jsonrpc.Members(meta, func(k, v []byte) error {
		if string(k) == guardrails.MetaKey {
			a = v
		}
		return nil
	})
	return a
}

// withMetaMember returns params (an object) with the annotation a as the first member of its
// _meta, which is added when absent (and replaces a _meta that is not an object). A member of
// that name already there (the backend's own) is replaced: the annotation is the gateway's.
func withMetaMember(params, a []byte) []byte {
	member := append(jsonrpc.AppendString(nil, guardrails.MetaKey), ':')
	member = append(member, a...)
	out := []byte{'{'}
	found := false
	_ = jsonrpc.Members(params, func(k, v []byte) error {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(jsonrpc.AppendString(out, k), ':')
		if string(k) != "_meta" {
			out = append(out, v...)
			return nil
		}
		// A _meta that is not an object (null, say) is replaced by one holding the annotation,
		// rather than a second _meta member added: the client's decoder would keep one of two.
		found = true
		out = append(append(out, '{'), member...)
		if len(v) > 0 && v[0] == '{' {
			_ = jsonrpc.Members(v, func(mk, mv []byte) error {
				if string(mk) != guardrails.MetaKey {
					out = append(append(append(out, ','), jsonrpc.AppendString(nil, mk)...), ':')
					out = append(out, mv...)
				}
				return nil
			})
		}
		out = append(out, '}')
		return nil
	})
	if !found {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, `"_meta":{`...), member...), '}')
	}
	return append(out, '}')
}
