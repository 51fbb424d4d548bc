package gateway

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestBackendURLUserInfo: a backend whose URL carries user information (the operator's Basic
// credential, which the URL's never reported) receives it as Authorization on every request,
// whichever revision it speaks: a 2025-11-25 backend had it (net/http's client adds it) but a
// 2026-07-28 one did not, its requests going out through the transport alone.
func TestBackendURLUserInfo(t *testing.T) {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("svc:p@ss"))
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "2026-07-28", true: "2025-11-25"}[legacy], func(t *testing.T) {
			start := mcptest.StartServer
			if legacy {
				start = mcptest.StartLegacyServer
			}
			alpha := start(t, "alpha")
			gw := startTestGateway(t, func(c *Config) {
				c.Upstreams[0].URL = strings.Replace(alpha.URL(), "http://", "http://svc:p%40ss@", 1)
			}, alpha)
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__" + mcptest.ToolEcho, Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			ex := alpha.Requests()
			if len(ex) == 0 {
				t.Fatal("the backend received nothing")
			}
			for _, e := range ex {
				if got := e.Header.Get("Authorization"); got != want {
					t.Fatalf("a %s %s reached the backend with Authorization %q, want %q", e.Method, e.Header.Get("Mcp-Method"), got, want)
				}
			}
		})
	}
}

// TestBackendURLUserInfoExcludesAuth: user information in a backend's URL is a credential, so
// with auth or an Authorization header (in any spelling) the configuration is refused rather
// than one of them silently winning.
func TestBackendURLUserInfoExcludesAuth(t *testing.T) {
	iss := newExchangeIssuer(t)
	for name, mutate := range map[string]func(u *UpstreamConfig){
		"header": func(u *UpstreamConfig) { u.Headers = map[string]Secret{"authorization": {Value: "Bearer static"}} },
		"auth": func(u *UpstreamConfig) {
			u.Auth.AuthConfig = exchangeUpstream("alpha", u.URL, iss).Auth.AuthConfig
			u.Auth.Type = "clientCredentials"
			u.Auth.ClientSecret = Secret{Value: "gw-secret"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig("error", "text")
			u := UpstreamConfig{}
			u.Name, u.URL = "alpha", "http://svc:secret@127.0.0.1:1/mcp"
			mutate(&u)
			cfg.Upstreams = []UpstreamConfig{u}
			cfg.applyDefaults()
			err := cfg.validate()
			if err == nil || !strings.Contains(err.Error(), "user information") {
				t.Fatalf("validate: %v, want the user information refused", err)
			}
			if strings.Contains(err.Error(), "secret@") {
				t.Fatalf("the error names the URL's credential: %v", err)
			}
		})
	}
}
