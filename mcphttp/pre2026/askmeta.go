package pre2026

import (
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A pre-2026 client is asked the requests an input_required result carries, not given the
// result: the guardrails' annotation in that result's _meta (what a rule flagged or redacted in
// the requests, an elicitation's message say) would never reach it. So each request takes the
// annotation along, in its params' _meta under the same key. That member is the gateway's in
// every request a pre-2026 client is sent, as it is in a result's _meta: a backend's own (in any
// spelling a client's decoder folds to it) is removed, annotation or not, or a backend could
// pass its own words off as the gateway's findings ("nothing flagged") to a client that reads
// them where the gateway puts them.

// withAnnotation puts the guardrails' annotation of result, if it has one, into the _meta of
// every request of reqs, and removes a backend's own member of that name from them.
func withAnnotation(result []byte, reqs []era.InputRequest) {
	a := annotationOf(result)
	for i := range reqs {
		if a != nil || hasOwnAnnotation(reqs[i].Params) {
			reqs[i].Params = withMetaMember(reqs[i].Params, a)
		}
	}
}

// withoutOwnAnnotation is params (an object) without a backend's own guardrails member in its
// _meta: a pre-2026 backend's mid-call request, which carries no annotation of the gateway's.
func withoutOwnAnnotation(params []byte) []byte {
	if !hasOwnAnnotation(params) {
		return params
	}
	return withMetaMember(params, nil)
}

// hasOwnAnnotation reports whether params' _meta has a member that is, or that a client's
// decoder reads as, the guardrails' annotation (jsonrpc.FoldEqual).
func hasOwnAnnotation(params []byte) bool {
	found := false
	_ = jsonrpc.Members(params, func(k, v []byte) error {
		if string(k) == "_meta" && len(v) > 0 && v[0] == '{' {
			_ = jsonrpc.Members(v, func(mk, _ []byte) error {
				found = found || isAnnotationKey(mk)
				return nil
			})
		}
		return nil
	})
	return found
}

// isAnnotationKey reports whether k names the guardrails' annotation to some client's decoder.
func isAnnotationKey(k []byte) bool {
	return jsonrpc.FoldEqual(k, []byte(guardrails.MetaKey))
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
// that name already there (the backend's own, in any spelling isAnnotationKey knows) is
// removed: the annotation is the gateway's. With a nil, only that removal is made, and a _meta
// it leaves empty goes.
func withMetaMember(params, a []byte) []byte {
	var member []byte
	if a != nil {
		member = append(jsonrpc.AppendString(nil, guardrails.MetaKey), ':')
		member = append(member, a...)
	}
	out := []byte{'{'}
	found := false
	_ = jsonrpc.Members(params, func(k, v []byte) error {
		if string(k) != "_meta" {
			out = appendMember(out, k, v)
			return nil
		}
		// A _meta that is not an object (null, say) is replaced by one holding the annotation,
		// rather than a second _meta member added: the client's decoder would keep one of two.
		found = true
		meta := append([]byte{'{'}, member...)
		if len(v) > 0 && v[0] == '{' {
			_ = jsonrpc.Members(v, func(mk, mv []byte) error {
				if !isAnnotationKey(mk) {
					meta = appendMember(meta, mk, mv)
				}
				return nil
			})
		}
		if len(meta) > 1 || a != nil {
			out = appendMember(out, k, append(meta, '}'))
		}
		return nil
	})
	if !found && a != nil {
		out = appendMember(out, []byte("_meta"), append(append([]byte{'{'}, member...), '}'))
	}
	return append(out, '}')
}

// appendMember appends the member k:v to out, an object's members so far after its '{'.
func appendMember(out, k, v []byte) []byte {
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(jsonrpc.AppendString(out, k), ':')
	return append(out, v...)
}
