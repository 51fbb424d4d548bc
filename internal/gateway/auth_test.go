package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

const testResource = "https://mcp.test.invalid/mcp"

type authFixture struct {
	authGateway
	alpha, beta *mcptest.Server
}

// startAuthGateway fronts two backends with authentication by a real issuer served over HTTP
// and this policy:
//
//	read:     alpha echo, add       needs any of tools:read
//	write:    alpha progress        needs tools:write
//	sre:      beta *                needs groups ∋ sre
//	no-fail:  deny fail everywhere
func startAuthGateway(t *testing.T) *authFixture {
	t.Helper()
	return startAuthGatewayWith(t, nil)
}

// startAuthGatewayWith is startAuthGateway with further changes to the configuration.
func startAuthGatewayWith(t *testing.T, mutate func(*Config)) *authFixture {
	t.Helper()
	f := &authFixture{authGateway: authGateway{iss: newIssuer(t)}, alpha: mcptest.StartServer(t, "alpha"), beta: mcptest.StartServer(t, "beta")}
	f.gw = startTestGateway(t, func(c *Config) {
		trustIssuers(c, f.iss)
		c.Auth.ResourceMetadata.ScopesSupported = []string{"tools:read", "tools:write"}
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-fail", Upstream: "*", Tools: []string{"fail"}, Effect: "deny"},
			{ID: "read", Upstream: "alpha", Tools: []string{"echo", "add"}, AnyScope: []string{"tools:read"}},
			{ID: "write", Upstream: "alpha", Tools: []string{"progress"}, AllScopes: []string{"tools:write"}},
			{ID: "sre", Upstream: "beta", Tools: []string{"*"}, Claims: map[string][]string{"groups": {"sre"}}},
		}
		if mutate != nil {
			mutate(c)
		}
	}, f.alpha, f.beta)
	return f
}

// TestPolicyListsAndCalls: lists show exactly what calls allow, per caller, through the go-sdk
// client sending a bearer token.
func TestPolicyListsAndCalls(t *testing.T) {
	f := startAuthGateway(t)
	reader := f.token(t, devissuer.Claims{"sub": "reader", "scope": "tools:read"})
	sre := f.token(t, devissuer.Claims{"sub": "sre", "scope": "tools:read tools:write", "groups": []string{"sre"}})
	ctx := context.Background()

	tests := []struct {
		name    string
		token   string
		visible []string
	}{
		{"reader", reader, []string{"alpha__add", "alpha__echo"}},
		{"sre", sre, []string{"alpha__add", "alpha__echo", "alpha__progress", "beta__add", "beta__ask_name", "beta__echo", "beta__progress", "beta__slow", "beta__whoami"}},
	}
	all := []string{"alpha__add", "alpha__echo", "alpha__progress", "alpha__fail", "alpha__whoami", "beta__echo", "beta__fail", "beta__add"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := mcptest.Connect(t, f.url(), mcptest.WithBearer(tt.token))
			got := toolNames(t, cs)
			for _, n := range tt.visible {
				if !contains(got, n) {
					t.Errorf("tools/list lacks %s: %v", n, got)
				}
			}
			// Every listed tool is callable and every hidden one is refused: lists and calls agree.
			for _, name := range all {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x", "a": 1, "b": 2, "steps": 1}})
				if listed := contains(got, name); listed != (err == nil) {
					t.Errorf("%s: listed=%v but call err=%v", name, listed, err)
				}
			}
		})
	}
}

