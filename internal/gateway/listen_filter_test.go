package gateway

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// subscribeEveryListen makes a go-sdk server subscribe each listen it receives to extra URIs
// besides the ones asked for, like a backend that broadcasts its resource changes to every
// listener: it then sends resources/updated for them on every listen stream. Its
// acknowledgement names only what was asked for. The channel receives a value each time the
// server acknowledges a listen, by when its subscriptions are registered.
func subscribeEveryListen(s *mcptest.Server, extra []string) <-chan struct{} {
	added := make(map[string]bool, len(extra))
	for _, u := range extra {
		added[u] = true
	}
	acked := make(chan struct{}, 16)
	s.MCP().AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				p.Notifications.ResourceSubscriptions = slices.DeleteFunc(p.Notifications.ResourceSubscriptions,
					func(u string) bool { return added[u] })
				select {
				case acked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	s.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && p.Notifications != nil {
				p.Notifications.ResourceSubscriptions = append(p.Notifications.ResourceSubscriptions, extra...)
			}
			return next(ctx, method, req)
		}
	})
	return acked
}

// listenGateway fronts alpha, a go-sdk server with resource subscriptions, with a real issuer
// and a policy that lets docs:read callers read every alpha resource but mem://hr/*.
func listenGateway(t *testing.T, alpha *mcptest.Server) (Listeners, string) {
	t.Helper()
	iss := newIssuer(t)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		// These tests are about what a listen relays and queues; a client that stalls is cut
		// by the write deadline only after this (edgeload_test.go tests that deadline).
		c.Server.WriteTimeout = 5 * time.Minute
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-hr", Upstream: "alpha", Resources: []string{"mem://hr/*"}, Effect: authz.EffectDeny},
			{ID: "docs", Upstream: "alpha", Resources: []string{"*"}, Tools: []string{"*"}, AnyScope: []string{"docs:read"}},
		}
	}, alpha)
	return gw, mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "docs:read"})
}

// droppedCount reads mcp_gateway_listen_notifications_dropped_total{cause} from the admin
// listener (0 when the series does not exist).
func droppedCount(t *testing.T, gw Listeners, cause string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^mcp_gateway_listen_notifications_dropped_total\{cause="` + cause + `"\} (\S+)$`)
	m := re.FindStringSubmatch(get(t, "http://"+gw.Admin+"/metrics"))
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestListenRelaysOnlySubscribedAndVisible: through the gateway, with a go-sdk backend that
// sends every listen stream resources/updated for mem://hr/salaries/ceo (which policy hides) and
// mem://unasked (which nobody subscribed to), a listener that asked only for toolsListChanged and
// one that subscribed to mem://readme and mem://hr (which it may read, unlike what is below it)
// hear neither; each hears what it asked for.
func TestListenRelaysOnlySubscribedAndVisible(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	const hidden, unasked = "mem://hr/salaries/ceo", "mem://unasked"
	_ = subscribeEveryListen(alpha, []string{hidden, unasked})
	gw, tok := listenGateway(t, alpha)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tools := listen(t, ctx, gw, `{"toolsListChanged":true}`, tok)
	readme := listen(t, ctx, gw, `{"resourceSubscriptions":["alpha+mem://readme","alpha+mem://hr"]}`, tok)
	for _, events := range []<-chan string{tools, readme} {
		if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
			t.Fatalf("first event %s", ack)
		}
	}
	var toolsGot, readmeGot []string
	// Until both backend listens are registered, nothing is sent: poke again, until both
	// Listeners heard something and the hidden update reached the mem://hr listener's filter
	// (a round can start before that listener joins, and it must see the hidden URI once);
	// bounded.
	for i := 0; len(toolsGot) == 0 || len(readmeGot) == 0 || droppedCount(t, gw, "hidden") == 0; i++ {
		if i == 300 {
			t.Fatalf("after %d rounds: tools listener got %q, readme listener %q", i, toolsGot, readmeGot)
		}
		for _, uri := range []string{hidden, unasked, mcptest.ResourceReadme} {
			_ = alpha.MCP().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		alpha.MCP().AddTool(&mcp.Tool{Name: fmt.Sprintf("extra%d", i), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		toolsGot = append(toolsGot, pending(tools)...)
		readmeGot = append(readmeGot, pending(readme)...)
	}
	for _, ev := range toolsGot {
		if !strings.Contains(ev, `"method":"notifications/tools/list_changed"`) {
			t.Errorf("the toolsListChanged listener got %s", ev)
		}
	}
	for _, ev := range readmeGot {
		if !strings.Contains(ev, `"method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"uri":"alpha+mem://readme"}`) {
			t.Errorf("the mem://readme listener got %s", ev)
		}
	}
	if droppedCount(t, gw, "hidden") == 0 || droppedCount(t, gw, "unsubscribed") == 0 {
		t.Errorf("dropped notifications not counted: hidden %v, unsubscribed %v",
			droppedCount(t, gw, "hidden"), droppedCount(t, gw, "unsubscribed"))
	}
}

