package gateway

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestTokenExchangeIssuers: with two issuers the policy lets call a token-exchange backend, the
// backend's token service receives only the tokens of the issuer its auth.subjectIssuers
// lists. A caller of the other issuer is answered 403 / -32013 on a call and does not see the
// backend's tools in its list; its token reaches no token endpoint and the backend nothing.
// The configuration refuses such a backend without subjectIssuers when there are several
// issuers, and an issuer it does not accept; with one issuer it takes that one.
func TestTokenExchangeIssuers(t *testing.T) {
	t.Parallel()
	own, partner := newExchangeIssuer(t), newIssuer(t)
	var exchanges atomic.Int64
	target, _ := url.Parse(own.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if f, _ := url.ParseQuery(string(body)); f.Get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" {
			exchanges.Add(1) // the gateway's own requests use client credentials
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(tokenSrv.Close)
	ex := mcptest.StartServer(t, "ex")
	plain := mcptest.StartServer(t, "plain")
	configure := func(c *Config) {
		trustIssuers(c, own, partner)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"}, AnyScope: []string{"tools:use"},
			Issuers: []string{own.URL(), partner.URL()}}}
		u := exchangeUpstream("ex", ex.URL(), own)
		u.Auth.TokenURL = tokenSrv.URL + strings.TrimPrefix(own.TokenURL(), own.URL())
		u.Auth.SubjectIssuers = []string{own.URL()}
		c.Upstreams = append(c.Upstreams, u)
	}
	gw, logs, stop := startLoggedGateway(t, configure, plain)
	defer stop()

	outsider := mintFor(t, partner, "mallory")
	status, res := rawCall(t, gw, outsider, "ex__"+mcptest.ToolWhoAmI, `{}`, "")
	if status != http.StatusForbidden || res.Error == nil || res.Error.Code != jsonrpc.CodeUnauthorized {
		t.Errorf("a call of the partner's caller: %d %+v, want 403 -32013", status, res.Error)
	}
	names := toolNames(t, mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(outsider)))
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "ex__") }) || !slices.Contains(names, "plain__"+mcptest.ToolWhoAmI) {
		t.Errorf("the partner's caller lists %v: want plain's tools and none of ex's", names)
	}
	if n := exchanges.Load(); n != 0 {
		t.Errorf("%d token exchanges for the partner's caller", n)
	}
	if n := len(ex.RequestsOf("tools/call")) + len(ex.RequestsOf("tools/list")); n != 0 {
		t.Errorf("the backend received %d requests for the partner's caller", n)
	}

	insider := mintFor(t, own, "alice")
	if status, res := rawCall(t, gw, insider, "ex__"+mcptest.ToolWhoAmI, `{}`, ""); status != http.StatusOK || res.Error != nil {
		t.Fatalf("a call of the listed issuer's caller: %d %+v", status, res.Error)
	}
	if exchanges.Load() == 0 {
		t.Error("the listed issuer's caller's call made no exchange")
	}
	// The log is written behind the requests (a queue drained in batches): stopping the gateway
	// writes out every line before it is searched.
	stop()
	if strings.Contains(logs.String(), outsider) {
		t.Error("the caller's token is in the log")
	}

	t.Run("configuration", func(t *testing.T) {
		c := testConfig("info", "text", plain)
		configure(c)
		c.applyDefaults()
		c.Upstreams[1].Auth.SubjectIssuers = nil
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), "upstreams[1].auth.subjectIssuers: required for tokenExchange with several issuers") {
			t.Errorf("several issuers, no subjectIssuers: %v", err)
		}
		c.Upstreams[1].Auth.SubjectIssuers = []string{own.URL() + "/"}
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), "upstreams[1].auth.subjectIssuers[0]") {
			t.Errorf("an issuer not configured: %v", err)
		}
		trustIssuers(c, own)
		c.Auth.Policy.Rules[0].Issuers = nil
		c.Upstreams[1].Auth.SubjectIssuers = nil
		if err := c.validate(); err != nil {
			t.Fatalf("one issuer, no subjectIssuers: %v", err)
		}
		up := c.upstreamsConfig(c.placeholderSecrets())
		if got := up.Upstreams[1].Auth.SubjectIssuers; !slices.Equal(got, []string{own.URL()}) {
			t.Errorf("one issuer: subjectIssuers %v, want the issuer", got)
		}
	})
}
