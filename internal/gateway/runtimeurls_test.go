package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// secretPath is a configured URL to addr keyed as operators key one in its path: the canary in
// a generated segment (a capability URL's) and after a hook's name (a webhook's token).
// secretURL also has it in the user information and the query, where a setting allows them.
func secretPath(addr, path string) string {
	return "http://" + addr + path + "/" + urlCanary + pathToken + "/hooks/" + urlCanary
}

func secretURL(addr, path string) string {
	return strings.Replace(secretPath(addr, path), "://", "://u:"+urlCanary+"@", 1) + "?key=" + urlCanary
}

// TestRunTimeURLsRedacted: while the gateway runs, no configured URL's credential (user
// information, query value, secret path segment) shows in any channel its failures reach: the
// log, /readyz, /metrics, the answers clients get, and at shutdown the trace exporter's
// failure; for a backend, an interceptor webhook, an embeddings endpoint, a trace collector and
// an issuer's key set, each against a loopback port that refuses connections and one that
// accepts them and never answers. Each failure is first seen to have happened, so the test
// cannot pass by checking nothing.
func TestRunTimeURLsRedacted(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	for _, tc := range []struct{ name, addr string }{
		{"refused", closedPort(t)},
		{"hangs", silentListener(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clean := func(what, text string) {
				t.Helper()
				if strings.Contains(text, urlCanary) {
					t.Errorf("%s shows the canary:\n%s", what, text)
				}
			}
			body := "auth: {disabled: true}\n" +
				"toolsets: [{name: search, include: [{}], search: {enabled: true}}]\n" +
				"upstreams:\n" + upstreamYAML(alpha) +
				fmt.Sprintf("  - {name: down, url: %q, timeout: 300ms, connectTimeout: 300ms}\n", secretURL(tc.addr, "/mcp")) +
				fmt.Sprintf("interceptors:\n  - {name: hook, url: %q, type: validation, interceptor: guard, timeout: 300ms, webhook: true, rules: [{tools: [echo]}]}\n",
					secretURL(tc.addr, "/intercept")) +
				fmt.Sprintf("search:\n  embeddings: {url: %q, model: m, timeout: 300ms, batchTimeout: 300ms}\n", secretPath(tc.addr, "/v1/embeddings")+"?key="+urlCanary) +
				// The collector's timeout is longer than the others': the exporter's last export,
				// at shutdown, fails without naming its URL when the deadline passes before its
				// request is sent, as it did at 300 ms on a loaded machine.
				fmt.Sprintf("tracing: {endpoint: %q, insecure: true, timeout: 1500ms}\n", secretPath(tc.addr, "/v1/traces"))
			var f *reloadGateway
			// After the gateway stopped (cleanups run last first), its tracer's last export has
			// failed: the one failure whose error quotes the URL (a backend's, an interceptor's
			// and the embeddings endpoint's name the target without it).
			t.Cleanup(func() {
				if f == nil {
					return
				}
				logs := f.logs.String()
				clean("the log", logs)
				if !strings.Contains(logs, "trace export failed") || !strings.Contains(logs, "/v1/traces/REDACTED/hooks/REDACTED") {
					t.Errorf("no trace export failed quoting its URL, nothing checked of it:\n%s", logs)
				}
			})
			f = startReloadGateway(t, "1s", body)
			cs := mcptest.Connect(t, f.url())
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(tools)
			clean("tools/list", string(b))
			status, answer := postRPC(t, f.url(), "", "tools/call", "alpha__echo", `"name":"alpha__echo","arguments":{"text":"hi"},`)
			if status == http.StatusOK && !strings.Contains(answer, `"isError":true`) {
				t.Fatalf("the interceptor webhook did not fail the call: %d %s", status, answer)
			}
			clean("the call the interceptor failed", answer)
			search := mcptest.Connect(t, f.url()+"/search")
			found, err := search.CallTool(t.Context(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "echo"}})
			if err != nil {
				t.Fatal(err)
			}
			b, _ = json.Marshal(found)
			clean("find_tools", string(b))
			f.waitLog(t, "upstream server/discover failed")
			f.waitLog(t, "embeddings endpoint failed")
			for _, path := range []string{"/readyz", "/metrics"} {
				text := adminGet(t, f.gw.Admin, path)
				clean(path, text)
				if path == "/readyz" && !strings.Contains(text, `"down"`) {
					t.Errorf("/readyz does not report the backend:\n%s", text)
				}
			}
		})
	}
}

// TestRunTimeIssuerURLRedacted: an issuer's key set URL keyed with a credential, refusing or
// hanging, shows it in neither the log, /readyz nor the answer a caller with a token gets.
func TestRunTimeIssuerURLRedacted(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	for _, tc := range []struct{ name, addr string }{
		{"refused", closedPort(t)},
		{"hangs", silentListener(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf("auth:\n  fetchTimeout: 300ms\n  issuers: [{issuer: \"http://%s\", jwksURL: %q, audiences: [%s]}]\n", tc.addr, secretURL(tc.addr, "/keys"), testResource) +
				"  policy: {rules: [{id: all, issuers: [\"*\"]}]}\n" +
				"upstreams:\n" + upstreamYAML(alpha)
			f := startReloadGateway(t, "1s", body)
			status, text := postRPC(t, f.url(), "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ4In0.c2ln", "tools/list", "", "")
			if status == http.StatusOK {
				t.Fatalf("a token was accepted without keys: %s", text)
			}
			f.waitLog(t, "issuer keys not fetched")
			text += adminGet(t, f.gw.Admin, "/readyz") + f.logs.String()
			if strings.Contains(text, urlCanary) {
				t.Errorf("the answer, /readyz or the log shows the canary:\n%s", text)
			}
			if !strings.Contains(f.logs.String(), "REDACTED") {
				t.Errorf("no failure quoting the key set's URL was logged, nothing checked:\n%s", f.logs.String())
			}
		})
	}
}

// adminGet returns the admin listener's answer to GET path.
func adminGet(t *testing.T, admin, path string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// postRPC sends one request of the 2026 era (params: the members before _meta, each followed by
// a comma) with token, if any, and returns the answer's status and its headers and body as text.
func postRPC(t *testing.T, url, token, method, name, params string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = mcptest.RequestHeaders(method, name)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, fmt.Sprintf("%v %s", resp.Header, answer)
}