// TestAttackTable: every hostile or insufficient credential gets the exact status and challenge,
// and the backend receives nothing.
func TestAttackTable(t *testing.T) {
	f := startAuthGateway(t)
	other := newIssuer(t)
	mint := func(fn func() (string, error)) string {
		tok, err := fn()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	valid := f.token(t, devissuer.Claims{"scope": "tools:read"})
	now := time.Now()
	tests := []struct {
		name      string
		auth      string // the Authorization header; "" for none
		query     string
		tool      string
		status    int
		challenge string // a substring of WWW-Authenticate
		code      int
	}{
		{"no token", "", "", "alpha__echo", 401, `resource_metadata="https://mcp.test.invalid/.well-known/oauth-protected-resource/mcp"`, -32013},
		{"basic scheme", "Basic dXNlcjpwYXNz", "", "alpha__echo", 401, `resource_metadata="https://mcp.test.invalid/.well-known/oauth-protected-resource/mcp"`, -32013},
		{"bearer without token", "Bearer", "", "alpha__echo", 401, "Bearer", -32013},
		{"garbage token", "Bearer not.a.jwt", "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"alg none", "Bearer " + mint(func() (string, error) { return f.iss.MintNone(devissuer.Claims{"scope": "tools:read"}) }), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"HS256 with the public key", "Bearer " + mint(func() (string, error) { return f.iss.MintHS256WithPublicKey(devissuer.Claims{"scope": "tools:read"}) }), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"wrong issuer", "Bearer " + mint(func() (string, error) { return other.Mint(devissuer.Claims{"scope": "tools:read"}) }), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"wrong audience", "Bearer " + f.token(t, devissuer.Claims{"aud": "https://other.invalid/mcp", "scope": "tools:read"}), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"expired", "Bearer " + f.token(t, devissuer.Claims{"exp": now.Add(-time.Hour).Unix(), "scope": "tools:read"}), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"not yet valid", "Bearer " + f.token(t, devissuer.Claims{"nbf": now.Add(time.Hour).Unix(), "scope": "tools:read"}), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"issued in the future", "Bearer " + f.token(t, devissuer.Claims{"iat": now.Add(time.Hour).Unix(), "exp": now.Add(2 * time.Hour).Unix(), "scope": "tools:read"}), "", "alpha__echo", 401,
			`error="invalid_token", error_description="The access token was issued in the future"`, -32013},
		{"typed as a logout token", "Bearer " + mint(func() (string, error) {
			return f.iss.MintHeader(devissuer.Claims{"typ": "logout+jwt"}, devissuer.Claims{"scope": "tools:read"})
		}), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		// Issued before the gateway fetched the key set, which therefore answers for it (a kid
		// newer than the set is retried, not refused: TestKeyRotationWhileIssuerDown).
		{"unknown key id", "Bearer " + mint(func() (string, error) {
			return f.iss.MintUnknownKey(devissuer.Claims{"scope": "tools:read", "iat": now.Add(-time.Hour).Unix()})
		}), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"tampered signature", "Bearer " + devissuer.TamperSignature(valid), "", "alpha__echo", 401, `error="invalid_token"`, -32013},
		{"token in the query", "", "access_token=" + url.QueryEscape(valid), "alpha__echo", 400, `error="invalid_request"`, -32013},
		// Every spelling some query parser reads as an access_token parameter, though Go's drops
		// the pair (a ';' in it, an escape that does not decode) or decodes its name.
		{"token in the query after a semicolon", "", "x=1;access_token=" + url.QueryEscape(valid), "alpha__echo", 400, `error="invalid_request"`, -32013},
		{"token in the query with a bad escape", "", "access_token=" + url.QueryEscape(valid) + "%zz", "alpha__echo", 400, `error="invalid_request"`, -32013},
		{"token in the query, its name escaped", "", "access%5Ftoken=" + url.QueryEscape(valid), "alpha__echo", 400, `error="invalid_request"`, -32013},
		{"token in the query beside the header", "Bearer " + valid, "x=1;access_token=" + url.QueryEscape(valid), "alpha__echo", 400, `error="invalid_request"`, -32013},
		{"step-up for a stronger scope", "Bearer " + valid, "", "alpha__progress", 403, `error="insufficient_scope", scope="tools:write"`, -32013},
		{"tool outside the allowlist", "Bearer " + valid, "", "beta__echo", 400, "", -32602},
		{"denied tool", "Bearer " + valid, "", "alpha__fail", 400, "", -32602},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.alpha.Reset()
			f.beta.Reset()
			h := modernHeaders("tools/call", tt.tool)
			if tt.auth != "" {
				h.Set("Authorization", tt.auth)
			}
			u := f.url()
			if tt.query != "" {
				u += "?" + tt.query
			}
			status, hdr, body := post(t, u, h, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+testMeta+`,"name":"`+tt.tool+`","arguments":{"text":"x","steps":1}}}`)
			if status != tt.status {
				t.Fatalf("status = %d, want %d: %s", status, tt.status, body)
			}
			if ch := hdr.Get("WWW-Authenticate"); !strings.Contains(ch, tt.challenge) {
				t.Errorf("WWW-Authenticate = %q, want it to contain %q", ch, tt.challenge)
			}
			var rpc struct {
				ID    int                `json:"id"`
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &rpc); err != nil || rpc.Error.Code != tt.code || rpc.ID != 7 {
				t.Errorf("body = %s, want code %d and id 7", body, tt.code)
			}
			if n := len(f.alpha.Forwarded()) + len(f.beta.Forwarded()); n != 0 {
				t.Errorf("backends received %d requests", n)
			}
		})
	}
}

