package intercept

import (
	"errors"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A pre-2026 backend asks for input in the middle of a call (elicitation/create,
// sampling/createMessage, roots/list) with a request of its own, and gets the client's answer
// back, where a 2026-07-28 backend ends its response with an input_required result and reads
// the answers in the retry's inputResponses. The interceptors are shown the first in the shape
// of the second, so that one contract governs both eras: the backend's request in the call's
// response phase as an input_required result carrying it alone, the client's answer in the
// call's request phase as the call's params with the answer in inputResponses. The event is the
// call's (tools/call, prompts/get, resources/read), as for the 2026-07-28 round.

// askKey is the inputRequests and inputResponses key of a relayed request: one request per
// round, so a fixed key will do.
const askKey = "ask"

// AskPayload is the response-phase payload of a backend's request (method, params) to the
// client mid-call: {"resultType":"input_required","inputRequests":{"ask":{method, params}}}; a
// request without params (roots/list may have none) is shown with empty ones.
func AskPayload(method string, params []byte) []byte {
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	out := make([]byte, 0, len(params)+len(method)+96)
	out = append(out, `{"resultType":"input_required","inputRequests":{"`+askKey+`":{"method":`...)
	out = jsonrpc.AppendString(out, method)
	out = append(out, `,"params":`...)
	out = append(out, params...)
	return append(out, `}}}`...)
}

// AskParams returns the params of the backend's request in an ask payload (AskPayload) a
// mutation returned. It must carry exactly that one request, of the same method, with object
// params and nothing else: the gateway relays one request, as the backend sent it or as the
// interceptors changed it, and cannot add another, answer it or turn it into another kind.
// checkResultMutation has kept resultType and left requestState out.
func AskParams(payload []byte, method string) ([]byte, error) {
	var requests, params []byte
	var other error
	err := jsonrpc.Members(payload, func(key, val []byte) error {
		switch string(key) {
		case "resultType":
		case "inputRequests":
			requests = val
		default:
			other = errors.New("a mutated request to the client has members besides inputRequests")
		}
		return nil
	})
	if err != nil || requests == nil {
		return nil, errors.New("a mutated request to the client has no inputRequests")
	}
	if other != nil {
		return nil, other
	}
	n := 0
	err = jsonrpc.Members(requests, func(key, val []byte) error {
		n++
		if string(key) != askKey {
			return errors.New("a mutated request to the client is under another key")
		}
		var m []byte
		if e := jsonrpc.Members(val, func(k, v []byte) error {
			switch string(k) {
			case "method":
				m = v
			case "params":
				params = v
			default:
				return errors.New("a mutated request to the client has members besides method and params")
			}
			return nil
		}); e != nil {
			return e
		}
		if string(m) != string(jsonrpc.AppendString(nil, method)) {
			return errors.New("a mutated request to the client changes its method")
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case n != 1:
		return nil, errors.New("a mutated request to the client must carry exactly one request")
	case len(params) == 0 || params[0] != '{':
		return nil, errors.New("a mutated request to the client has params that are not an object")
	}
	return params, nil
}

// AnswerPayload is the request-phase payload of the client's answer to a backend's request
// mid-call: the call as it was forwarded (method, params without the members an interceptor is
// not shown), with the answer as its inputResponses, as a 2026-07-28 retry carries it.
func AnswerPayload(method string, params, answer []byte) ([]byte, error) {
	out := make([]byte, 0, len(params)+len(answer)+len(method)+64)
	out = append(out, `{"method":`...)
	out = jsonrpc.AppendString(out, method)
	out = append(out, `,"params":`...)
	out, err := appendWithout(out, params, gatewayOwned)
	if err != nil {
		return nil, err
	}
	out = out[:len(out)-1]
	if out[len(out)-1] != '{' {
		out = append(out, ',')
	}
	out = append(out, `"`+shownOwned+`":{"`+askKey+`":`...)
	out = append(out, answer...)
	return append(out, `}}}`...), nil
}

// ErrAnswerMutated is what an answer's mutation is refused with (the Check of its invocation):
// as the answers of a 2026-07-28 retry, the client's answer is the client's, and the call it
// belongs to has gone to the backend already, so nothing else of the payload can change either.
var ErrAnswerMutated = errors.New("a mutation of the client's answer to a backend's request")
