package intercept

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// An interceptor is shown a retry's answers and the client's _meta but not the sealed state; a
// mutation may give the answers back unchanged (in any spacing or order) and may not change
// them, and the client's are what a mutated request carries.
func TestAnswersShownNotChanged(t *testing.T) {
	params := []byte(`{"_meta":{"progressToken":1},"name":"a__t","arguments":{"x":1},"requestState":"sealed",` +
		`"inputResponses":{"k":{"action":"accept","content":{"name":"ann"}}}}`)
	sent, err := RequestPayload("tools/call", params)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(sent); !strings.Contains(s, `"inputResponses"`) || strings.Contains(s, "sealed") || !strings.Contains(s, `"_meta":{"progressToken":1}`) {
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
		err := checkRequestMutation(&Call{Method: "tools/call"}, []byte(c.payload), sent)
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

// The _meta a mutation gives back: its own members (a client's, or ones it adds) are forwarded
// as it changed them, beside the members the gateway reads, which come back unchanged (in any
// spelling of the same value) or the mutation is malformed; one without _meta leaves the
// client's as it was.
func TestMutatedMeta(t *testing.T) {
	params := []byte(`{"_meta":{"progressToken":1,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",` +
		`"x.example/note":"secret"},"name":"a__t","arguments":{"x":1}}`)
	sent, err := RequestPayload("tools/call", params)
	if err != nil {
		t.Fatal(err)
	}
	const tp = `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`
	for _, c := range []struct {
		meta string // the mutation's _meta, "" for none
		want string // the forwarded _meta; "" for a malformed mutation
	}{
		{"", `{"progressToken":1,` + tp + `,"x.example/note":"secret"}`},
		{`{"x.example/note":"[redacted]",` + tp + `, "progressToken" : 1 }`,
			`{"progressToken":1,` + tp + `,"x.example/note":"[redacted]"}`},
		{`{"progressToken":1,` + tp + `}`, `{"progressToken":1,` + tp + `}`},
		{`{"progressToken":1,` + tp + `,"x.example/added":true}`, `{"progressToken":1,` + tp + `,"x.example/added":true}`},
		{`{"progressToken":2,` + tp + `}`, ""},
		{`{` + tp + `}`, ""},
		{`{"progressToken":1,` + tp + `,"baggage":"k=v"}`, ""},
		{`{"progressToken":1,` + tp + `,"ProgressToken":2}`, ""},
		{`{"progressToken":1,` + tp + `,"progress_token":2}`, ""},
		{`{"progressToken":1,` + tp + `,"io.modelcontextprotocol/protocolversion":"x"}`, ""},
		{`[]`, ""},
	} {
		payload := `{"method":"tools/call","params":{"name":"a__t","arguments":{"x":2}`
		if c.meta != "" {
			payload += `,"_meta":` + c.meta
		}
		payload += `}}`
		err := checkRequestMutation(&Call{Method: "tools/call"}, []byte(payload), sent)
		if (err == nil) != (c.want != "") {
			t.Errorf("%s: %v, want ok %v", c.meta, err, c.want != "")
			continue
		}
		if c.want == "" {
			continue
		}
		out, err := MutatedParams([]byte(payload), params)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(member(out, "_meta")); got != c.want || jsonrpc.Scan(out, jsonrpc.Limits{}) != nil {
			t.Errorf("%s: forwarded _meta %s, want %s (params %s)", c.meta, got, c.want, out)
		}
	}
}

// A mutation that leaves out the _meta or the answers is forwarded with the client's; what the
// interceptors after it are shown (withShown) holds them as shown, and forwarding that is
// forwarding the mutation.
func TestWithShownIsWhatIsForwarded(t *testing.T) {
	params := []byte(`{"_meta":{"progressToken":1,"x.example/note":"n"},"name":"a__t","arguments":{"x":1},"requestState":"sealed",` +
		`"inputResponses":{"k":{"action":"accept"}}}`)
	shown, err := RequestPayload("tools/call", params)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{
		`{"method":"tools/call","params":{"name":"a__t","arguments":{"x":2}}}`,
		`{"method":"tools/call","params":{ }}`,
		`{"params":{"arguments":{"x":2},"name":"a__t","inputResponses":{"k":{"action":"accept"}}},"method":"tools/call"}`,
		`{"method":"tools/call","params":{"name":"a__t","_meta":{"progressToken":1}}}`,
	} {
		got := withShown([]byte(m), shown)
		if err := checkRequestMutation(&Call{Method: "tools/call"}, got, shown); err != nil {
			t.Errorf("%s: %s is not a mutation of what was shown: %v", m, got, err)
			continue
		}
		// The mutation's own _meta is kept; without one, the client's is shown.
		if !strings.Contains(string(got), `"inputResponses":{"k":{"action":"accept"}}`) ||
			strings.Contains(m, `"_meta"`) == strings.Contains(string(got), `"x.example/note":"n"`) {
			t.Errorf("%s shown as %s", m, got)
		}
		a, err1 := MutatedParams([]byte(m), params)
		b, err2 := MutatedParams(got, params)
		if err1 != nil || err2 != nil || !sameJSON(a, b) {
			t.Errorf("%s forwarded as %s, shown as forwarded %s (%v %v)", m, a, b, err1, err2)
		}
	}
	// In a pass, a mutation without _meta keeps the one it was shown: an earlier mutator's
	// change of the client's own member is forwarded, not the client's.
	first := withShown([]byte(`{"method":"tools/call","params":{"name":"a__t","_meta":{"progressToken":1,"x.example/note":"[redacted]"}}}`), shown)
	second := withShown([]byte(`{"method":"tools/call","params":{"name":"a__t","arguments":{"x":3}}}`), first)
	out, err := MutatedParams(second, params)
	if err != nil || !strings.Contains(string(out), `"x.example/note":"[redacted]"`) || strings.Contains(string(out), `"n"`) {
		t.Errorf("the second mutation forwarded as %s (%v)", out, err)
	}
}

// TestMutationHeldToBodyLimitAsForwarded: a request mutation is measured against the client's
// body limit as it will be forwarded, with the client's _meta it leaves out put back: a mutation
// that drops a large _meta and fills the params to the limit would otherwise be forwarded
// larger than any client's request may be.
func TestMutationHeldToBodyLimitAsForwarded(t *testing.T) {
	const limit = 4 << 10
	pad := strings.Repeat("x", limit/2)
	sent := []byte(`{"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":"` + pad + `"}}}`)
	c := &Call{Method: "tools/call", MaxBytes: limit}
	fits := []byte(`{"method":"tools/call","params":{"name":"t","arguments":{"a":"` + pad[:limit/4] + `"}}}`)
	if err := checkRequestMutation(c, fits, sent); err != nil {
		t.Fatalf("a mutation within the limit with the client's _meta: %v", err)
	}
	grown := []byte(`{"method":"tools/call","params":{"name":"t","arguments":{"a":"` + pad + `"}}}`)
	if err := checkRequestMutation(c, grown, sent); !errors.Is(err, errMalformed) {
		t.Fatalf("a mutation within the limit only without the client's _meta: %v", err)
	}
}
