package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestShutdownDrains holds docs/deploy.md's drain: on termination the gateway reports
// not-ready and keeps serving for server.drainDelay, then stops accepting and lets the calls in
// flight finish for up to server.shutdownTimeout; one still running then (its backend hangs) is
// ended, its backend call cancelled, and the gateway exits.
func TestShutdownDrains(t *testing.T) {
	release, cancelled := make(chan struct{}), make(chan struct{})
	alpha := mcptest.StartServer(t, "alpha", holdingTool(release, nil))
	beta := mcptest.StartServer(t, "beta", holdingTool(make(chan struct{}), cancelled))
	cfg := testConfig("error", "text", alpha, beta)
	cfg.Auth.Disabled = true
	cfg.applyDefaults()
	cfg.Server.DrainDelay, cfg.Server.ShutdownTimeout = 2*time.Second, 3*time.Second
	for i := range cfg.Upstreams {
		cfg.Upstreams[i].Timeout = time.Minute // the hanging call is ended by the shutdown, not its own timeout
	}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	ctx, terminate := context.WithCancel(context.Background())
	defer terminate()
	started, done := make(chan Listeners, 1), make(chan error, 1)
	go func() { done <- serve(ctx, cfg, func(string) string { return "" }, io.Discard, io.Discard, started) }()
	var gw Listeners
	select {
	case gw = <-started:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	url := "http://" + gw.MCP + "/mcp"
	finishing, hanging := startHeldCallOf(t, url, "alpha__hold"), startHeldCallOf(t, url, "beta__hold")

	terminate()
	mcptest.WaitFor(t, "not ready while draining", func() bool { status, _ := readyz(t, gw); return status == http.StatusServiceUnavailable })
	if res, err := mcptest.Connect(t, url).CallTool(context.Background(), &mcp.CallToolParams{
		Name: "alpha__echo", Arguments: map[string]any{"text": "still served"}}); err != nil || res.IsError {
		t.Fatalf("a call during the drain delay: %v %+v", err, res)
	}
	mcptest.WaitFor(t, "the listener closed after the drain delay", func() bool {
		c, err := net.DialTimeout("tcp", gw.MCP, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release)
	if r := <-finishing; r.err != nil || r.res.IsError || r.res.Content[0].(*mcp.TextContent).Text != "held to the end" {
		t.Fatalf("the call in flight at shutdown: %v %+v", r.err, r.res)
	}
	select {
	case <-cancelled:
	case <-time.After(reloadWait):
		t.Fatal("the hanging backend call was not cancelled after server.shutdownTimeout")
	}
	if r := <-hanging; r.err == nil && !r.res.IsError {
		t.Fatalf("the hanging call completed: %+v", r.res)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(reloadWait):
		t.Fatal("the gateway did not exit")
	}
}

// startHeldCallOf is startHeldCall for any holding tool.
func startHeldCallOf(t *testing.T, url, tool string) <-chan heldResult {
	t.Helper()
	progressed := make(chan struct{}, 1)
	cs := mcptest.Connect(t, url, mcptest.WithProgress(func(context.Context, *mcp.ProgressNotificationClientRequest) {
		select {
		case progressed <- struct{}{}:
		default:
		}
	}))
	out := make(chan heldResult, 1)
	go func() {
		params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
		params.SetProgressToken("held")
		res, err := cs.CallTool(context.Background(), params)
		out <- heldResult{res, err}
	}()
	select {
	case <-progressed:
	case r := <-out:
		t.Fatalf("the held call ended before it started: %v %+v", r.err, r.res)
	case <-time.After(reloadWait):
		t.Fatal("no progress from the held call")
	}
	return out
}
