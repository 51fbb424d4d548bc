package intercept

import (
	"encoding/json"
	"testing"
)

// TestAskPayloads: a backend's request mid-call is shown as the input_required result that
// would carry it, and a mutation of it is read back only when it is still that one request of
// the same method; the client's answer is shown as the call's inputResponses, without the
// members the gateway owns.
func TestAskPayloads(t *testing.T) {
	ask := AskPayload("elicitation/create", []byte(`{"message":"hi"}`))
	if !json.Valid(ask) || string(ask) != `{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create","params":{"message":"hi"}}}}` {
		t.Fatalf("ask payload %s", ask)
	}
	if p := AskPayload("roots/list", nil); !json.Valid(p) {
		t.Fatalf("a request without params: %s", p)
	}
	if p, err := AskParams([]byte(`{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create","params":{"message":"ho"}}}}`),
		"elicitation/create"); err != nil || string(p) != `{"message":"ho"}` {
		t.Fatalf("a mutated request: %s %v", p, err)
	}
	for name, bad := range map[string]string{
		"another method":  `{"resultType":"input_required","inputRequests":{"ask":{"method":"sampling/createMessage","params":{}}}}`,
		"two requests":    `{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create","params":{}},"b":{"method":"elicitation/create","params":{}}}}`,
		"another key":     `{"resultType":"input_required","inputRequests":{"b":{"method":"elicitation/create","params":{}}}}`,
		"no request":      `{"resultType":"input_required","inputRequests":{}}`,
		"no requests":     `{"resultType":"input_required"}`,
		"params not obj":  `{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create","params":"x"}}}`,
		"no params":       `{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create"}}}`,
		"an extra member": `{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create","params":{}}},"content":[]}`,
		"an extra field":  `{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create","params":{},"id":1}}}`,
		"not an object":   `{"resultType":"input_required","inputRequests":[]}`,
	} {
		if _, err := AskParams([]byte(bad), "elicitation/create"); err == nil {
			t.Errorf("%s: read as a request to relay", name)
		}
	}
	ans, err := AnswerPayload("tools/call", []byte(`{"name":"a__b","arguments":{"x":1},"_meta":{"k":1},"requestState":"s","inputResponses":{"c":{}}}`),
		[]byte(`{"action":"accept"}`))
	if err != nil || string(ans) != `{"method":"tools/call","params":{"name":"a__b","arguments":{"x":1},"inputResponses":{"ask":{"action":"accept"}}}}` {
		t.Fatalf("answer payload %s %v", ans, err)
	}
	if ans, err := AnswerPayload("tools/call", []byte(`{}`), []byte(`{}`)); err != nil || !json.Valid(ans) {
		t.Fatalf("answer payload of empty params %s %v", ans, err)
	}
}
