package mcphttp

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
)

// recordingAskBackend is an askBackend that keeps the params of the last tools/call it got.
type recordingAskBackend struct {
	askBackend
	mu   sync.Mutex
	last []byte
}

func (b *recordingAskBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("Mcp-Method") == "tools/call" {
		var msg struct {
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		b.mu.Lock()
		b.last = msg.Params
		b.mu.Unlock()
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	b.askBackend.ServeHTTP(w, r)
}

func (b *recordingAskBackend) lastParams() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// contextGateway serves a gateway over the one backend b, named be, trusted with sampling
// context when trusted.
func contextGateway(t *testing.T, b http.Handler, trusted bool) string {
	t.Helper()
	return askGatewayWith(t, Config{Search: SearchConfig{Enabled: true, AlwaysVisible: []string{"*"}}}, b, func(deps *Deps) {
		if trusted {
			deps.SamplingContext = []string{"be"}
		}
	})
}

// TestBackendSamplingAsksNoContext: a backend's sampling request that asks the client to
// include context reaches a 2026-07-28 client with includeContext "none", whatever value the
// backend gave (thisServer, allServers, a case variant, null, a number, an object) and however
// it spelled the member's name in escapes; one that spells the member another way is refused
// (-32010), and so is a duplicate; each of tools/call, prompts/get, resources/read and call_tool.
// Behind the gateway "this server" is every backend: the client's model would read the client's
// exchanges with the other backends and reply to this one. A backend trusted with context
// (samplingContext) has its request relayed as written, which then needs sampling.context.
func TestBackendSamplingAsksNoContext(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5`
	round := func(params string) string {
		return `{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"k":{"method":"sampling/createMessage","params":{` +
			params + `}}},"requestState":"backend-state"}`
	}
	b := &askBackend{}
	url := contextGateway(t, b, false)
	for _, value := range []string{`"thisServer"`, `"allServers"`, `"ALLSERVERS"`, `"this_server"`, `null`, `5`, `{"x":"allServers"}`, `["thisServer"]`} {
		for _, key := range []string{`"includeContext"`, `"include\u0043ontext"`, `"\u0069ncludeContext"`} {
			b.set(round(msgs + `,` + key + `:` + value))
			for _, c := range askCalls {
				where := key + ":" + value + " to " + c.name
				r := c.post(t, url, `{"sampling":{},"roots":{}}`)
				var res struct {
					InputRequests map[string]json.RawMessage `json:"inputRequests"`
				}
				if r.Status != http.StatusOK || r.RPC.Error != nil || json.Unmarshal(r.RPC.Result, &res) != nil {
					t.Fatalf("%s: %d %s, want the round relayed", where, r.Status, r.Body)
				}
				var k struct {
					Params map[string]json.RawMessage `json:"params"`
				}
				if json.Unmarshal(res.InputRequests["k"], &k) != nil || string(k.Params["includeContext"]) != `"none"` ||
					strings.Contains(strings.ToLower(string(r.Body)), "servers") || strings.Contains(strings.ToLower(string(r.Body)), "thisserver") ||
					strings.Contains(string(r.Body), "this_server") || res.InputRequests["a"] == nil {
					t.Fatalf("%s: relayed %s, want includeContext none and nothing else of the ask's context", where, r.Body)
				}
			}
		}
	}
	for _, tt := range []struct{ name, params string }{
		{"spelt another way", msgs + `,"IncludeContext":"allServers"`},
		{"spelt another way beside none", msgs + `,"includeContext":"none","include_context":"allServers"`},
		{"duplicate", msgs + `,"includeContext":"none","includeContext":"allServers"`},
	} {
		b.set(round(tt.params))
		r := askCalls[0].post(t, url, `{"sampling":{"context":{}},"roots":{}}`)
		if r.RPC.Error == nil || r.Status != http.StatusBadGateway || strings.Contains(string(r.Body), "allServers") || strings.Contains(string(r.Body), "backend-state") {
			t.Fatalf("%s: %d %s, want 502 and nothing of the round", tt.name, r.Status, r.Body)
		}
	}

	trusted := &askBackend{}
	turl := contextGateway(t, trusted, true)
	trusted.set(round(msgs + `,"includeContext":"thisServer"`))
	r := askCalls[0].post(t, turl, `{"sampling":{"context":{}},"roots":{}}`)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"includeContext":"thisServer"`) {
		t.Fatalf("trusted: %d %s, want the round relayed as written", r.Status, r.Body)
	}
	r = askCalls[0].post(t, turl, `{"sampling":{},"roots":{}}`)
	if r.Status != http.StatusBadRequest || r.RPC.Error == nil || r.RPC.Error.Code != -32021 || !strings.Contains(string(r.RPC.Error.Data), `"context"`) {
		t.Fatalf("trusted, context not declared: %d %s, want -32021 naming sampling.context", r.Status, r.Body)
	}
}

