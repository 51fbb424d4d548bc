package pre2026

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// pokeUntil makes the backend send resources/updated for each of uris, round after round, until
// the client has received one for want; it returns everything received up to then. Bounded.
func pokeUntil(t *testing.T, be *mcptest.Server, u *mcptest.ResourceUpdates, want string, uris ...string) []string {
	t.Helper()
	var all []string
	for i := 0; i < 400; i++ {
		for _, uri := range uris {
			_ = be.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		time.Sleep(25 * time.Millisecond) // a poll interval, not an assertion
		all = append(all, u.Drain()...)
		if slices.Contains(all, want) {
			return all
		}
	}
	t.Fatalf("no resources/updated for %s; got %q", want, all)
	return nil
}

// watching reports whether s holds a GET stream of some session.
func watching(s *Edge) bool {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.watchers) > 0
}

// TestLegacySubscribeAcrossReplicas: a go-sdk client pinned to 2025-11-25 whose GET stream is
// held by replica A and whose POSTs all reach replica B (sharing a real Redis) subscribes to a
// resource and gets resources/updated for it, with the URI as it knows it; unsubscribing stops
// them while a subscription to another resource goes on.
func TestLegacySubscribeAcrossReplicas(t *testing.T) {
	const other = "mem://items/alpha"
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions())
	a, b, sa, _ := twoReplicas(t, be)
	rt := newRouteTransport(t, a.URL)
	rt.post.Store(&b.URL)
	updates := &mcptest.ResourceUpdates{}
	cs := mcptest.Connect(t, b.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithResourceUpdated(updates.Handler), mcptest.WithRoundTripper(rt))
	if r := cs.InitializeResult().Capabilities.Resources; r == nil || !r.Subscribe {
		t.Fatalf("initialize does not advertise resources.subscribe: %+v", r)
	}
	for i := 0; !watching(sa); i++ {
		if i == 1000 {
			t.Fatal("the client's GET stream never reached replica A")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx := t.Context()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "be+" + mcptest.ResourceReadme}); err != nil {
		t.Fatal(err)
	}
	got := pokeUntil(t, be, updates, "be+"+mcptest.ResourceReadme, mcptest.ResourceReadme, other)
	if slices.Contains(got, "be+"+other) {
		t.Fatalf("an update for a resource nobody subscribed to: %q", got)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "be+" + mcptest.ResourceReadme}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "be+" + other}); err != nil {
		t.Fatal(err)
	}
	// Once an update of the new subscription arrives the stream runs with the new set; the
	// backend sends readme's update before other's on the same stream, so it would come first.
	pokeUntil(t, be, updates, "be+"+other, other)
	got = pokeUntil(t, be, updates, "be+"+other, mcptest.ResourceReadme, other)
	if slices.Contains(got, "be+"+mcptest.ResourceReadme) {
		t.Fatalf("updates after unsubscribe: %q", got)
	}
}