func TestProtectedResourceMetadata(t *testing.T) {
	f := startAuthGateway(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		res, err := http.Get("http://" + f.gw.MCP + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc authz.ProtectedResourceMetadata
		err = json.NewDecoder(res.Body).Decode(&doc)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || doc.Resource != testResource ||
			len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != f.iss.URL() {
			t.Fatalf("%s: status %d doc %+v err %v", path, res.StatusCode, doc, err)
		}
		if res.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s is not readable cross-origin", path)
		}
	}
}

// TestIssuerDown: a token signed with a key the gateway does not have (the issuer rotated its
// keys) cannot be verified while the issuer is down; the answer is 503 (retryable), never a 401
// nor an allow. Tokens signed with the keys fetched before the outage are still verified.
func TestIssuerDown(t *testing.T) {
	f := startAuthGateway(t)
	mcptest.WaitFor(t, "the issuer's keys fetched", func() bool { return readyzOK(http.DefaultClient, "http://"+f.gw.Admin+"/readyz") == nil })
	known := f.token(t, devissuer.Claims{"scope": "tools:read"})
	if _, err := f.iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	unknown := f.token(t, devissuer.Claims{"scope": "tools:read"})
	f.iss.SetDown(true)
	list := func(tok string) (int, http.Header, string) {
		h := modernHeaders("tools/list", "")
		h.Set("Authorization", "Bearer "+tok)
		return post(t, f.url(), h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
	}
	if status, hdr, body := list(unknown); status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(body, "-32014") {
		t.Fatalf("issuer down, key unknown: %d %s %v", status, body, hdr)
	}
	if status, _, body := list(known); status != http.StatusOK {
		t.Fatalf("issuer down, key fetched before: %d %s", status, body)
	}
}

// TestExplain: the admin listener says which rule decides for a token or for given claims.
func TestExplain(t *testing.T) {
	f := startAuthGatewayWith(t, func(c *Config) { c.Admin.Explain.Enabled = true })
	tok := f.token(t, devissuer.Claims{"scope": "tools:read"})
	tests := []struct {
		body, effect, rule string
		status             int
	}{
		{`{"token":"` + tok + `","kind":"tool","upstream":"alpha","name":"echo"}`, "allow", "read", 200},
		{`{"token":"` + tok + `","kind":"tool","upstream":"alpha","name":"progress"}`, "step_up", "write", 200},
		{`{"claims":{"sub":"x","groups":["sre"]},"kind":"tool","upstream":"beta","name":"echo"}`, "allow", "sre", 200},
		{`{"claims":{"sub":"x"},"kind":"tool","upstream":"alpha","name":"fail"}`, "hidden", "no-fail", 200},
		{`{"token":"garbage","kind":"tool","upstream":"alpha","name":"echo"}`, "", "", 422},
		{`{"kind":"tool","upstream":"alpha","name":"echo"}`, "", "", 400},
	}
	for _, tt := range tests {
		status, _, body := post(t, "http://"+f.gw.Admin+"/authz/explain", http.Header{"Content-Type": {"application/json"}}, tt.body)
		if status != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.body, status, tt.status, body)
			continue
		}
		if tt.status != 200 {
			continue
		}
		var ex struct {
			Decision struct {
				Effect any    `json:"effect"`
				RuleID string `json:"ruleId"`
			} `json:"decision"`
		}
		if err := json.Unmarshal([]byte(body), &ex); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ex.Decision.Effect) != tt.effect || ex.Decision.RuleID != tt.rule {
			t.Errorf("%s: decision %s", tt.body, body)
		}
	}
}

