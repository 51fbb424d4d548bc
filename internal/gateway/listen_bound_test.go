package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestListensBoundedPerCaller: a listen keeps its subscriptions and a queue for as long as the
// caller's token lasts, so one caller holds at most server.maxListensPerCaller of them on a
// replica, a pre-2026 client's GET streams included, and a listen's params are at most 64 KiB.
// Past the bound a listen, or a GET stream, is refused with 429 -32012 and Retry-After; another
// caller listens meanwhile, and a listen closed gives its place back.
func TestListensBoundedPerCaller(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "alpha", Tools: []string{"*"},
			Resources: []string{"**"}, AnyScope: []string{"tools:use"}}}
		c.Server.MaxListensPerCaller = 2
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	alice, bob := mintFor(t, iss, "alice"), mintFor(t, iss, "bob")
	const subs = `{"resourceSubscriptions":["alpha+mem://readme"]}`
	acknowledged := func(events <-chan string) bool {
		return strings.Contains(<-events, "notifications/subscriptions/acknowledged")
	}
	// try opens a listen; a refusal is read whole, a stream is left open until the test ends.
	try := func(tok, notifications string) (int, http.Header, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{`+testMeta+`,"notifications":`+notifications+`}}`))
		req.Header = modernHeaders("subscriptions/listen", "")
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = res.Body.Close() })
		if res.StatusCode == http.StatusOK {
			return res.StatusCode, res.Header, ""
		}
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}

	// Alice's pre-2026 client holds a GET stream, her 2026-07-28 client a listen.
	legacy := &legacyclient.Raw{Token: alice}
	sid := legacy.Initialize(t, url)
	openGet := func() *http.Response { return legacy.OpenGet(t, url, sid) }
	if res := openGet(); res.StatusCode != http.StatusOK {
		t.Fatalf("alice's GET stream: %d", res.StatusCode)
	}
	mcptest.WaitFor(t, "the GET stream listens", func() bool { return len(alpha.RequestsOf("subscriptions/listen")) == 1 })
	ctx, closeFirst := context.WithCancel(t.Context())
	defer closeFirst()
	if !acknowledged(listen(t, ctx, gw, subs, alice)) {
		t.Fatal("alice's listen within her bound was not acknowledged")
	}

	status, hdr, body := try(alice, subs)
	if status != http.StatusTooManyRequests || !strings.Contains(body, "-32012") ||
		!strings.Contains(body, "Too many open listens") || hdr.Get("Retry-After") == "" {
		t.Fatalf("alice's third stream: %d, Retry-After %q: %.300s", status, hdr.Get("Retry-After"), body)
	}
	// A GET stream over the bound is refused before it starts.
	if res := openGet(); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("alice's GET stream over her bound: %d %.300s", res.StatusCode, b)
	} else if b, _ := io.ReadAll(res.Body); !strings.Contains(string(b), "Too many open listens") {
		t.Fatalf("alice's GET stream over her bound: %.300s", b)
	}
	if !acknowledged(listen(t, t.Context(), gw, subs, bob)) {
		t.Fatal("bob's listen was not served while alice is at her bound")
	}

	// A listen's params are bounded whoever listens: 70 KiB of subscriptions.
	many := `{"resourceSubscriptions":["alpha+mem://` + strings.Repeat("x", 70<<10) + `"]}`
	if status, _, body := try(bob, many); !strings.Contains(body, "-32602") || !strings.Contains(body, "65536 bytes") {
		t.Fatalf("a listen of 70 KiB: %d %.300s", status, body)
	}

	closeFirst()
	mcptest.WaitFor(t, "alice listens again once she closed one", func() bool {
		status, _, _ := try(alice, subs)
		return status != http.StatusTooManyRequests
	})
}