// TestLegacySubscribePolicy: a subscription is authorised as resources/read is: a URI the
// caller's policy hides is refused with the very bytes resources/read of it gets, and nothing
// is recorded; an allowed one is recorded in normal form; unsubscribing a URI never subscribed
// is {}; a session's subscriptions are bounded.
func TestLegacySubscribePolicy(t *testing.T) {
	const resource = "https://mcp.test.invalid/mcp"
	iss, err := devissuer.New(devissuer.Options{Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	auth, err := authz.New(authz.Config{
		Issuers: []authz.IssuerConfig{{Issuer: iss.URL()}},
		Policy: authz.PolicyConfig{Rules: []authz.RuleConfig{
			{ID: "no-hr", Upstream: "be", Resources: []string{"mem://hr/**"}, Effect: authz.EffectDeny},
			{ID: "docs", Upstream: "be", Resources: []string{"**"}, Tools: []string{"*"}, AnyScope: []string{"docs:read"}},
		}},
	}, authz.Options{ResourceURI: resource})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := iss.Mint(devissuer.Claims{"sub": "alice", "scope": "docs:read"})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions(), numberedResources())
	gw, s := startLegacyGateway(t, gwSpec{Deps: mcphttp.Deps{Auth: auth}, EdgeDeps: Deps{State: mem}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`, "Authorization", "Bearer "+tok)
	h := legacyHeaders("2025-11-25", sid)
	h.Set("Authorization", "Bearer "+tok)
	sess, err := s.sessions.Open(sid, legacysession.Bind(iss.URL(), "alice"))
	if err != nil {
		t.Fatal(err)
	}
	stored := func() []string {
		cs, _ := s.state.stored(t, iss.URL()+"#alice")
		if e := cs.entry(&sess); e != nil {
			return e.URIs
		}
		return nil
	}
	req := func(method, uri string) *response {
		return do(t, "POST", gw.URL, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"uri":%q}}`, method, uri))
	}

	read := req("resources/read", "be+mem://hr/salaries")
	sub := req("resources/subscribe", "be+mem://hr/salaries")
	if read.Status != 200 || sub.Status != read.Status || string(sub.Body) != string(read.Body) {
		t.Fatalf("subscribe to a hidden resource: %d %s; resources/read: %d %s", sub.Status, sub.Body, read.Status, read.Body)
	}
	if got := stored(); got != nil {
		t.Fatalf("a refused subscription was recorded: %q", got)
	}
	if r := req("resources/subscribe", "be+MEM://readme"); r.Status != 200 || string(r.Body) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	if got := stored(); !slices.Equal(got, []string{"be+mem://readme"}) {
		t.Fatalf("recorded %q, want the normal form", got)
	}
	// A resource a read does not find is not recorded: the subscription gets the read's answer.
	read = req("resources/read", "be+mem://never")
	if sub := req("resources/subscribe", "be+mem://never"); read.RPC.Error == nil || string(sub.Body) != string(read.Body) {
		t.Fatalf("subscribe to a resource that does not exist: %s; resources/read: %s", sub.Body, read.Body)
	}
	if got := stored(); !slices.Equal(got, []string{"be+mem://readme"}) {
		t.Fatalf("a subscription to a resource that does not exist was recorded: %q", got)
	}
	if r := req("resources/unsubscribe", "be+mem://never"); string(r.Body) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("unsubscribe of an unknown URI: %s", r.Body)
	}
	for i := 1; i < maxSessionSubscriptions; i++ {
		if r := req("resources/subscribe", fmt.Sprintf("be+mem://r/%d", i)); r.RPC.Error != nil {
			t.Fatalf("subscription %d: %s", i, r.Body)
		}
	}
	if r := req("resources/subscribe", "be+mem://r/one-too-many"); r.Status != 200 || r.RPC.Error == nil || r.RPC.Error.Code != -32602 {
		t.Fatalf("subscription beyond the bound: %d %s", r.Status, r.Body)
	}
	if got := stored(); len(got) != maxSessionSubscriptions {
		t.Fatalf("%d subscriptions recorded", len(got))
	}
	if r := req("resources/unsubscribe", "be+mem://readme"); r.RPC.Error != nil || slices.Contains(stored(), "be+mem://readme") {
		t.Fatalf("unsubscribe: %s", r.Body)
	}
}

// numberedResources serves mem://r/{n}: as many resources as a test subscribes to.
func numberedResources() mcptest.Option {
	return mcptest.WithResourceTemplate(&mcp.ResourceTemplate{Name: "numbered", URITemplate: "mem://r/{n}"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "n"}}}, nil
		})
}

// TestLegacySubscribeChurnPaced: a pre-2026 client whose GET stream replica A holds, sending
// resources/subscribe and resources/unsubscribe in a loop to replica B, does not make A
// reconnect to the backend for each change. A GET stream's inner listen starts again at most
// once per restartInterval (here longer than the test): 40 changes, each heard on A, open no
// backend listen stream beyond the one the GET stream started with. Before, each change
// restarted the listen, and the backend saw a new listen stream for every one.
func TestLegacySubscribeChurnPaced(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions())
	a, b, sa, _ := twoReplicas(t, be)
	sa.state.restartEvery = time.Hour // set before any GET stream starts
	heard := sa.state.received.Load()
	rt := newRouteTransport(t, a.URL)
	rt.post.Store(&b.URL)
	cs := mcptest.Connect(t, b.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithRoundTripper(rt))
	listens := func() int { return len(be.RequestsOf("subscriptions/listen")) }
	mcptest.WaitFor(t, "the GET stream's backend listen", func() bool { return watching(sa) && listens() > 0 })
	opened := listens()
	const changes = 40
	for i := range changes / 2 {
		uri := "be+" + mcptest.ResourceReadme
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %d: %v", i, err)
		}
		if err := cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
			t.Fatalf("unsubscribe %d: %v", i, err)
		}
	}
	mcptest.WaitFor(t, "replica A heard of every change", func() bool { return sa.state.received.Load()-heard >= changes })
	if n := listens(); n != opened {
		t.Errorf("the backend saw %d listen streams opened after %d subscription changes, want the GET stream's %d", n, changes, opened)
	}
}

