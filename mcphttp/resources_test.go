package mcphttp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestHiddenResourceAnswer: a backend result reduced to nothing by the caller's resource policy
// is answered (in upstreams) exactly as the gateway answers a hidden or unknown resource
// itself, naming the URI the caller sent, so a caller cannot tell a link to a hidden resource
// from the hidden resource. The bare answer, for a request whose URI is not known, is the same
// on both sides too.
func TestHiddenResourceAnswer(t *testing.T) {
	e := errUnknownName(kindNoun(upstreams.KindResource))
	if e.Status != http.StatusBadRequest || e.RPC.Code != jsonrpc.CodeInvalidParams || e.RPC.Message != upstreams.HiddenResourceMessage {
		t.Fatalf("hidden resource: %d %d %q; upstreams answers 400 %d %q",
			e.Status, e.RPC.Code, e.RPC.Message, jsonrpc.CodeInvalidParams, upstreams.HiddenResourceMessage)
	}
	s, _ := testServer(t, Config{}, oneBackend("http://127.0.0.1:1/mcp"), upstreams.Options{}, Deps{})
	for _, uri := range []string{"be+mem://readme", "be+mem://a\u0007b\u202e\n", `be+mem://"q"`, "be+mem://" + strings.Repeat("é", 100), "nope"} {
		x := &request{shared: shared{s: s}}
		x.in.h = &handler{target: callKind(upstreams.KindResource)}
		x.in.params = &jsonrpc.Params{URI: uri}
		got := mapError(namedUnknown(x, errUnknownName("resource")))
		if got.Status != http.StatusBadRequest || got.RPC.Message != upstreams.UnknownResourceMessage(uri) {
			t.Errorf("%q: %d %q; upstreams answers 400 %q", uri, got.Status, got.RPC.Message, upstreams.UnknownResourceMessage(uri))
		}
		if strings.ContainsAny(got.RPC.Message, "\x07\n\u202e") || len(got.RPC.Message) > 200 {
			t.Errorf("%q: %q names the URI unescaped or unbounded", uri, got.RPC.Message)
		}
	}
}

// TestRawUnknownNameNamed: a stage that returns upstreams.ErrUnknownName as upstreams gave it,
// which mapError alone answers "unknown name", is answered as an unknown tool, prompt or
// resource is by any other stage: naming what the caller sent, with the <backend>__<name> hint,
// byte for byte the answer a hidden or missing one gets.
func TestRawUnknownNameNamed(t *testing.T) {
	s, _ := testServer(t, Config{}, oneBackend("http://127.0.0.1:1/mcp"), upstreams.Options{}, Deps{})
	for _, tt := range []struct {
		kind upstreams.Kind
		name string
		want string
	}{
		{upstreams.KindTool, "echo", `Invalid params: unknown tool "echo": tools are named <backend>__<tool>`},
		{upstreams.KindPrompt, "be__greet", `Invalid params: unknown prompt "be__greet"`},
		{upstreams.KindResource, "be+mem://x", `Invalid params: unknown resource "be+mem://x"`},
	} {
		x := &request{shared: shared{s: s}}
		x.in.h = &handler{target: callKind(tt.kind)}
		x.in.params = &jsonrpc.Params{Name: tt.name, URI: tt.name}
		raw := mapError(namedUnknown(x, fmt.Errorf("%w: not listed", upstreams.ErrUnknownName)))
		named := mapError(namedUnknown(x, errUnknownName(kindNoun(tt.kind))))
		if raw.Status != http.StatusBadRequest || raw.RPC.Message != tt.want || named.RPC.Message != tt.want {
			t.Errorf("%s: raw %d %q, a stage's own %q; want 400 %q", tt.name, raw.Status, raw.RPC.Message, named.RPC.Message, tt.want)
		}
	}
}
