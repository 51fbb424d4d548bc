package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// failover is a RoundTripper that sends each request to the first of hosts that accepts a
// connection, as a load balancer that has dropped a replica does once its listener closes.
type failover struct {
	base  http.RoundTripper
	hosts []string
}

func (f *failover) RoundTrip(r *http.Request) (*http.Response, error) {
	var err error
	for i, h := range f.hosts {
		q := r.Clone(r.Context())
		q.URL.Host, q.Host = h, h
		if i > 0 && r.Body != nil && r.Body != http.NoBody {
			if r.GetBody == nil {
				return nil, err
			}
			if q.Body, err = r.GetBody(); err != nil {
				return nil, err
			}
		}
		var res *http.Response
		if res, err = f.base.RoundTrip(q); err == nil {
			return res, nil
		}
		if op := (*net.OpError)(nil); !errors.As(err, &op) || op.Op != "dial" {
			return nil, err
		}
	}
	return nil, err
}

// heldCall starts alpha__hold on cs with a progress token and returns once its first progress
// notification arrived (its response stream is open); the outcome arrives on the channel.
func heldCall(t *testing.T, cs *mcp.ClientSession, progressed <-chan struct{}) <-chan heldResult {
	t.Helper()
	return heldCallOf(t, cs, "alpha__hold", progressed)
}

// heldCallOf is heldCall of any holding tool.
func heldCallOf(t *testing.T, cs *mcp.ClientSession, tool string, progressed <-chan struct{}) <-chan heldResult {
	t.Helper()
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

// progressSignal is a progress handler that signals each notification, without blocking.
func progressSignal() (chan struct{}, func(context.Context, *mcp.ProgressNotificationClientRequest)) {
	ch := make(chan struct{}, 1)
	return ch, func(context.Context, *mcp.ProgressNotificationClientRequest) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// TestSIGTERMDrainHandsOver: a replica gets SIGTERM (docs/deploy.md, "Draining") while it
// holds what callers of both eras made it hold, with a second replica sharing the same Redis
// and a client that, as a load balancer does, goes to the other replica once the first stops
// accepting. Nothing is lost: a 2026-07-28 and a 2025-11-25 call in flight (go-sdk clients)
// finish on the draining replica after it stopped accepting, each run once; a form confirmation
// asked there is answered on the other replica, once; a call pending on the approval page is
// sent to the same page by the other replica, not asked afresh; the pre-2026 session goes on
// on the other replica, its GET stream too (the subscription made on the draining replica
// still delivers); and the draining replica exits.
func TestSIGTERMDrainHandsOver(t *testing.T) {
	iss := newIssuer(t)
	rs := testredis.Start(t)
	release := make(chan struct{})
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions(), holdingTool(release, nil))
	sets := listenSets(alpha)
	mutate := func(c *Config) {
		redisBackedCalls(c, iss, rs.URL(),
			authz.RuleConfig{ID: "page", Upstream: "alpha", Tools: []string{"whoami"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmURL},
			authz.RuleConfig{ID: "resources", Upstream: "alpha", Resources: []string{"*"}, AnyScope: []string{"tools:use"}})
		c.Approval.ClientID = "gateway-approval"
		c.Redis.Breaker = store.RedisBreaker{Cooldown: 50 * time.Millisecond}
	}
	cfg := testConfig("error", "text", alpha)
	cfg.Auth.Disabled = true
	mutate(cfg)
	cfg.applyDefaults()
	// A shutdown timeout far longer than the test waits for the replica to exit: the pre-2026
	// GET stream, which never finishes by itself, ends with the drain delay (docs/deploy.md),
	// not at that deadline, and nothing else may hold the drain either.
	cfg.Server.DrainDelay, cfg.Server.ShutdownTimeout = 50*time.Millisecond, 10*time.Minute
	cfg.Upstreams[0].Timeout = time.Minute
	a, terminate, done := startServing(t, cfg)
	waitNoticesSubscribed(t, a)
	b := startTestGateway(t, mutate, alpha)
	alice := mintFor(t, iss, "alice")

	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	lb := func() mcptest.ClientOption {
		return mcptest.WithRoundTripper(&failover{base: base, hosts: []string{a.MCP, b.MCP}})
	}
	modernProgress, onModern := progressSignal()
	modern := mcptest.Connect(t, "http://"+a.MCP+"/mcp", mcptest.WithBearer(alice), mcptest.WithProgress(onModern), lb())
	legacyProgress, onLegacy := progressSignal()
	updates := &mcptest.ResourceUpdates{}
	// As a go-sdk client left at its defaults, it reconnects a GET stream the server ended.
	legacy := mcptest.Connect(t, "http://"+a.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithBearer(alice),
		mcptest.WithProgress(onLegacy), mcptest.WithResourceUpdated(updates.Handler), lb(), mcptest.WithRetries(5))
	if err := legacy.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "alpha+" + mcptest.ResourceReadme}); err != nil {
		t.Fatal(err)
	}
	waitListen(t, sets, mcptest.ResourceReadme)
	hearsOf(t, alpha, updates, mcptest.ResourceReadme, "before the SIGTERM")
	modernCall, legacyCall := heldCall(t, modern, modernProgress), heldCall(t, legacy, legacyProgress)
	confirmation := askEchoConfirmation(t, a, alice)
	_, page := callWithMeta(t, a, alice, urlElicitMeta, "alpha__whoami", `{}`, "")
	pageID := page.Result.InputRequests["io.mcp-gateway/confirm"].Params.ElicitationID
	if page.Result.ResultType != "input_required" || pageID == "" {
		t.Fatalf("approval page: %+v", page)
	}

	terminate()
	mcptest.WaitFor(t, "the draining replica stops accepting", func() bool {
		c, err := net.DialTimeout("tcp", a.MCP, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release)
	for era, call := range map[string]<-chan heldResult{"2026-07-28": modernCall, "2025-11-25": legacyCall} {
		if r := <-call; r.err != nil || r.res.IsError || mcptest.ResultText(r.res) != "held to the end" {
			t.Errorf("the %s call in flight at SIGTERM: %v %+v", era, r.err, r.res)
		}
	}
	if n := len(alpha.RequestsOf("tools/call")); n != 2 {
		t.Errorf("the backend got %d calls for the two in flight, want 2", n)
	}
	answerTakenOnce(t, b, alice, alpha, confirmation, "asked on the draining replica, answered on the other")
	if status, _, r := retryPage(t, b, alice, page.Result.RequestState); status != http.StatusOK || r.Result.ResultType != "input_required" ||
		r.Result.InputRequests["io.mcp-gateway/confirm"].Params.ElicitationID != pageID {
		t.Errorf("the page call pending on the draining replica, retried on the other: %d %+v, want the same page %s", status, r, pageID)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(reloadWait):
		t.Fatal("the draining replica did not exit")
	}
	if res, err := legacy.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil || res.IsError {
		t.Fatalf("the pre-2026 session on the other replica: %+v %v", res, err)
	}
	hearsOf(t, alpha, updates, mcptest.ResourceReadme, "after the draining replica exited")
}
