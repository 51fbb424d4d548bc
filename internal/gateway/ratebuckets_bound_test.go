package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestRateBucketsBoundedPerCaller: a rule's rate limit keeps a bucket per caller and per item
// the rule names; every name a wildcard covers shares the wildcard's bucket. Otherwise each name
// under `tools: ["*"]` made the store keep one more bucket (and escaped the limit; a name the
// backend does not list is now refused before any bucket, as an unknown tool): here the third
// tool under the wildcard is refused with 429 -32012 and Retry-After, nothing is forwarded for
// it, a tool the rules name literally keeps a bucket of its own, and another caller is served
// meanwhile.
func TestRateBucketsBoundedPerCaller(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "add-limited", Upstream: "alpha", Tools: []string{"add"}, AnyScope: []string{"tools:use"}, RateLimit: "1/h"},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}, RateLimit: "2/h"},
		}
	}, alpha)
	alice, bob := mintFor(t, iss, "alice"), mintFor(t, iss, "bob")
	call := func(tok, name string) (int, http.Header, string) {
		h := modernHeaders("tools/call", name)
		h.Set("Authorization", "Bearer "+tok)
		return post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+
			`,"name":"`+name+`","arguments":{"a":1,"b":2}}}`)
	}
	limited := func(status int, hdr http.Header, body string) bool {
		return status == http.StatusTooManyRequests && hdr.Get("Retry-After") != "" && strings.Contains(body, "-32012")
	}
	for _, name := range []string{"alpha__echo", "alpha__whoami"} {
		if status, hdr, body := call(alice, name); limited(status, hdr, body) {
			t.Fatalf("alice's call of %s within the rule's limit: %d %.200s", name, status, body)
		}
	}
	alpha.Reset()
	if status, hdr, body := call(alice, "alpha__fail"); !limited(status, hdr, body) {
		t.Fatalf("alice's third tool under the wildcard: %d %.300s", status, body)
	}
	if n := len(alpha.Forwarded()); n != 0 {
		t.Errorf("the refused call reached the backend (%d requests)", n)
	}
	if status, hdr, body := call(alice, "alpha__add"); limited(status, hdr, body) || !strings.Contains(body, `"3"`) {
		t.Fatalf("alice's first call of a tool named literally: %d %.300s", status, body)
	}
	if status, hdr, body := call(alice, "alpha__add"); !limited(status, hdr, body) {
		t.Fatalf("alice's second call of add (1/h): %d %.300s", status, body)
	}
	if status, hdr, body := call(bob, "alpha__fail"); limited(status, hdr, body) {
		t.Fatalf("bob while alice is limited: %d %.300s", status, body)
	}
}