// pending returns the events waiting on ch after a short wait for the first; the wait is a
// poll interval, not a timing assertion.
func pending(ch <-chan string) []string {
	var out []string
	timeout := time.After(50 * time.Millisecond)
	for {
		select {
		case ev := <-ch:
			out = append(out, ev)
		case <-timeout:
			return out
		}
	}
}

// TestStalledListenerIsBounded: a client that stops reading its listen while a go-sdk backend
// sends 20,000 distinct one-kilobyte resources/updated below the URI it subscribed to does not
// make the gateway keep them all: once its queue is full they are coalesced into one update of
// that URI, the coalescing is counted, and once the client reads again it gets fewer
// notifications than were sent, the coalesced one among them, and its listen goes on.
func TestStalledListenerIsBounded(t *testing.T) {
	t.Parallel()
	const n = 20000
	pad := strings.Repeat("x", 1000)
	uris := make([]string, n)
	for i := range uris {
		uris[i] = fmt.Sprintf("mem://big/%05d/%s", i, pad)
	}
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	acked := subscribeEveryListen(alpha, uris)
	gw, tok := listenGateway(t, alpha)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{` + testMeta +
		`,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["alpha+mem://big/"]}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+gw.MCP+"/mcp", strings.NewReader(body))
	req.Header = modernHeaders("subscriptions/listen", "")
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("listen: status %d", res.StatusCode)
	}
	e := eventstream.NewReader(res.Body, 4<<10, 1<<20)
	next := func() string {
		for {
			ev, err := e.Next()
			if err != nil {
				t.Fatalf("the listen ended: %v", err)
			}
			if len(ev.Data) > 0 {
				return string(ev.Data)
			}
		}
	}
	if ack := next(); !strings.Contains(ack, `"resourceSubscriptions":["alpha+mem://big/"]`) {
		t.Fatalf("acknowledgement %s", ack)
	}
	select {
	case <-acked:
	case <-time.After(30 * time.Second): // a fail-safe, not a timing assertion
		t.Fatal("the backend did not acknowledge the gateway's listen")
	}

	// The client reads nothing while the backend sends; then a list change marks the end.
	for _, uri := range uris {
		_ = alpha.MCP().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
	alpha.MCP().AddTool(&mcp.Tool{Name: "marker", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})

	updates, coalesced := 0, false
	for ev := next(); !strings.Contains(ev, "notifications/tools/list_changed"); ev = next() {
		if !strings.Contains(ev, "notifications/resources/updated") {
			t.Fatalf("the listen sent %.300s", ev)
		}
		updates++
		coalesced = coalesced || strings.Contains(ev, `"uri":"alpha+mem://big/"}`)
	}
	t.Logf("the stalled client got %d updates for %d; %v coalesced", updates, n, droppedCount(t, gw, "coalesced"))
	if updates >= n || !coalesced || droppedCount(t, gw, "coalesced") == 0 {
		t.Errorf("the stalled client got %d updates for %d, coalesced %v: nothing bounded what waited for it", updates, n, coalesced)
	}
}