// TestOtherSchemesChallengeWithoutError: a request whose Authorization is in a scheme the gateway
// does not take (Basic, Digest, Negotiate, DPoP where no issuer accepts DPoP-bound tokens) has
// "attempted using an unsupported authentication method" and gets the challenge of a request
// without credentials, which names no error code (RFC 6750 §3.1), so its client starts the
// authorization the metadata describes; the Bearer scheme with a malformed or invalid token
// gets invalid_token. Nothing reaches a backend.
func TestOtherSchemesChallengeWithoutError(t *testing.T) {
	f := startAuthGateway(t)
	const challenge = `Bearer resource_metadata="https://mcp.test.invalid/.well-known/oauth-protected-resource/mcp", scope="tools:read tools:write"`
	for _, tt := range []struct{ auth, want string }{
		{"Basic dXNlcjpwYXNz", challenge},
		{`Digest username="a", realm="mcp", nonce="n", uri="/mcp", response="r"`, challenge},
		{"Negotiate YIIBhgYGKwYBBQUCoII=", challenge},
		{"DPoP " + f.token(t, devissuer.Claims{"scope": "tools:read"}), challenge},
		{"Bearerx abc", challenge},
		{"Bearer", challenge + `, error="invalid_token", error_description="The access token is malformed"`},
		{"Bearer\tabc", challenge + `, error="invalid_token", error_description="The access token is malformed"`},
		{"Bearer not.a.jwt", challenge + `, error="invalid_token", error_description="The access token is malformed"`},
	} {
		name, _, _ := strings.Cut(tt.auth, " ")
		t.Run(name, func(t *testing.T) {
			f.alpha.Reset()
			h := modernHeaders("tools/call", "alpha__echo")
			h.Set("Authorization", tt.auth)
			status, hdr, body := post(t, f.url(), h, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__echo","arguments":{"text":"x"}}}`)
			if got := hdr.Values("WWW-Authenticate"); status != http.StatusUnauthorized || len(got) != 1 || got[0] != tt.want {
				t.Fatalf("%d %q %s, want 401 with %q", status, got, body, tt.want)
			}
			if n := len(f.alpha.Forwarded()); n != 0 {
				t.Errorf("the backend received %d requests", n)
			}
		})
	}
}

// TestNotificationAuthenticated: a 2026-07-28 notification, which the gateway drops, is
// authenticated like any request: without a token, with a malformed one or one the issuer did
// not sign, it is answered 401 with the challenge (MCP authorization: every HTTP request
// carries the token, a failing one is 401), and only a caller with a valid token gets 202.
// Nothing reaches a backend either way. Before, every notification was 202 before any check.
func TestNotificationAuthenticated(t *testing.T) {
	f := startAuthGateway(t)
	const body = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{` + testMeta + `,"requestId":7}}`
	for _, tt := range []struct {
		name, auth string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"malformed", "Bearer not.a.jwt", http.StatusUnauthorized},
		{"foreign", "Bearer " + mint(t, newIssuer(t), devissuer.Claims{"scope": "tools:read"}), http.StatusUnauthorized},
		{"valid", "Bearer " + f.token(t, devissuer.Claims{"scope": "tools:read"}), http.StatusAccepted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.alpha.Reset()
			h := modernHeaders("notifications/cancelled", "")
			if tt.auth != "" {
				h.Set("Authorization", tt.auth)
			}
			status, hdr, got := post(t, f.url(), h, body)
			if status != tt.want {
				t.Fatalf("%d %s, want %d", status, got, tt.want)
			}
			if challenged := len(hdr.Values("WWW-Authenticate")) == 1; challenged != (tt.want == http.StatusUnauthorized) {
				t.Errorf("WWW-Authenticate %q on a %d", hdr.Values("WWW-Authenticate"), status)
			}
			if n := len(f.alpha.Forwarded()); n != 0 {
				t.Errorf("the backend received %d requests", n)
			}
		})
	}
}
