package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// startTestGateway runs the real gateway (serve, in-process) on loopback in front of backends
// and returns its Listeners. It stops when the test ends.
func startTestGateway(t *testing.T, mutate func(*Config), backends ...*mcptest.Server) Listeners {
	t.Helper()
	return startTestGatewayTo(t, io.Discard, mutate, backends...)
}

// startTestGatewayTo is startTestGateway writing the gateway's log to logs.
func startTestGatewayTo(t *testing.T, logs io.Writer, mutate func(*Config), backends ...*mcptest.Server) Listeners {
	t.Helper()
	cfg := testConfig("error", "text", backends...)
	cfg.Auth.Disabled = true
	if mutate != nil {
		mutate(cfg)
	}
	cfg.applyDefaults()
	cfg.Server.DrainDelay = 0
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan Listeners, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, func(string) string { return "" }, logs, logs, started) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case l := <-started:
		if cfg.Redis.enabled() {
			waitNoticesSubscribed(t, l)
		}
		return l
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return Listeners{}
}

// waitNoticesSubscribed waits until the replica's notice subscriptions are made (its /readyz
// says so), as a load balancer waits for readiness before sending it traffic: a test that hands
// a message to it through Redis before then would lose it. It does not wait when Redis is
// away (a test of that) or the readiness detail is not shown.
func waitNoticesSubscribed(t *testing.T, l Listeners) {
	t.Helper()
	if l.Admin == "" {
		return
	}
	mcptest.WaitFor(t, "the notice subscriptions", func() bool {
		_, body := readyz(t, l)
		return body.Checks == nil || body.Checks["redis"] != "ok" || body.Checks["notices"] == "ok"
	})
}

// testConfig is the configuration a test gateway starts from: serve's own before the file
// (newConfig, so the pre-2026 edge is on as it is by default), on loopback ports, logging at
// level in format, in front of backends. A test that needs a setting off says so in its mutate.
func testConfig(level, format string, backends ...*mcptest.Server) *Config {
	c := newConfig()
	c.Log = LogConfig{Level: level, Format: format}
	c.Server.Listen, c.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
	for _, b := range backends {
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: b.Name(), URL: b.URL(), Timeout: 5 * time.Second}})
	}
	return &c
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// TestEndToEnd drives the gateway with the official go-sdk client (2026-07-28) in front of two
// go-sdk servers in stateless mode.
func TestEndToEnd(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartServer(t, "beta")
	gw := startTestGateway(t, nil, alpha, beta)
	var progress []float64
	progressed := make(chan struct{}, 16)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProgress(
		func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress = append(progress, req.Params.Progress)
			progressed <- struct{}{}
		}))
	ctx := context.Background()

	t.Run("list namespaces both backends", func(t *testing.T) {
		names := toolNames(t, cs)
		for _, want := range []string{"alpha__echo", "beta__echo", "alpha__progress", "beta__add"} {
			if !contains(names, want) {
				t.Errorf("tools/list lacks %s; got %v", want, names)
			}
		}
		// Deterministic merge: backends in configuration order.
		if !strings.HasPrefix(names[0], "alpha__") || !strings.HasPrefix(names[len(names)-1], "beta__") {
			t.Errorf("merged order should follow configuration order: %v", names)
		}
	})
	t.Run("call reaches the owning backend with its own name", func(t *testing.T) {
		alpha.Reset()
		beta.Reset()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "héllo"}})
		if err != nil || res.IsError {
			t.Fatalf("CallTool: %v %+v", err, res)
		}
		if got := mcptest.ResultText(res); got != "héllo" {
			t.Errorf("echo = %q", got)
		}
		if len(alpha.Forwarded()) != 0 {
			t.Errorf("alpha received %d requests for a beta tool", len(alpha.Forwarded()))
		}
		reqs := beta.Forwarded()
		if len(reqs) != 1 || reqs[0].Header.Get("Mcp-Name") != "echo" || !strings.Contains(string(reqs[0].Body), `"name":"echo"`) {
			t.Fatalf("beta got %+v", reqs)
		}
	})
	t.Run("SSE progress is relayed before the result", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "alpha__progress", Arguments: map[string]any{"steps": 3}}
		params.SetProgressToken("tok-1")
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			t.Fatalf("CallTool: %v %+v", err, res)
		}
		for range 3 {
			select {
			case <-progressed:
			case <-time.After(5 * time.Second):
				t.Fatalf("got %d progress notifications, want 3", len(progress))
			}
		}
	})
	t.Run("prompts and resources are namespaced", func(t *testing.T) {
		pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha__greet", Arguments: map[string]string{"name": "Ada"}})
		if err != nil || len(pr.Messages) == 0 {
			t.Fatalf("GetPrompt: %v %+v", err, pr)
		}
		var uris []string
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		if len(uris) == 0 {
			t.Fatal("no resources listed")
		}
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uris[0]})
		if err != nil || len(rr.Contents) == 0 || rr.Contents[0].URI != uris[0] {
			t.Fatalf("ReadResource(%s): %v %+v", uris[0], err, rr)
		}
	})
	t.Run("metrics record the traffic", func(t *testing.T) {
		body := get(t, "http://"+gw.Admin+"/metrics")
		for _, want := range []string{
			`mcp_gateway_requests_total{method="tools/call",outcome="ok"}`,
			// The tool label is the backend's own name, known from the backend's tools/list.
			`mcp_gateway_tool_calls_total{outcome="ok",tool="echo",upstream="beta"}`,
			"mcp_gateway_upstream_requests_total", "go_goroutines",
			`mcp_gateway_upstream_up{upstream="alpha"} 1`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		problems, err := promlint.New(strings.NewReader(body)).Lint()
		if err != nil || len(problems) > 0 {
			t.Errorf("the scraped exposition does not lint: %v %v", err, problems)
		}
	})
}

// TestBackendDown: a backend that refuses connections is left out of lists (the other's tools
// still listed) and a call to it is a 502-class error, while the healthy backend keeps serving.
func TestBackendDown(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartServer(t, "beta")
	gw := startTestGateway(t, nil, alpha, beta)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	beta.Close()

	names := toolNames(t, cs)
	if !contains(names, "alpha__echo") || contains(names, "beta__echo") {
		t.Fatalf("with beta down, tools/list = %v", names)
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "Bad Gateway") {
		t.Fatalf("call to the down backend: err = %v, want backend unavailable", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || mcptest.ResultText(res) != "still here" {
		t.Fatalf("healthy backend: %v %+v", err, res)
	}
	if ready := get(t, "http://"+gw.Admin+"/readyz"); !strings.Contains(ready, `"ready":true`) {
		t.Errorf("/readyz = %s", ready)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

const testMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func modernHeaders(method, name string) http.Header { return mcptest.RequestHeaders(method, name) }

func post(t *testing.T, url string, h http.Header, body string) (int, http.Header, string) {
	t.Helper()
	return exchange(t, http.MethodPost, url, h, body)
}

// exchange sends one request and returns the status, headers and body of the response.
func exchange(t *testing.T, method, url string, h http.Header, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}
