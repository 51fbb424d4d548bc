package mcphttp

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams"
)

// TestAccessLogClientAddress: the access log writes the client's address (through the trusted
// proxy) only where server.logClientAddress turns it on.
func TestAccessLogClientAddress(t *testing.T) {
	for _, on := range []bool{false, true} {
		var logs bytes.Buffer
		cfg := Config{LogClientAddress: on, TrustedProxies: []string{"192.0.2.0/24"}}
		_, e := testServer(t, cfg, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{},
			Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		req := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader("{}"))
		req.RemoteAddr = "192.0.2.1:4000"
		req.Header.Set("X-Forwarded-For", "2001:db8::7")
		e.ServeHTTP(httptest.NewRecorder(), req)
		line := logs.String()
		if !strings.Contains(line, "msg=request") {
			t.Fatalf("no access line:\n%s", line)
		}
		if got := strings.Contains(line, "client=2001:db8::7"); got != on {
			t.Errorf("logClientAddress %v: address written %v:\n%s", on, got, line)
		}
		if !on && strings.Contains(line, "client=") {
			t.Errorf("a client attribute without logClientAddress:\n%s", line)
		}
	}
}

// TestUntrustedProxyHeadersWarnedOnce: with no trusted proxy, requests carrying a proxy's client
// header make the gateway say once that the header is ignored.
func TestUntrustedProxyHeadersWarnedOnce(t *testing.T) {
	var logs bytes.Buffer
	_, e := testServer(t, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{},
		Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Forwarded-For"} {
		req := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader("{}"))
		req.Header.Set(h, "203.0.113.7")
		e.ServeHTTP(httptest.NewRecorder(), req)
	}
	if n := strings.Count(logs.String(), "server.trustedProxies is empty"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
}
