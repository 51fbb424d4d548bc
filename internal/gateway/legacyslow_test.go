package gateway

import (
	"context"
	"fmt"
	"io"
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
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// stallGets is a RoundTripper whose GET responses stop being read after their first bytes, as
// a client whose process hangs: the body's Read then waits until release is closed.
type stallGets struct {
	base    http.RoundTripper
	release chan struct{}
}

func (s *stallGets) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet {
		res.Body = &stalledBody{ReadCloser: res.Body, release: s.release}
	}
	return res, err
}

type stalledBody struct {
	io.ReadCloser
	release chan struct{}
	read    bool
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		return b.ReadCloser.Read(p)
	}
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

// resultBytesInFlight reads mcp_gateway_result_bytes_in_flight from the admin listener.
func resultBytesInFlight(t *testing.T, gw Listeners) int64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^mcp_gateway_result_bytes_in_flight (\S+)$`).FindStringSubmatch(get(t, "http://"+gw.Admin+"/metrics"))
	if m == nil {
		t.Fatal("no mcp_gateway_result_bytes_in_flight")
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return int64(v)
}

// TestLegacySlowGetStreamBounded: a pre-2026 client (the go-sdk at 2025-11-25) that subscribed
// to mem://big/ and stops reading its GET stream while a go-sdk backend sends 20,000 distinct
// one-kilobyte resources/updated below it does not make the gateway hold them: what waits for
// the caller stays within its share of server.maxResultBytesInFlight (a sixteenth), and another
// caller's pre-2026 client, reading its own GET stream, still hears of the resource it
// subscribed to.
func TestLegacySlowGetStreamBounded(t *testing.T) {
	t.Parallel()
	const n, budget = 20000, 1 << 20
	pad := strings.Repeat("x", 1000)
	uris := make([]string, n)
	for i := range uris {
		uris[i] = fmt.Sprintf("mem://big/%05d/%s", i, pad)
	}
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions(),
		mcptest.WithResource(&mcp.Resource{URI: "mem://big/", Name: "big", MIMEType: "text/plain"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "mem://big/", Text: "big"}}}, nil
			}))
	_ = subscribeEveryListen(alpha, uris)
	// bigAcked is signalled when the backend acknowledges a listen subscribed to mem://big/: a
	// pre-2026 client's subscribe reaches the backend when the gateway next restarts that
	// client's listen, which it paces, and an update sent before then is not the client's.
	bigAcked := make(chan struct{}, 1)
	alpha.MCP().AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok &&
				slices.Contains(p.Notifications.ResourceSubscriptions, "mem://big/") {
				select {
				case bigAcked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	iss := newIssuer(t)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Server.MaxResultBytesInFlight = budget
		c.Server.WriteTimeout = 5 * time.Minute // the stalled client is not cut by the write deadline
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "alpha", Resources: []string{"*"}, Tools: []string{"*"}, AnyScope: []string{"docs:read"}}}
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	token := func(sub string) string { return mint(t, iss, devissuer.Claims{"sub": sub, "scope": "docs:read"}) }

	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	slow := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithBearer(token("alice")),
		mcptest.WithRoundTripper(&stallGets{base: base, release: release}))
	if err := slow.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "alpha+mem://big/"}); err != nil {
		t.Fatal(err)
	}
	select { // a bounded wait for an event, not a timing
	case <-bigAcked:
	case <-time.After(30 * time.Second):
		t.Fatal("the backend never acknowledged a listen subscribed to mem://big/")
	}
	reader := &mcptest.ResourceUpdates{}
	fast := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithBearer(token("bob")),
		mcptest.WithResourceUpdated(reader.Handler))
	if err := fast.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "alpha+" + mcptest.ResourceReadme}); err != nil {
		t.Fatal(err)
	}

	// Every update below mem://big/ reaches the slow client's listen, which cannot write them;
	// then the reading client must hear of mem://readme, poked until it has (bounded).
	share := int64(budget / 16)
	var peak int64
	for i, uri := range uris {
		_ = alpha.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		if i%2000 == 0 {
			peak = max(peak, resultBytesInFlight(t, gw))
		}
	}
	for i := 0; !slices.Contains(reader.Seen(), "alpha+"+mcptest.ResourceReadme); i++ {
		if i == 400 {
			t.Fatalf("the reading client heard %q, not of its resource", reader.Seen())
		}
		_ = alpha.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: mcptest.ResourceReadme})
		peak = max(peak, resultBytesInFlight(t, gw))
		time.Sleep(25 * time.Millisecond) // a poll interval, not an assertion
	}
	t.Logf("peak %d result bytes in flight; the caller share is %d", peak, share)
	// The slow caller's share, the reading caller's one update, and the two backend streams'
	// buffers (an event of about a kilobyte each).
	if limit := share + 8<<10; peak > limit {
		t.Errorf("the gateway held %d result bytes while a pre-2026 client stalled, more than its caller's share %d", peak, share)
	}
	if coalesced := droppedCount(t, gw, "coalesced") + droppedCount(t, gw, "overflow"); coalesced == 0 {
		t.Error("nothing was coalesced or dropped for the stalled client: it was not stalled")
	}
}
