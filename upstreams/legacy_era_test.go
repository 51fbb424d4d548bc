package upstreams

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// flakyProxy stands between the gateway and a real backend. It can answer every request, or
// only server/discover, with a bare status (as a load balancer, a restarting backend or a
// misrouted path does), and can switch its target. It counts the legacy initialize requests
// that reached it.
type flakyProxy struct {
	url      string
	mu       sync.Mutex
	target   *httputil.ReverseProxy
	status   int  // 0: pass through
	discover bool // the status applies to server/discover only
	rpcCode  int  // non-zero: the status comes with a JSON-RPC error of this code, as a proxy or an auth layer that speaks MCP answers
	inits    atomic.Int64
	failed   atomic.Int64 // the requests answered with status
	// sessions, when set, takes every request on a session, as a load balancer with session
	// affinity sends it to the server that assigned the session.
	sessions *httputil.ReverseProxy
}

func startFlakyProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	p := &flakyProxy{}
	p.setTarget(target)
	p.url = upstreamstest.Loopback(t, http.HandlerFunc(p.serve)) + mcptest.EndpointPath
	return p
}

func (p *flakyProxy) setTarget(raw string) {
	u, _ := url.Parse(raw)
	u.Path = ""
	p.mu.Lock()
	p.target = httputil.NewSingleHostReverseProxy(u)
	p.mu.Unlock()
}

// fail makes the proxy answer status (0: pass through again), to everything or to
// server/discover only.
func (p *flakyProxy) fail(status int, discoverOnly bool) {
	p.mu.Lock()
	p.status, p.discover = status, discoverOnly
	p.mu.Unlock()
}