// TestLegacySubscribeKeepsAlive: resources/subscribe reads the resource at its backend before
// it records the subscription, and while that read runs the client's response gets keep-alive
// comments, as a resources/read's would: a backend that takes longer than the interval does not
// leave the response silent. (The read's sink dropped them, and the response stayed silent.)
func TestLegacySubscribeKeepsAlive(t *testing.T) {
	slow := mcptest.WithResourceTemplate(&mcp.ResourceTemplate{Name: "slow", URITemplate: "mem://slow/{n}"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			select {
			case <-time.After(300 * time.Millisecond): // several keep-alive intervals
			case <-ctx.Done():
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "slow"}}}, nil
		})
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions(), slow)
	gw, _ := startLegacyGateway(t, gwSpec{Server: mcphttp.Config{SSEKeepAlive: 40 * time.Millisecond}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
		`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"be+mem://slow/1"}}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"result":{}`) {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	if n := strings.Count(string(r.Body), ": keep-alive\n\n"); n < 1 {
		t.Errorf("no keep-alive comment while the backend read the resource: %s", r.Body)
	}
}

// TestLegacySubscribeReadsOnlyWhatItRecords: resources/subscribe reads the resource at its
// backend only for a subscription it is about to record: a repeat of one the session holds is
// answered {} without a read, and one past the caller's pace is answered 429 without a read.
// (The read ran first, so a client repeating its subscribe, or one held at 429, still cost the
// backend a read each time.)
func TestLegacySubscribeReadsOnlyWhatItRecords(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	mem, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions(), numberedResources())
	gw, _ := startLegacyGateway(t, gwSpec{Deps: mcphttp.Deps{Clock: clock.Now}, EdgeDeps: Deps{State: mem}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	h := legacyHeaders("2025-11-25", sid)
	subscribe := func(uri string) *response {
		return do(t, "POST", gw.URL, h, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"`+uri+`"}}`)
	}
	reads := func(uri string) int {
		n := 0
		for _, x := range be.RequestsOf("resources/read") {
			if strings.Contains(string(x.Body), uri) {
				n++
			}
		}
		return n
	}
	for i := range 3 {
		if r := subscribe("be+mem://r/1"); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"result":{}`) {
			t.Fatalf("subscribe %d: %d %s", i, r.Status, r.Body)
		}
	}
	if n := reads("mem://r/1"); n != 1 {
		t.Errorf("three subscribes of one resource read it %d times at the backend, want once", n)
	}
	levels := []string{"debug", "info"}
	limited := false
	for i := 0; i <= stateChangeBurst && !limited; i++ {
		r := do(t, "POST", gw.URL, h, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"`+levels[i%2]+`"}}`)
		limited = r.Status == http.StatusTooManyRequests
	}
	if !limited {
		t.Fatal("the caller's changes were never paced")
	}
	if r := subscribe("be+mem://r/2"); r.Status != http.StatusTooManyRequests {
		t.Fatalf("a subscribe past the pace: %d %s, want 429", r.Status, r.Body)
	}
	if n := reads("mem://r/2"); n != 0 {
		t.Errorf("a subscribe answered 429 read the resource %d times at the backend, want none", n)
	}
	if r := subscribe("be+mem://r/1"); r.Status != http.StatusOK {
		t.Errorf("a repeat past the pace: %d %s, want {}", r.Status, r.Body)
	}
	clock.Advance(time.Second / stateChangeRate)
	if r := subscribe("be+mem://r/2"); r.Status != http.StatusOK || reads("mem://r/2") != 1 {
		t.Errorf("a subscribe once the pace allows: %d %s, %d reads, want {} after one", r.Status, r.Body, reads("mem://r/2"))
	}
}
