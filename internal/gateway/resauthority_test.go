package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/tsnames"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The authority of a resource URI as URL parsers read it. RFC 3986 §6.2.3 makes a default
// port and an empty one the same URI as none; a WHATWG URL parser (the TypeScript SDK server
// looks a read up by new URL(uri).toString(), Python servers by pydantic's AnyUrl, and an HTTP
// client of Node fetches by it) also drops empty user information, reads a port with leading
// zeros as its number, an IPv4 address written in hex, octal, as one number or in fewer than
// four parts as its dotted-decimal form (as inet_aton, and so getaddrinfo, does), and an IPv6
// address in its compressed form. Each entry below is a spelling and the URI such a reader
// takes it for (checked against Node's URL). The policy denies each secret by its plain
// spelling: no other spelling of its authority may reach a backend, and a spelling of a
// readable URI reaches the backend as the URI the policy judged.
//
//	go test -count=1 -run 'TestResourceAuthoritySpellings' ./internal/gateway

var authoritySecrets = []string{"https://docs.example/secret", "http://127.0.0.1/secret", "http://[::1]/secret",
	"ws://chat.example/secret", "ftp://files.example/secret", "mem://store.example:80/secret"}

var authoritySpellings = []string{
	// Default ports, also with leading zeros, and a port's leading zeros.
	"https://docs.example:443/secret", "https://docs.example:0443/secret", "https://docs.example:00443/secret",
	"ws://chat.example:80/secret", "ftp://files.example:21/secret", "mem://store.example:080/secret",
	// Empty user information.
	"https://@docs.example/secret", "https://:@docs.example/secret", "https://@docs.example:443/secret",
	// IPv4 addresses in the other forms a WHATWG parser and inet_aton read.
	"http://0x7f.0.0.1/secret", "http://0X7F.0.0.1/secret", "http://0177.0.0.1/secret", "http://127.1/secret",
	"http://127.0.1/secret", "http://2130706433/secret", "http://0x7f000001/secret", "http://127.0.0.01/secret",
	"http://127.0.0.0x1/secret", "http://127.0.0.1:80/secret",
	// IPv6 addresses not in their compressed form.
	"http://[0:0:0:0:0:0:0:1]/secret", "http://[::0:1]/secret", "http://[0::1]/secret", "http://[::0001]/secret",
	// No host: a WHATWG parser skips every '/' after a special scheme and reads the host from
	// the path.
	"https:///docs.example/secret", "https:////docs.example/secret", "http:///127.0.0.1/secret",
	"ws:///chat.example/secret", "ftp:///files.example/secret", "https://:443/docs.example/secret",
	// User information: an HTTP client sends it as credentials for the same resource.
	"https://anyone@docs.example/secret", "https://a:b@docs.example:443/secret/x", "http://u@127.0.0.1/secret?q",
	"mem://u@store.example:80/secret",
}

// authorityReadable are spellings of readable URIs and what the backend must receive.
var authorityReadable = map[string]string{
	"https://docs.example:443/public":  "https://docs.example/public",
	"https://@docs.example/public":     "https://docs.example/public",
	"https://:@DOCS.example/public":    "https://docs.example/public",
	"http://127.0.0.1:0080/public":     "http://127.0.0.1/public",
	"http://127.0.0.1:8080/public":     "http://127.0.0.1:8080/public",
	"http://[0:0:0:0:0:0:0:1]/public":  "http://[::1]/public",
	"mem://store.example:0080/public":  "mem://store.example:80/public",
	"https://docs.example:443/public?": "https://docs.example/public",
	"https://u:@docs.example/public":   "https://u@docs.example/public",
}

func TestResourceAuthoritySpellings(t *testing.T) {
	t.Parallel()
	// A fetching backend in the Go SDK: one template per scheme, answering with the URI it was
	// asked for, as a backend that fetches a URL names what it fetched.
	var mu sync.Mutex
	var received []string
	opts := []mcptest.Option{mcptest.WithoutDefaults()}
	for _, scheme := range []string{"http", "https", "ws", "ftp", "mem"} {
		opts = append(opts, mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: scheme + "://{+rest}", Name: scheme},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				mu.Lock()
				received = append(received, req.Params.URI)
				mu.Unlock()
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read " + req.Params.URI}}}, nil
			}))
	}
	fetch := mcptest.StartServer(t, "fetch", opts...)
	// The TypeScript SDK server, which finds a resource by its WHATWG spelling.
	public := []string{"https://docs.example/public", "http://127.0.0.1/public", "http://127.0.0.1:8080/public",
		"http://[::1]/public", "mem://store.example:80/public", "https://u@docs.example/public"}
	ts := tsnames.StartBackend(t, tsnames.Names{Resources: append(append([]string(nil), authoritySecrets...), public...)})
	iss := newIssuer(t)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.HealthInterval = time.Hour
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "ts", URL: ts, Timeout: 10 * time.Second}})
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-secret", Resources: authoritySecrets, Effect: authz.EffectDeny},
			{ID: "all", Upstream: "*"},
		}
	}, fetch)
	f := &resFixture{gw: gw, tok: mint(t, iss, devissuer.Claims{"sub": "mallory"})}

	for _, up := range []string{"fetch", "ts"} {
		for _, uri := range authoritySpellings {
			status, body := f.read(t, up+"+"+uri)
			if strings.Contains(body, "read ") {
				t.Errorf("%s+%s: the backend's answer was relayed: %s", up, uri, body)
			} else if status != http.StatusBadRequest {
				t.Errorf("%s+%s: %d %s, want 400", up, uri, status, body)
			}
		}
	}
	// A pre-2026 client reads through the legacy edge, which routes as the 2026 edge does.
	legacy := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(f.tok), mcptest.WithProtocolVersion("2025-11-25"))
	for _, uri := range authoritySpellings {
		if res, err := legacy.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "fetch+" + uri}); err == nil {
			t.Errorf("2025-11-25 client: fetch+%s: read %v", uri, res.Contents)
		}
	}
	mu.Lock()
	if len(received) > 0 {
		t.Errorf("the fetching backend was asked for %q", received)
	}
	received = nil
	mu.Unlock()
	// Spellings of readable URIs reach each backend as the URI the policy judged.
	for uri, want := range authorityReadable {
		for _, up := range []string{"fetch", "ts"} {
			status, body := f.read(t, up+"+"+uri)
			if status != http.StatusOK || !strings.Contains(body, `"read `+want+`"`) {
				t.Errorf("%s+%s: %d %s, want the backend to read %s", up, uri, status, body, want)
			}
		}
	}
}