func (p *flakyProxy) serve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	raw, _ := httputil.DumpRequest(r, true) // keeps r.Body readable
	if i := indexBody(raw); i >= 0 {
		_ = json.Unmarshal(raw[i:], &body)
	}
	if body.Method == era.MethodInitialize {
		p.inits.Add(1)
	}
	p.mu.Lock()
	status, discoverOnly, target, rpcCode := p.status, p.discover, p.target, p.rpcCode
	if p.sessions != nil && r.Header.Get("Mcp-Session-Id") != "" {
		target = p.sessions
	}
	p.mu.Unlock()
	if status != 0 && (!discoverOnly || body.Method == MethodDiscover) {
		p.failed.Add(1)
		if rpcCode != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`,
				cmp.Or(string(body.ID), "null"), rpcCode, http.StatusText(status))
			return
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	target.ServeHTTP(w, r)
}

// indexBody returns where the body starts in a dumped request.
func indexBody(dump []byte) int {
	for i := 0; i+3 < len(dump); i++ {
		if string(dump[i:i+4]) == "\r\n\r\n" {
			return i + 4
		}
	}
	return -1
}

// TestEraDoesNotFlipOnTransientAnswers: once a token-exchange backend's era is learnt, bare
// 404, 405, 400 and 502 answers (to calls and to the health probe) fail those requests but
// never change the era: no legacy handshake is tried, and when the backend is back every call
// reaches it as the caller, never as the gateway.
func TestEraDoesNotFlipOnTransientAnswers(t *testing.T) {
	as := startAuthServer(t, nil)
	backend := mcptest.StartServer(t, "alpha")
	proxy := startFlakyProxy(t, backend.URL())
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: proxy.url,
		Auth: as.auth(AuthTokenExchange, backend.URL()), Breaker: BreakerConfig{Disabled: true}}}}, Options{})
	b := r.byName["alpha"]
	alice, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
	ctx := context.Background()
	call := func() error { return callAs(ctx, r, mcptest.ToolWhoAmI, `{}`, alice, as.iss.URL()+"#alice") }
	if err := call(); err != nil {
		t.Fatal(err)
	}
	if b.Era() != era.Modern {
		t.Fatal("the era was not learnt from the backend's DiscoverResult")
	}
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusBadRequest, http.StatusBadGateway} {
		for _, discoverOnly := range []bool{false, true} {
			proxy.fail(status, discoverOnly)
			if err := call(); err == nil && !discoverOnly {
				t.Fatalf("HTTP %d: the call succeeded through a failing proxy", status)
			}
			r.probe(ctx, false) // the health probe meets the same answer
			if e := b.Era(); e != era.Modern {
				t.Fatalf("HTTP %d (discover only: %v): the era became %d", status, discoverOnly, e)
			}
		}
	}
	proxy.fail(0, false)
	if err := call(); err != nil {
		t.Fatalf("after the backend came back: %v", err)
	}
	if n := proxy.inits.Load(); n != 0 {
		t.Fatalf("%d legacy initialize requests were sent to a modern backend", n)
	}
	for _, ex := range backend.Requests() {
		if ex.Header.Get("Mcp-Method") == MethodToolsCall && bearerSub(t, ex) != "alice" {
			t.Fatalf("a tools/call reached the backend as %q", bearerSub(t, ex))
		}
	}
}

// skewClock is the real clock moved forward by what Skip adds: the issuers' tokens stay valid,
// and a backoff can be passed without waiting for it.
type skewClock struct{ ahead atomic.Int64 }

func (c *skewClock) Now() time.Time       { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *skewClock) Skip(d time.Duration) { c.ahead.Add(int64(d)) }

// TestEraUnknownStaysUnknownOnTransientAnswers: while the era is unknown, a bare answer that
// no legacy handshake confirms (or a 502) leaves it unknown; the backend is not taken for a
// legacy one, and the first definitive answer (the first probe after the failures' backoff)
// decides.
func TestEraUnknownStaysUnknownOnTransientAnswers(t *testing.T) {
	as := startAuthServer(t, nil)
	backend := mcptest.StartServer(t, "alpha")
	proxy := startFlakyProxy(t, backend.URL())
	clock := &skewClock{}
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: proxy.url,
		Auth: as.auth(AuthTokenExchange, backend.URL()), Breaker: BreakerConfig{Disabled: true}}}}, Options{Clock: clock.Now})
	b := r.byName["alpha"]
	alice, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
	ctx := context.Background()
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusBadRequest, http.StatusBadGateway} {
		proxy.fail(status, false)
		clock.Skip(time.Minute) // past the previous failure's backoff: this one is probed
		if err := callAs(ctx, r, mcptest.ToolWhoAmI, `{}`, alice, as.iss.URL()+"#alice"); err == nil {
			t.Fatalf("HTTP %d: the call succeeded through a failing proxy", status)
		}
		if e := b.Era(); e != era.Unknown {
			t.Fatalf("HTTP %d: an unconfirmed answer set the era to %d", status, e)
		}
	}
	proxy.fail(0, false)
	clock.Skip(time.Minute)
	if err := callAs(ctx, r, mcptest.ToolWhoAmI, `{}`, alice, as.iss.URL()+"#alice"); err != nil {
		t.Fatal(err)
	}
	if b.Era() != era.Modern {
		t.Fatal("the era was not learnt once the backend answered")
	}
	if got := bearerSub(t, lastRequest(t, backend, MethodToolsCall)); got != "alice" {
		t.Fatalf("the call reached the backend as %q", got)
	}
}

// TestEraRelearnedFromNamedAnswers: a learnt era changes only when the health probe gets an
// answer naming the versions: a backend replaced by a 2025-11-25 one (which names its versions
// in -32022) is bridged after the probe, with per-caller sessions, and back to modern once
// server/discover names 2026-07-28 again. A failed call alone changes nothing.
func TestEraRelearnedFromNamedAnswers(t *testing.T) {
	as := startAuthServer(t, nil)
	modern := mcptest.StartServer(t, "alpha")
	legacy := mcptest.StartLegacyServer(t, "alpha")
	proxy := startFlakyProxy(t, modern.URL())
	proxy.setTarget(legacy.URL())
	proxy.sessions = proxy.target // only the legacy server assigns sessions
	proxy.setTarget(modern.URL())
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: proxy.url,
		Auth: as.auth(AuthTokenExchange, modern.URL()), Breaker: BreakerConfig{Disabled: true}}}}, Options{})
	b := r.byName["alpha"]
	alice, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
	ctx := context.Background()
	call := func() error { return callAs(ctx, r, mcptest.ToolWhoAmI, `{}`, alice, as.iss.URL()+"#alice") }
	if err := call(); err != nil || b.Era() != era.Modern {
		t.Fatalf("modern backend: err %v, era %d", err, b.Era())
	}
	proxy.setTarget(legacy.URL())
	_ = call() // answered -32022: a failed call, not a reason to change the era
	if b.Era() != era.Modern {
		t.Fatal("a failed call changed the era")
	}
	r.probe(ctx, false)
	if b.Era() != era.Legacy {
		t.Fatal("the health probe's -32022 naming only legacy versions did not re-learn the era")
	}
	if err := call(); err != nil {
		t.Fatalf("bridged call: %v", err)
	}
	if got := bearerSub(t, lastLegacyRequest(t, legacy, MethodToolsCall)); got != "alice" {
		t.Fatalf("the bridged call reached the backend as %q", got)
	}
	proxy.setTarget(modern.URL())
	r.probe(ctx, false)
	if b.Era() != era.Modern {
		t.Fatal("a DiscoverResult naming 2026-07-28 did not re-learn the era as modern")
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	if got := bearerSub(t, lastRequest(t, modern, MethodToolsCall)); got != "alice" {
		t.Fatalf("the call reached the modern backend as %q", got)
	}
	mcptest.WaitFor(t, "the legacy sessions to be ended", func() bool {
		opened, ended := map[string]bool{}, map[string]bool{}
		for _, ex := range legacy.Requests() {
			if id := ex.ResponseHeader.Get("Mcp-Session-Id"); id != "" && legacyMethod(ex) == era.MethodInitialize {
				opened[id] = true
			}
			if ex.Method == http.MethodDelete {
				ended[ex.Header.Get("Mcp-Session-Id")] = true
			}
		}
		return len(opened) >= 2 && maps.Equal(opened, ended) // the gateway's and alice's at least
	})
}

// hungBackend accepts connections and never answers, counting the connections it received.
type hungBackend struct {
	url   string
	conns atomic.Int64
}

func startHungBackend(t *testing.T) *hungBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungBackend{url: "http://" + ln.Addr().String() + "/mcp"}
	var mu sync.Mutex
	var open []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns.Add(1)
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
	})
	return h
}

// TestEraProbeSharedAndCancellationSafe: while a hung backend's era is unknown, concurrent
// calls share one probe (one connection); the caller that started it going away does not end
// it for the others, which get its own outcome (the backend's timeout).
func TestEraProbeSharedAndCancellationSafe(t *testing.T) {
	hung := startHungBackend(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: hung.url, Timeout: 5 * time.Second}}}, Options{})
	first, leave := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() { firstErr <- callAs(first, r, "echo", `{}`, "", "") }()
	mcptest.WaitFor(t, "the probe's connection", func() bool { return hung.conns.Load() == 1 })
	const n = 20
	errs := make(chan error, n)
	for range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			errs <- callAs(ctx, r, "echo", `{}`, "", "")
		}()
	}
	leave()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that left: err = %v, want context.Canceled", err)
	}
	for range n {
		if err := <-errs; !errors.Is(err, ErrTimeout) {
			t.Fatalf("a waiting caller: err = %v, want the probe's ErrTimeout", err)
		}
	}
	if c := hung.conns.Load(); c != 1 {
		t.Fatalf("%d calls opened %d connections, want one shared probe", n+1, c)
	}
}

// TestEraProbeGovernedByBreaker: the shared probe counts once for the breaker however many
// calls waited for it, and once the breaker has opened on a hung backend, calls fail fast with
// ErrCircuitOpen instead of each probing it again.
func TestEraProbeGovernedByBreaker(t *testing.T) {
	hung := startHungBackend(t)
	var probes atomic.Int64 // era probes recorded
	clock := &skewClock{}
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: hung.url, Timeout: 300 * time.Millisecond,
		Breaker: BreakerConfig{Failures: 2, Cooldown: time.Hour}}}}, Options{Clock: clock.Now,
		Observe: func(_, method, _ string, _ time.Duration) {
			if method == MethodDiscover {
				probes.Add(1)
			}
		}})
	// A caller's own timeout may pass a moment before the probe's, which records after it.
	recorded := func(n int64) {
		mcptest.WaitFor(t, "the probe's outcome to be recorded", func() bool { return probes.Load() == n })
	}
	ctx := context.Background()
	calls := func(n int) []error {
		errs := make(chan error, n)
		for range n {
			go func() { errs <- callAs(ctx, r, "echo", `{}`, "", "") }()
		}
		out := make([]error, n)
		for i := range out {
			out[i] = <-errs
		}
		return out
	}
	for _, err := range calls(10) {
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("first round: err = %v, want ErrTimeout", err)
		}
	}
	recorded(1)
	if st := r.CircuitStates()["alpha"]; st != CircuitClosed || hung.conns.Load() != 1 {
		t.Fatalf("10 calls on one probe: circuit %d after %d connections, want closed (one failure) after 1", st, hung.conns.Load())
	}
	clock.Skip(time.Minute) // past the first probe's backoff
	if err := callAs(ctx, r, "echo", `{}`, "", ""); !errors.Is(err, ErrTimeout) {
		t.Fatalf("second probe: err = %v, want ErrTimeout", err)
	}
	recorded(2)
	if st := r.CircuitStates()["alpha"]; st != CircuitOpen {
		t.Fatalf("the second probe's timeout did not open the circuit (state %d)", st)
	}
	const n = 50
	for _, err := range calls(n) {
		if !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("with the circuit open: err = %v, want ErrCircuitOpen", err)
		}
	}
	if c := hung.conns.Load(); c != 2 {
		t.Fatalf("%d connections after %d calls with the circuit open, want the two probes' only", c, n)
	}
}

// TestListLeavesOutHungBackend: a list over a hung backend whose era is unknown and a healthy
// one answers with the healthy backend's items well within a deadline far shorter than the hung
// backend's timeout, while calls to the hung backend share a single probe.
func TestListLeavesOutHungBackend(t *testing.T) {
	hung := startHungBackend(t)
	beta := mcptest.StartServer(t, "beta")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: hung.url, Timeout: time.Minute},
		{Name: "beta", URL: beta.URL()},
	}}, Options{})
	calls, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { _ = callAs(calls, r, "echo", `{}`, "", "") })
	}
	defer func() { stop(); wg.Wait() }()
	mcptest.WaitFor(t, "the probe's connection", func() bool { return hung.conns.Load() == 1 })
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := r.List(ctx, &ListRequest{Method: MethodToolsList, Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
		cancel()
		if err != nil {
			t.Fatalf("list %d: %v", i, err)
		}
		var list struct {
			Tools []struct{ Name string } `json:"tools"`
			TTLMs int64                   `json:"ttlMs"`
		}
		if err := json.Unmarshal(res, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Tools) == 0 || list.TTLMs != 0 {
			t.Fatalf("list %d: %d tools, ttlMs %d; want beta's tools in an uncacheable partial list", i, len(list.Tools), list.TTLMs)
		}
		for _, tool := range list.Tools {
			if tool.Name[:len("beta__")] != "beta__" {
				t.Fatalf("list %d has %s", i, tool.Name)
			}
		}
	}
	if c := hung.conns.Load(); c != 1 {
		t.Fatalf("10 calls and 3 lists opened %s connections to the hung backend, want 1", strconv.FormatInt(c, 10))
	}
}
