package mcphttp

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// What a backend's sampling request may draw from the client (docs/protocol.md §3, "Sampling
// context"). includeContext "thisServer" or "allServers" asks the client to put into the prompt
// what it holds of its exchanges with the server, or with every server: behind the gateway that
// server is every backend at once, so one backend's request would have the client's model read
// the client's exchanges with the others and hand its reply, built on them, to the backend that
// asked. Unless the operator trusts a backend with it (its samplingContext setting), the gateway
// keeps the two consistent:
//
//   - the clientCapabilities of a request routed to a backend never declare sampling.context,
//     so a backend that follows the protocol does not ask for context (a listen, which can ask
//     nothing, is forwarded as it came);
//   - a sampling request a backend makes anyway reaches the client with includeContext "none":
//     in a 2026-07-28 backend's input_required round (for either era's client) and in a 2025
//     backend's own request during a call. It is then a plain sampling request, which needs
//     sampling alone of the client.
//
// The rewrite is made after the interceptors and guardrails have read the round, so a mutation
// cannot put the context back, and before the capability check, which reads what the client
// will get.

// trustsContext reports whether the backend upstream is trusted with sampling context.
func trustsContext(s *Server, upstream string) bool { return s.samplingContext[upstream] }

// roundWithoutContext returns a backend's input_required result with every sampling request in
// its inputRequests asking for no context, unless x's backend is trusted with it. A result
// without inputRequests is returned as it is; inputRequests that cannot be read are an invalid
// result, never relayed with their context.
func roundWithoutContext(x *request, result []byte) ([]byte, error) {
	if trustsContext(x.s, x.route.upstream) {
		return result, nil
	}
	inputs := inputRequestsOf(result)
	if inputs == nil {
		return result, nil
	}
	rewritten, changed, err := era.InputRequestsWithoutContext(inputs)
	if err != nil {
		return nil, invalidResult(strings.TrimPrefix(err.Error(), "era: "))
	}
	if !changed {
		return result, nil
	}
	out, err := era.FilterObject(make([]byte, 0, len(result)), result, func(k, v []byte) ([]byte, bool) {
		if string(k) == "inputRequests" {
			return rewritten, true
		}
		return v, true
	})
	if err != nil {
		return nil, invalidResult("inputRequests: " + err.Error())
	}
	return out, nil
}

// asksWithoutContext makes the sampling requests a pre-2026 backend sends during x's call reach
// its client asking for no context, unless x's backend is trusted with it. It wraps the edge's
// own ClientRequests, innermost, so that the interceptors and guardrails (checkedAsks, wrapped
// around it) cannot add the context back.
func asksWithoutContext(ctx context.Context, x *request) context.Context {
	ask := upstreams.ClientRequestsOf(ctx)
	if ask == nil || trustsContext(x.s, x.route.upstream) {
		return ctx
	}
	return upstreams.WithClientRequests(ctx, func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method == era.MethodSamplingCreate && len(params) > 0 && params[0] == '{' {
			p, _, err := era.SamplingWithoutContext(params)
			if err != nil {
				return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: the gateway cannot relay this "+method+" request")
			}
			params = p
		}
		return ask(ctx, method, params)
	})
}

// capsWithoutContext returns the params of a request to x's backend with sampling.context taken
// out of the clientCapabilities in their _meta, unless the backend is trusted with it. Names are
// matched as a case-folding decoder reads them ("Sampling", "CONTEXT"): a backend must not read
// a declaration the gateway does not honour.
func capsWithoutContext(x *request, params json.RawMessage) (json.RawMessage, error) {
	if trustsContext(x.s, x.route.upstream) || len(params) == 0 || params[0] != '{' || !declaresContext(params) {
		return params, nil
	}
	// A member that does not filter fails the request: forwarded as it came, it would declare
	// what the gateway does not honour.
	var bad error
	filter := func(obj []byte, fn func(k, v []byte) ([]byte, bool)) []byte {
		out, err := era.FilterObject(nil, obj, fn)
		if err != nil {
			bad = err
			return obj
		}
		return out
	}
	out, err := era.FilterObject(make([]byte, 0, len(params)), params, func(k, v []byte) ([]byte, bool) {
		if !jsonrpc.FoldEqual(k, []byte("_meta")) || !isObjectValue(v) {
			return v, true
		}
		return filter(v, func(mk, mv []byte) ([]byte, bool) {
			if !jsonrpc.FoldEqual(mk, []byte(jsonrpc.MetaClientCapabilities)) || !isObjectValue(mv) {
				return mv, true
			}
			return filter(mv, func(ck, cv []byte) ([]byte, bool) {
				if !jsonrpc.FoldEqual(ck, []byte("sampling")) || !isObjectValue(cv) {
					return cv, true
				}
				return filter(cv, func(sk, sv []byte) ([]byte, bool) {
					return sv, !jsonrpc.FoldEqual(sk, []byte("context"))
				}), true
			}), true
		}), true
	})
	if err = cmp.Or(err, bad); err != nil {
		return nil, invalidParams("Invalid params: _meta.clientCapabilities cannot be forwarded without sampling.context")
	}
	return out, nil
}

// declaresContext reports, cheaply, whether params may declare sampling.context: whether their
// _meta's clientCapabilities hold a sampling object with a context member, names folded.
func declaresContext(params []byte) bool {
	found := false
	each := func(obj []byte, name string, fn func(v []byte)) {
		_ = jsonrpc.Members(obj, func(k, v []byte) error {
			if jsonrpc.FoldEqual(k, []byte(name)) && isObjectValue(v) {
				fn(v)
			}
			return nil
		})
	}
	each(params, "_meta", func(meta []byte) {
		each(meta, jsonrpc.MetaClientCapabilities, func(caps []byte) {
			each(caps, "sampling", func(s []byte) {
				_ = jsonrpc.Members(s, func(k, _ []byte) error {
					found = found || jsonrpc.FoldEqual(k, []byte("context"))
					return nil
				})
			})
		})
	})
	return found
}

// isObjectValue reports whether the scanned JSON value v is an object.
func isObjectValue(v []byte) bool { return len(v) > 0 && v[0] == '{' }
