package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// adminRequest sends one request to the admin listener with the given Host and headers.
func adminRequest(t *testing.T, method, url, host string, h http.Header, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestAdminListenerDefaults: without configuration the admin listener binds loopback only, and
// check-config refuses the policy explainer on an open admin listener without a secret.
func TestAdminListenerDefaults(t *testing.T) {
	var c Config
	c.applyDefaults()
	if !IsLoopbackAddr(c.Admin.Listen) {
		t.Errorf("default admin.listen %q is not loopback-only", c.Admin.Listen)
	}
	if c.Admin.Explain.Enabled {
		t.Error("the explainer is on by default")
	}
	tests := []struct {
		yaml, wantErr string
	}{
		{"admin: {listen: \":9090\", explain: {enabled: true}}\n", "needs admin.explain.secret"},
		{"admin: {listen: \"0.0.0.0:9090\", explain: {enabled: true}}\n", "needs admin.explain.secret"},
		{"admin: {listen: \":9090\", explain: {enabled: true, secret: {file: /s, env: X}}}\n", "admin.explain.secret: exactly one"},
		{"admin: {listen: \":9090\", token: {file: /run/admin}, explain: {enabled: true, secret: {file: /run/explain}}}\n", ""},
		{"admin: {listen: \"127.0.0.1:9090\", explain: {enabled: true}}\n", ""},
		{"admin: {listen: \":9090\", token: {file: /run/admin}}\n", ""},
	}
	for _, tt := range tests {
		checkAdminYAML(t, tt.yaml, tt.wantErr)
	}
}

// TestAdminListenerRequests: the real gateway's admin listener on loopback refuses a foreign Host
// (DNS rebinding) and any browser Origin, refuses bodies not declared JSON, hides the explainer
// unless it is switched on, and then asks for its secret.
func TestAdminListenerRequests(t *testing.T) {
	const secret = "explain-secret-for-test"
	off := startAuthGateway(t)
	on := startAuthGatewayWith(t, func(c *Config) {
		c.Admin.Explain.Enabled = true
		c.Admin.Explain.Secret = Secret{Value: secret}
	})
	// Ready once the issuer's keys are fetched, which start-up begins in the background.
	mcptest.WaitFor(t, "the gateway ready", func() bool { return readyzOK(http.DefaultClient, "http://"+off.gw.Admin+"/readyz") == nil })
	tok := on.token(t, nil)
	explainBody := `{"token":"` + tok + `","kind":"tool","upstream":"alpha","name":"echo"}`
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	withAuth := func(h http.Header, v string) http.Header {
		out := http.Header{"Authorization": {v}}
		for k, vs := range h {
			out[k] = vs
		}
		return out
	}
	bearer := "Bearer " + secret
	tests := []struct {
		name         string
		gw           Listeners
		method, path string
		host         string
		header       http.Header
		body         string
		want         int
	}{
		{"metrics on loopback", off.gw, http.MethodGet, "/metrics", "", nil, "", 200},
		{"metrics via localhost", off.gw, http.MethodGet, "/readyz", "localhost:9090", nil, "", 200},
		{"rebinding host metrics", off.gw, http.MethodGet, "/metrics", "evil.example:9090", nil, "", 403},
		{"rebinding host readyz", off.gw, http.MethodGet, "/readyz", "evil.example", nil, "", 403},
		{"explain off", off.gw, http.MethodPost, "/authz/explain", "", jsonCT, explainBody, 404},
		{"explain no secret", on.gw, http.MethodPost, "/authz/explain", "", jsonCT, explainBody, 401},
		{"explain wrong secret", on.gw, http.MethodPost, "/authz/explain", "", withAuth(jsonCT, "Bearer nope"), explainBody, 401},
		{"explain two authorizations", on.gw, http.MethodPost, "/authz/explain", "",
			http.Header{"Content-Type": {"application/json"}, "Authorization": {bearer, bearer}}, explainBody, 401},
		{"explain text/plain", on.gw, http.MethodPost, "/authz/explain", "", withAuth(http.Header{"Content-Type": {"text/plain"}}, bearer), explainBody, 415},
		{"explain form", on.gw, http.MethodPost, "/authz/explain", "",
			withAuth(http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, bearer), explainBody, 415},
		{"explain no content type", on.gw, http.MethodPost, "/authz/explain", "", withAuth(http.Header{}, bearer), explainBody, 415},
		{"explain gzip", on.gw, http.MethodPost, "/authz/explain", "",
			withAuth(http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}, bearer), explainBody, 415},
		{"explain from a page", on.gw, http.MethodPost, "/authz/explain", "",
			withAuth(http.Header{"Content-Type": {"application/json"}, "Origin": {"http://127.0.0.1:9090"}}, bearer), explainBody, 403},
		{"explain rebinding", on.gw, http.MethodPost, "/authz/explain", "evil.example", withAuth(jsonCT, bearer), explainBody, 403},
		{"explain with secret", on.gw, http.MethodPost, "/authz/explain", "", withAuth(jsonCT, bearer), explainBody, 200},
		{"explain json charset", on.gw, http.MethodPost, "/authz/explain", "",
			withAuth(http.Header{"Content-Type": {"application/json; charset=utf-8"}}, bearer), explainBody, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := adminRequest(t, tt.method, "http://"+tt.gw.Admin+tt.path, tt.host, tt.header, tt.body)
			if status != tt.want {
				t.Fatalf("status %d, want %d: %.200s", status, tt.want, body)
			}
			if status != 200 && strings.Contains(body, `"rules"`) {
				t.Fatalf("a refused request got the policy trace: %.200s", body)
			}
		})
	}
}
