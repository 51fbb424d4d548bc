package pre2026

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// signInTool is a 2026 backend's tool that sends its user to an outside page (a URL-mode
// elicitation) and asks again, with the same page, until the flow there is done: done says
// whether it is, from the number of calls so far. calls counts the tool's calls.
func signInTool(calls *atomic.Int32, done func(call int32) bool) mcptest.Option {
	tool := &mcp.Tool{Name: "sign_in", InputSchema: map[string]any{"type": "object"}}
	return mcptest.WithTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := calls.Add(1)
		if r, ok := req.Params.InputResponses["signin"].(*mcp.ElicitResult); ok && r.Action == "accept" &&
			req.Params.RequestState == "flow/v1" && done(n) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"signin": &mcp.ElicitParams{Mode: "url",
				Message: "Sign in to the service", URL: "https://idp.example/flow?session=1"}},
			RequestState: "flow/v1",
		}, nil
	})
}

// TestLegacyBackendPageWaits: a go-sdk client at 2025-11-25 accepts a 2026 backend's URL-mode
// elicitation as soon as its user is sent to the page; the backend asks again, with the same
// page, until its outside flow is done. The edge does not ask the client again nor spend a
// round on each of the backend's repeats: it retries the backend with the client's accept until
// the flow is done (here, the backend's fourth call, with legacy.maxRounds 2), and the call
// succeeds with the client asked once. A flow that never completes ends, once legacy.askTimeout
// has passed since the accept, with an error that says so, the client still asked once.
func TestLegacyBackendPageWaits(t *testing.T) {
	for _, tt := range []struct {
		name string
		done func(call int32) bool
		want string
	}{
		{"completes", func(call int32) bool { return call >= 4 }, "signed in"},
		{"never completes", func(int32) bool { return false }, "the user did not finish the page they were sent to within 1s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			be := mcptest.StartServer(t, "be", signInTool(&calls, tt.done))
			gw, asker := startAskingGateway(t, gwSpec{Edge: Config{AskTimeout: time.Second, MaxRounds: 2}},
				upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
			var asked atomic.Int32
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
				mcptest.WithCapabilities(&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}),
				mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					if req.Params.Mode != "url" || req.Params.URL != "https://idp.example/flow?session=1" {
						t.Errorf("asked %+v, want the backend's page", req.Params)
					}
					return &mcp.ElicitResult{Action: "accept"}, nil // the user was sent to the page
				}))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__sign_in", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("sign_in: %v", err)
			}
			if got := mcptest.ResultText(res); !strings.Contains(got, tt.want) || res.IsError != (tt.want != "signed in") {
				t.Fatalf("sign_in: %q (isError %v), want %q", got, res.IsError, tt.want)
			}
			if n := asked.Load(); n != 1 || len(asker.askedMethods()) != 1 {
				t.Fatalf("the client was asked %d times (edge: %v), want once", n, asker.askedMethods())
			}
			if n := calls.Load(); n < 2 || (tt.want == "signed in" && n != 4) {
				t.Fatalf("the backend was called %d times", n)
			}
		})
	}
}

// TestLegacyBackendPageWaitKeepsAlive: while the call waits for the user at the backend's page,
// its response carries keep-alive comments, so that a proxy's idle timeout does not cut a wait
// that may last legacy.askTimeout. The interval is longer than the longest pause between the
// backend's retries (2 s), as the default (15 s) is: the wait pauses the keep-alives for each
// retry and arms them again, and they used to count the silence from each arming, so no
// comment ever came. Here the backend's flow completes only once the client has seen two
// comments after its accept; the call fails if the wait ends first.
func TestLegacyBackendPageWaitKeepsAlive(t *testing.T) {
	var calls atomic.Int32
	var finished atomic.Bool
	be := mcptest.StartServer(t, "be", signInTool(&calls, func(int32) bool { return finished.Load() }))
	gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{SSEKeepAlive: 2500 * time.Millisecond},
		Edge: Config{AskTimeout: time.Minute, MaxRounds: 2}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	waiting := mcptest.NewKeepAlives()
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithRoundTripper(waiting),
		mcptest.WithCapabilities(&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}),
		mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			waiting.After.Store(true)
			return &mcp.ElicitResult{Action: "accept"}, nil // the user was sent to the page
		}))
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__sign_in", Arguments: map[string]any{}})
		done <- outcome{res, err}
	}()
	// Two: the ask's own keep-alive could have written one in the instant before the accept.
	for range 2 {
		select {
		case <-waiting.Seen:
		case o := <-done:
			t.Fatalf("the wait for the page ended without two keep-alive comments after the accept: %v %+v", o.err, o.res)
		}
	}
	finished.Store(true)
	o := <-done
	if o.err != nil || o.res.IsError || mcptest.ResultText(o.res) != "signed in" {
		t.Fatalf("sign_in: %v %+v", o.err, o.res)
	}
	if n := calls.Load(); n < 3 {
		t.Errorf("the backend was called %d times; the wait retried it fewer than twice", n)
	}
}
