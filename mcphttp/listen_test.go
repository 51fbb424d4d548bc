package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// listener is one client's listen stream through the gateway.
type listener struct {
	cancel context.CancelFunc
	events chan map[string]any
}

func openListen(t *testing.T, url, id string) *listener {
	t.Helper()
	return openListenTo(t, url, id, `{"toolsListChanged":true}`)
}

// openListenTo opens a listen asking for notifications (a JSON object).
func openListenTo(t *testing.T, url, id, notifications string) *listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + meta +
		`,"notifications":` + notifications + `}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(b))
	req.Header = modern("subscriptions/listen", "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("listen: status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	l := &listener{cancel: cancel, events: make(chan map[string]any, 16)}
	go func() {
		defer resp.Body.Close()
		defer close(l.events)
		e := eventstream.NewReader(resp.Body, 4<<10, 1<<20)
		for {
			ev, err := e.Next()
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(ev.Data, &m) == nil {
				l.events <- m
			}
		}
	}()
	t.Cleanup(cancel)
	return l
}

// next returns the next message; the deadline is a fail-safe, not a timing assertion.
func (l *listener) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-l.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("no message within 30s")
	}
	return nil
}

func subscriptionID(m map[string]any) any {
	p, _ := m["params"].(map[string]any)
	md, _ := p["_meta"].(map[string]any)
	return md["io.modelcontextprotocol/subscriptionId"]
}

// TestListensShareABackendStream: identical listens from two clients open one backend stream;
// each client gets every notification tagged with its own id; one client leaving does not end
// the other's, and the backend stream closes when the last one leaves.
func TestListensShareABackendStream(t *testing.T) {
	fan := mcptest.NewFanBackend()
	be := httptest.NewServer(fan)
	t.Cleanup(be.Close)
	g := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "fan", URL: be.URL + "/mcp"})

	a := openListen(t, g.URL, "11")
	b := openListen(t, g.URL, "22")
	for _, c := range []struct {
		l  *listener
		id float64
	}{{a, 11}, {b, 22}} {
		if m := c.l.next(t); m["method"] != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first message = %v, want the acknowledgement", m)
		}
	}
	mcptest.WaitFor(t, "the backend has a stream open", func() bool { open, _ := fan.Counts(); return open == 1 })

	fan.Notify(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`)
	for _, c := range []struct {
		l  *listener
		id float64
	}{{a, 11}, {b, 22}} {
		m := c.l.next(t)
		if m["method"] != "notifications/tools/list_changed" || subscriptionID(m) != c.id {
			t.Fatalf("client %v got %v, want list_changed tagged with its own id", c.id, m)
		}
	}
	if _, listens := fan.Counts(); listens != 1 {
		t.Fatalf("the backend got %d listen requests for two identical listens, want 1", listens)
	}

	a.cancel()
	fan.Notify(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`)
	if m := b.next(t); m["method"] != "notifications/tools/list_changed" || subscriptionID(m) != float64(22) {
		t.Fatalf("after the other client left, got %v", m)
	}
	b.cancel()
	mcptest.WaitFor(t, "the backend stream closes", func() bool { open, _ := fan.Counts(); return open == 0 })
}

// The causes the registry reports for a dropped listen notification are the metric's closed
// label set: none of them folds into _other.
func TestListenDropCausesAreMetricLabels(t *testing.T) {
	if got, want := upstreams.DropCauses(), metrics.DropCauses(); !slices.Equal(got, want) {
		t.Fatalf("upstreams reports %v, the metric knows %v", got, want)
	}
}

// TestListenSpellingFetchesEachListOnce: the spelling each resource subscription of a listen is
// sent in comes from its backend's resources/list, fetched once per backend for the whole
// listen: a listen naming many non-ASCII URIs of a backend whose list fails costs that backend
// one list request, not one per URI, and the listen is still acknowledged.
func TestListenSpellingFetchesEachListOnce(t *testing.T) {
	var lists atomic.Int64
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions())
	be.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				lists.Add(1)
				return nil, errors.New("the list is unavailable")
			}
			return next(ctx, method, req)
		}
	})
	g := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	var uris []string
	for i := range 20 {
		uris = append(uris, strconv.Quote(fmt.Sprintf("be+mem://x/café-%d", i)))
	}
	l := openListenTo(t, g.URL, "1", `{"resourceSubscriptions":[`+strings.Join(uris, ",")+`]}`)
	if m := l.next(t); m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message = %v, want the acknowledgement", m)
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("the backend got %d resources/list requests for one listen's %d subscriptions, want 1", n, len(uris))
	}
}
