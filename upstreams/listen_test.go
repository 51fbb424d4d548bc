package upstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// subscribable starts a stateless go-sdk server that supports resource subscriptions (mcptest's
// servers do not) and serves the resource mem://cfg.
func subscribable(t *testing.T) (*mcp.Server, string) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "subs", Version: "1"}, &mcp.ServerOptions{
		Logger:             slog.New(slog.DiscardHandler),
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddResource(&mcp.Resource{URI: "mem://cfg", Name: "cfg"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "{}"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return s, srv.URL
}

func TestListen(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	subs, subsURL := subscribable(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()},
		{Name: "subs", URL: subsURL},
	}}, Options{})

	msgs := make(chan string, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	params := `{"_meta":` + upstreamstest.Meta + `,"notifications":{"toolsListChanged":true,"promptsListChanged":false,` +
		`"resourceSubscriptions":["subs+mem://cfg","alpha+mem://readme","nobody+mem://x"]}}`
	go func() {
		done <- r.Listen(ctx, json.RawMessage(`"L1"`), json.RawMessage(params), nil, nil, func(m []byte) error {
			msgs <- string(m)
			return nil
		})
	}()
	deadline := time.After(30 * time.Second) // a fail-safe, not a timing assertion
	next := func(what string, poke func(i int)) map[string]any {
		t.Helper()
		for i := range 600 {
			select {
			case m := <-msgs:
				return decodeObject(t, m)
			case <-deadline:
				t.Fatalf("no %s", what)
			case <-time.After(50 * time.Millisecond):
				if poke != nil {
					poke(i) // the backend listen may not be registered yet: change again
				}
			}
		}
		t.Fatalf("no %s", what)
		return nil
	}

	ack := next("acknowledgement", nil)
	if ack["method"] != "notifications/subscriptions/acknowledged" ||
		mcptest.Path(ack, "params", "_meta", "io.modelcontextprotocol/subscriptionId") != "L1" ||
		mcptest.Path(ack, "params", "notifications", "toolsListChanged") != true ||
		mcptest.Path(ack, "params", "notifications", "promptsListChanged") != nil ||
		fmt.Sprint(mcptest.Path(ack, "params", "notifications", "resourceSubscriptions")) != "[subs+mem://cfg]" {
		t.Fatalf("first message = %v, want the acknowledgement of tools and subs+mem://cfg only", ack)
	}

	changed := next("tools/list_changed", func(i int) {
		alpha.MCP().AddTool(&mcp.Tool{Name: fmt.Sprintf("extra%d", i), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	})
	if changed["method"] != "notifications/tools/list_changed" ||
		mcptest.Path(changed, "params", "_meta", "io.modelcontextprotocol/subscriptionId") != "L1" {
		t.Fatalf("got %v, want tools/list_changed tagged L1", changed)
	}

	for range 600 { // skip further list_changed caused by the pokes above
		updated := next("resources/updated", func(int) {
			subs.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: "mem://cfg"})
		})
		if updated["method"] == "notifications/tools/list_changed" {
			continue
		}
		if updated["method"] != "notifications/resources/updated" || mcptest.Path(updated, "params", "uri") != "subs+mem://cfg" ||
			mcptest.Path(updated, "params", "_meta", "io.modelcontextprotocol/subscriptionId") != "L1" {
			t.Fatalf("got %v, want resources/updated for subs+mem://cfg tagged L1", updated)
		}
		break
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Listen = %v, want nil after the client closed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Listen did not return after ctx was cancelled")
	}
}

func TestListenNothingToListenFor(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: alpha.URL()}}}, Options{})
	var got []string
	err := r.Listen(context.Background(), json.RawMessage(`7`),
		json.RawMessage(`{"_meta":`+upstreamstest.Meta+`,"notifications":{"resourceSubscriptions":["alpha+mem://readme"]}}`), nil, nil,
		func(m []byte) error { got = append(got, string(m)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{}}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
}