// TestBackendNotToldOfSamplingContext: the clientCapabilities a backend receives declare no
// sampling.context, in any spelling a case-folding backend reads as it ("Sampling", "CONTEXT",
// escapes), the rest of them as the client wrote them; a backend trusted with context gets them as they
// are.
func TestBackendNotToldOfSamplingContext(t *testing.T) {
	b := &recordingAskBackend{}
	b.set(`{"resultType":"complete","content":[]}`)
	url := contextGateway(t, b, false)
	for _, tt := range []struct{ caps, want string }{
		{`{"sampling":{"context":{},"tools":{}},"roots":{}}`, `{"sampling":{"tools":{}},"roots":{}}`},
		{`{"sampling":{"context":{}}}`, `{"sampling":{}}`},
		{`{"sampling":{"Context":{}},"elicitation":{"form":{}}}`, `{"sampling":{},"elicitation":{"form":{}}}`},
		{`{"Sampling":{"CONTEXT":{},"tools":{}}}`, `{"Sampling":{"tools":{}}}`},
		{`{"sampling":{"con_text":{}}}`, `{"sampling":{}}`},
		{`{"sampling":{"con\u0074ext":{},"tools":{}}}`, `{"sampling":{"tools":{}}}`},
		{`{"s\u0061mpling":{"context":{}}}`, `{"sampling":{}}`},
		{`{"sampling":{"tools":{}}}`, `{"sampling":{"tools":{}}}`},
	} {
		r := askCalls[0].post(t, url, tt.caps)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", tt.caps, r.Status, r.Body)
		}
		if got := forwardedCaps(t, b.lastParams()); got != tt.want {
			t.Errorf("declaring %s: the backend got %s, want %s", tt.caps, got, tt.want)
		}
	}
	tb := &recordingAskBackend{}
	tb.set(`{"resultType":"complete","content":[]}`)
	turl := contextGateway(t, tb, true)
	if r := askCalls[0].post(t, turl, `{"sampling":{"context":{}}}`); r.Status != http.StatusOK {
		t.Fatalf("trusted: %d %s", r.Status, r.Body)
	}
	if got := forwardedCaps(t, tb.lastParams()); got != `{"sampling":{"context":{}}}` {
		t.Errorf("trusted: the backend got %s, want sampling.context kept", got)
	}
}

// forwardedCaps is the clientCapabilities in the _meta of params, compact.
func forwardedCaps(t *testing.T, params []byte) string {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatalf("forwarded params %s: %v", params, err)
	}
	return string(p.Meta["io.modelcontextprotocol/clientCapabilities"])
}

// TestMutatedRoundAsksNoContext: an interceptor's response phase that puts context into a
// round's sampling request (a backend that asked for none, mutated to "allServers") does not get
// it to the client: the rewrite reads the round as the client will get it.
func TestMutatedRoundAsksNoContext(t *testing.T) {
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "m", Type: intercept.TypeMutation,
		Handle: replace(`"includeContext":"none"`, `"includeContext":"allServers"`)}})
	b := &askBackend{}
	b.set(`{"resultType":"input_required","inputRequests":{"k":{"method":"sampling/createMessage","params":{` +
		`"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5,"includeContext":"none"}}},"requestState":"backend-state"}`)
	url := askGateway(t, Config{}, b, governs("m", ics.URL(), intercept.TypeMutation, "response", []string{"*"}, nil, nil))
	r := askCalls[0].post(t, url, `{"sampling":{"context":{}}}`)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"includeContext":"none"`) || strings.Contains(string(r.Body), "allServers") {
		t.Fatalf("%d %s, want the round relayed with includeContext none", r.Status, r.Body)
	}
	if len(ics.Invocations()) == 0 {
		t.Fatal("the interceptor was not invoked")
	}
}
