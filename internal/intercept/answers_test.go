package intercept

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// An interceptor is shown a retry's answers but neither the protocol's _meta nor the sealed
// state; a mutation may give the answers back unchanged (in any spacing or order) and may not
// change them, and the client's are what a mutated request carries.
func TestAnswersShownNotChanged(t *testing.T) {
	params := []byte(`{"_meta":{"progressToken":1},"name":"a__t","arguments":{"x":1},"requestState":"sealed",` +
		`"inputResponses":{"k":{"action":"accept","content":{"name":"ann"}}}}`)
	sent, err := RequestPayload("tools/call", params)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(sent); !strings.Contains(s, `"inputResponses"`) || strings.Contains(s, "sealed") || strings.Contains(s, "progressToken") {
		t.Fatalf("payload %s", sent)
	}
	for _, c := range []struct {
		payload string
		ok      bool
	}{
		{`{"method":"tools/call","params":{"name":"a__t","arguments":{"x":2},"inputResponses":{"k":{"content":{"name":"ann"},"action":"accept"}}}}`, true},
		{`{"method":"tools/call","params":{"name":"a__t","arguments":{"x":2}}}`, true},
		{`{"method":"tools/call","params":{"name":"a__t","arguments":{"x":2},"inputResponses":{"k":{"action":"accept","content":{"name":"eve"}}}}}`, false},
		{`{"method":"tools/call","params":{"name":"a__t","arguments":{},"inputResponses":{"confirm":{"action":"accept"}}}}`, false},
		{`{"method":"tools/call","params":{"name":"a__t","arguments":{},"requestState":"sealed"}}`, false},
	} {
		err := checkRequestMutation("tools/call", []byte(c.payload), sent, jsonrpc.Limits{})
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.payload, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		out, err := MutatedParams([]byte(c.payload), params)
		if err != nil {
			t.Fatal(err)
		}
		if err := jsonrpc.Scan(out, jsonrpc.Limits{}); err != nil || strings.Count(string(out), "inputResponses") != 1 ||
			!strings.Contains(string(out), `"inputResponses":{"k":{"action":"accept","content":{"name":"ann"}}}`) {
			t.Errorf("mutated params %s (%v)", out, err)
		}
	}
}
