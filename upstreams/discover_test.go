package upstreams

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

func TestCapabilitiesMerge(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithInstructions("Use alpha for echo."), mcptest.WithCacheHints(60000, "public"))
	beta := mcptest.StartServer(t, "beta", mcptest.WithoutDefaults(), mcptest.WithCompletion(nil), mcptest.WithCacheHints(1000, "public"))
	now := time.Unix(1_000_000, 0)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()}, {Name: "beta", URL: beta.URL()}, {Name: "down", URL: deadURL(t)},
	}}, Options{Clock: func() time.Time { return now }})

	d, err := r.Capabilities(context.Background(), nil)
	if err != nil {
		t.Fatalf("Capabilities: %v", err)
	}
	var caps map[string]any
	if err := json.Unmarshal(d.Capabilities, &caps); err != nil {
		t.Fatal(err)
	}
	if mcptest.Path(caps, "tools", "listChanged") != true || mcptest.Path(caps, "prompts", "listChanged") != true ||
		mcptest.Path(caps, "resources", "listChanged") != true || caps["completions"] == nil {
		t.Fatalf("merged capabilities = %s", d.Capabilities)
	}
	if d.Instructions != "alpha: Use alpha for echo." {
		t.Fatalf("Instructions = %q", d.Instructions)
	}
	if d.TTL != 0 || strings.Join(d.Failed, ",") != "down" {
		t.Fatalf("TTL %v, Failed %v: want 0 and [down]", d.TTL, d.Failed)
	}

	// Within beta's ttl nothing is asked again; after it, only beta (and down) are.
	alpha.Reset()
	beta.Reset()
	now = now.Add(500 * time.Millisecond)
	if _, err := r.Capabilities(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(alpha.Requests())+len(beta.Requests()) != 0 {
		t.Fatal("cached discover answers were fetched again")
	}
	now = now.Add(time.Second)
	if _, err := r.Capabilities(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(alpha.Requests()) != 0 || len(beta.Requests()) != 1 {
		t.Fatalf("after beta's ttl: alpha asked %d times, beta %d; want 0 and 1", len(alpha.Requests()), len(beta.Requests()))
	}
}

func TestHealthProbe(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()},
		{Name: "down", URL: strings.Replace(deadURL(t), "http://", "http://user:secret@", 1) + "?token=secret"},
	}}, Options{})
	if h := r.Health(); h[0].Up || !h[0].CheckedAt.IsZero() {
		t.Fatalf("before any probe: %+v", h)
	}
	r.probe(context.Background(), false)
	h := r.Health()
	if !h[0].Up || h[0].CheckedAt.IsZero() || h[1].Up || h[1].LastError == "" {
		t.Fatalf("after a probe: %+v", h)
	}
	for _, s := range h {
		if strings.Contains(s.URL+s.LastError, "secret") {
			t.Fatalf("Health leaks a secret: %+v", s)
		}
	}
	ex := lastRequest(t, alpha, MethodDiscover)
	if !strings.Contains(string(ex.Body), `"io.modelcontextprotocol/clientCapabilities":{}`) {
		t.Fatalf("probe body %s", ex.Body)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(ran)
	}()
	cancel()
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after ctx was cancelled")
	}
}
