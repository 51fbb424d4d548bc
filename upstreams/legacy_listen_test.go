package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestLegacyListenFiltersEachNotification: on the legacy path, where one GET stream carries
// everything the session hears, a listener hears an update below the URI it subscribed to, but
// not one below it that its policy hides, nor one for a URI it did not subscribe to. The
// go-sdk backend here subscribes the session to those too whenever it is asked for mem://docs,
// like a backend whose subscriptions cover sub-resources.
func TestLegacyListenFiltersEachNotification(t *testing.T) {
	const sub, below, hidden, other = "mem://docs", "mem://docs/a", "mem://docs/hr/ceo", "mem://other"
	beta := mcptest.StartLegacyServer(t, "beta", mcptest.WithSubscriptions())
	beta.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := req.(*mcp.SubscribeRequest); ok && err == nil && r.Params.URI == sub {
				for _, uri := range []string{below, hidden, other} {
					_, _ = next(ctx, method, &mcp.SubscribeRequest{Session: r.Session, Params: &mcp.SubscribeParams{URI: uri}})
				}
			}
			return res, err
		}
	})
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "beta", URL: beta.URL()}}}, Options{})
	visible := func(k Kind, tg Target) bool {
		return k == KindResource && !strings.HasPrefix(tg.Name, "mem://docs/hr/")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 64)
	done := make(chan error, 1)
	go func() {
		done <- r.Listen(ctx, json.RawMessage(`"L1"`),
			json.RawMessage(`{"_meta":`+upstreamstest.Meta+`,"notifications":{"resourceSubscriptions":["beta+mem://docs"]}}`),
			nil, visible, func(msg []byte) error { got <- string(msg); return nil })
	}()
	if ack := waitMsg(t, got, time.After(30*time.Second)); !strings.Contains(ack, `"resourceSubscriptions":["beta+mem://docs"]`) {
		t.Fatalf("acknowledgement %s", ack)
	}
	var relayedURIs []string
	// Until the session has subscribed, nothing is sent: update again; bounded.
	for i := 0; !slices.Contains(relayedURIs, "beta+"+below); i++ {
		if i == 300 {
			t.Fatalf("no update of %s relayed; got %q", below, relayedURIs)
		}
		for _, uri := range []string{hidden, other, below} {
			_ = beta.MCP().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		wait := time.After(50 * time.Millisecond) // a poll interval, not a timing assertion
	poll:
		for {
			select {
			case msg := <-got:
				relayedURIs = append(relayedURIs, strings.TrimPrefix(upstreamstest.Relayed(t, msg), "notifications/resources/updated "))
			case <-wait:
				break poll
			}
		}
	}
	for _, uri := range relayedURIs {
		if uri != "beta+"+below {
			t.Errorf("relayed %s", uri)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Listen: %v", err)
	}
}

// TestLegacyListenSubscribeRefused: a pre-2026 backend that answers the resources/subscribe of a
// listen with a JSON-RPC error (a URI it does not know) has answered: its listen is recorded
// as the backend's error, as a 2026-07-28 backend's error answer to a listen is
// (TestListenStreamFaults), not as a bad response that makes its health suspect. The client's
// listen ends gracefully.
func TestLegacyListenSubscribeRefused(t *testing.T) {
	beta := mcptest.StartLegacyServer(t, "beta", mcptest.WithSubscriptions())
	beta.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.SubscribeRequest); ok && r.Params.URI == "mem://refused" {
				return nil, errors.New("no such resource")
			}
			return next(ctx, method, req)
		}
	})
	opts, recorded := listenOutcomes()
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "beta", URL: beta.URL()}}}, opts)
	watchdog, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var last string
	err := r.Listen(watchdog, json.RawMessage(`"L1"`),
		json.RawMessage(`{"_meta":`+upstreamstest.Meta+`,"notifications":{"resourceSubscriptions":["beta+mem://refused"]}}`),
		nil, nil, func(msg []byte) error { last = string(msg); return nil })
	if err != nil || watchdog.Err() != nil || !strings.Contains(last, `"id":"L1","result"`) {
		t.Fatalf("Listen = %v (watchdog %v), last message %s; want its graceful end", err, watchdog.Err(), last)
	}
	if got := recorded(); !slices.Equal(got, []string{OutcomeBackendError}) {
		t.Fatalf("the refused listen was recorded as %v, want [%s]", got, OutcomeBackendError)
	}
}
