package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Hostile clients at the gateway's edge (issue 22): bodies that trickle in, responses nobody
// reads, and many large results at once. Each test runs the real gateway on loopback with
// authentication on, in front of a backend written for the test, and a healthy authenticated
// caller whose errors are counted while the attack runs. Memory is the process's heap (the
// gateway runs in the test process; the test's own clients allocate little), sampled with
// runtime/metrics.

// bigText is the size of the "big" tool's text: the 15 MB result of the probe.
const bigText = 15 << 20

// manyBlocks is how many 1 KiB text blocks the "many" tool answers: a 6 MiB result of short
// strings.
const manyBlocks = 6 << 10

// edgeBackend is a 2026-07-28 backend that decodes each request with encoding/json, as Go
// backends do: "small" answers a short text, "big" a text of bigText bytes.
type edgeBackend struct {
	srv   *httptest.Server
	big   []byte // the whole "big" response but for the id, built once
	many  []byte // the whole "many" response but for the id: manyBlocks blocks of 1 KiB
	calls atomic.Int64
	// large counts the calls of the big and stream tools, which only attackers make.
	large atomic.Int64
	// streams counts "stream" calls that are still being answered.
	streams atomic.Int64
}

func startEdgeBackend(t *testing.T) *edgeBackend {
	t.Helper()
	b := &edgeBackend{}
	b.big = []byte(`,"result":{"content":[{"type":"text","text":"` + strings.Repeat("q", bigText) + `"}]}}`)
	block := `{"type":"text","text":"` + strings.Repeat("m", 1<<10) + `"}`
	b.many = []byte(`,"result":{"content":[` + strings.Repeat(block+",", manyBlocks-1) + block + `]}}`)
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *edgeBackend) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	head := `{"jsonrpc":"2.0","id":` + string(req.ID)
	switch {
	case req.Method == "server/discover":
		_, _ = io.WriteString(w, head+`,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"edge","version":"1"}}}`)
	case req.Method == "tools/list":
		_, _ = io.WriteString(w, head+`,"result":{"tools":[{"name":"small","inputSchema":{"type":"object"}},{"name":"big","inputSchema":{"type":"object"}},{"name":"many","inputSchema":{"type":"object"}},{"name":"stream","inputSchema":{"type":"object"}}]}}`)
	case req.Method == "tools/call" && req.Params.Name == "stream":
		// Progress notifications of 64 KiB, every 10 ms, until the gateway lets go.
		b.calls.Add(1)
		b.large.Add(1)
		b.streams.Add(1)
		defer b.streams.Add(-1)
		w.Header().Set("Content-Type", "text/event-stream")
		event := []byte(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"` +
			strings.Repeat("q", 64<<10) + `"}}` + "\n\n")
		rc := http.NewResponseController(w)
		for {
			if _, err := w.Write(event); err != nil || rc.Flush() != nil {
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	case req.Method == "tools/call" && (req.Params.Name == "big" || req.Params.Name == "many"):
		b.calls.Add(1)
		b.large.Add(1)
		body := b.big
		if req.Params.Name == "many" {
			body = b.many
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(body)))
		_, _ = io.WriteString(w, head)
		_, _ = w.Write(body)
	case req.Method == "tools/call":
		b.calls.Add(1)
		_, _ = io.WriteString(w, head+`,"result":{"content":[{"type":"text","text":"ok"}]}}`)
	default:
		_, _ = io.WriteString(w, head+`,"error":{"code":-32601,"message":"Method not found"}}`)
	}
}

type edgeFixture struct {
	authGateway
	backend  *edgeBackend
	healthy  string // the token of the caller who must not suffer
	attacker string // an authenticated attacker's token
}

func startEdgeGateway(t *testing.T, mutate func(*Config)) *edgeFixture {
	t.Helper()
	f := &edgeFixture{authGateway: authGateway{iss: newIssuer(t)}, backend: startEdgeBackend(t)}
	f.gw = startTestGateway(t, func(c *Config) {
		trustIssuers(c, f.iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "edge", Upstream: "edge", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
		c.HealthInterval = time.Hour
		c.Upstreams = []UpstreamConfig{{UpstreamConfig: upstreams.UpstreamConfig{Name: "edge", URL: f.backend.srv.URL + "/mcp", Protocol: "2026-07-28", Timeout: 30 * time.Second}}}
		if mutate != nil {
			mutate(c)
		}
	})
	f.healthy, f.attacker = mintFor(t, f.iss, "healthy"), mintFor(t, f.iss, "attacker")
	return f
}

// callUnread sends n calls of the edge tool with body as the attacker, each on a raw connection
// with a small receive buffer that is never read, and waits until the backend has received n
// calls of the big or stream tools (the healthy caller's calls do not count). The connections
// stay open until the test ends. The wait is a fail-safe for a loaded machine, not a timing.
func (f *edgeFixture) callUnread(t *testing.T, n int, tool, body string) {
	t.Helper()
	f.postUnread(t, n, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: edge__"+tool+"\r\n", body)
	if !settle(30*time.Second, func() bool { return f.backend.large.Load() >= int64(n) }) {
		t.Fatalf("the backend saw %d of %d calls", f.backend.large.Load(), n)
	}
}

// postUnread POSTs body n times as the attacker, with the headers given besides those every
// request carries, each on a raw connection with a small receive buffer that is never read and
// stays open until the test ends.
func (f *edgeFixture) postUnread(t *testing.T, n int, headers, body string) {
	t.Helper()
	for range n {
		c, err := net.Dial("tcp", f.gw.MCP)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\n%sAuthorization: Bearer %s\r\n"+
			"Content-Length: %d\r\n\r\n%s", f.gw.MCP, headers, f.attacker, len(body), body)
	}
}

func edgeCallBody(tool string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + testMeta + `,"name":"edge__` + tool + `","arguments":{}}}`
}

// call makes one tools/call and returns the HTTP status and the JSON-RPC error code (0 for a
// result); for "big" it checks that the whole text arrived, without holding it in memory.
func (f *edgeFixture) call(c *http.Client, tok, tool string) (status, code int, err error) {
	req, err := http.NewRequest(http.MethodPost, f.url(), strings.NewReader(edgeCallBody(tool)))
	if err != nil {
		return 0, 0, err
	}
	req.Header = modernHeaders("tools/call", "edge__"+tool)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK && tool == "big" {
		// Count the text's bytes in a small buffer: the test's own memory stays flat.
		n, err := countByte(res.Body, 'q')
		if err == nil && n != bigText {
			err = fmt.Errorf("big result: %d bytes of text, want %d", n, bigText)
		}
		return res.StatusCode, 0, err
	}
	var m struct{ Error *struct{ Code int } }
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&m); err != nil {
		return res.StatusCode, 0, err
	}
	if m.Error != nil {
		return res.StatusCode, m.Error.Code, nil
	}
	return res.StatusCode, 0, nil
}

func countByte(r io.Reader, c byte) (int, error) {
	buf := make([]byte, 32<<10)
	n := 0
	for {
		k, err := r.Read(buf)
		for _, b := range buf[:k] {
			if b == c {
				n++
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// healthyLoad calls the small tool as the healthy caller until stop is closed and counts calls
// and failures (anything but 200 with a result).
type healthyLoad struct {
	calls, errors atomic.Int64
	firstErr      atomic.Value
	done          chan struct{}
}

func (f *edgeFixture) healthyLoad(stop <-chan struct{}) *healthyLoad {
	h := &healthyLoad{done: make(chan struct{})}
	c := &http.Client{Timeout: 10 * time.Second}
	go func() {
		defer close(h.done)
		defer c.CloseIdleConnections()
		for {
			select {
			case <-stop:
				return
			default:
			}
			status, code, err := f.call(c, f.healthy, "small")
			h.calls.Add(1)
			if err != nil || status != http.StatusOK || code != 0 {
				h.errors.Add(1)
				h.firstErr.CompareAndSwap(nil, fmt.Sprintf("status %d code %d err %v", status, code, err))
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return h
}

// heapSampler records the peak of the heap (live and not yet swept objects) while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// liveHeap is the heap after a collection: what is really held.
func liveHeap() uint64 {
	runtime.GC()
	return heapBytes()
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := heapBytes(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) end() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

// settle waits (bounded) until cond holds, polling; it reports whether it did.
func settle(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

const mib = 1 << 20

// trickle opens a connection, sends a tools/call's headers without a token, declaring a
// body of declared bytes, and then one byte of it every interval until stop is closed.
func trickle(t *testing.T, addr string, declared int, interval time.Duration, stop <-chan struct{}, wg *sync.WaitGroup) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer c.Close()
		_, err := fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"+
			"Mcp-Method: tools/call\r\nMcp-Name: edge__small\r\nContent-Length: %d\r\n\r\n{", addr, declared)
		if err != nil {
			return
		}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
}

// TestSlowBodiesDoNotShutOutCallers (issue 22 §1): with far more unauthenticated clients
// trickling their bodies than the replica has in-flight slots, the healthy caller's calls keep
// succeeding, the declared sizes reserve no memory, and everything returns to the baseline once
// the attackers leave.
func TestSlowBodiesDoNotShutOutCallers(t *testing.T) {
	const (
		maxConcurrent = 8
		attackers     = 200 // 25 times the slots
		attack        = 3 * time.Second
	)
	f := startEdgeGateway(t, func(c *Config) {
		c.Server.MaxConcurrent = maxConcurrent
		// The 200 attackers stand for 200 addresses, which the per-client bound does not
		// group: the replica's total is what holds here (TestPerClientBoundsBehindProxy
		// shows the per-client bound).
		c.Server.PerClient.MaxUnauthenticated = -1
	})
	if status, code, err := f.call(http.DefaultClient, f.healthy, "small"); err != nil || status != 200 || code != 0 {
		t.Fatalf("warm-up call: %d %d %v", status, code, err)
	}
	baseGoroutines, baseHeap := runtime.NumGoroutine(), liveHeap()
	heap := sampleHeap()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range attackers {
		trickle(t, f.gw.MCP, 4*mib, 200*time.Millisecond, stop, &wg)
	}
	time.Sleep(200 * time.Millisecond) // every attacker is in its body before the load starts
	stopLoad := make(chan struct{})
	load := f.healthyLoad(stopLoad)
	time.Sleep(attack)
	close(stopLoad)
	<-load.done
	close(stop)
	wg.Wait()
	peak := heap.end()

	calls, errs := load.calls.Load(), load.errors.Load()
	t.Logf("healthy caller during the attack: %d calls, %d failed (%.1f%%); peak heap %.1f MiB over a live baseline of %.1f MiB",
		calls, errs, 100*float64(errs)/float64(max(calls, 1)), float64(peak-min(peak, baseHeap))/mib, float64(baseHeap)/mib)
	if calls < 20 {
		t.Fatalf("the healthy caller made only %d calls", calls)
	}
	if errs*100 > calls { // at most 1%
		t.Errorf("the healthy caller failed %d of %d calls while %d bodies trickled in (first: %v)",
			errs, calls, attackers, load.firstErr.Load())
	}
	// 200 trickling bodies hold a few KiB each (a connection's buffers and the bytes that
	// arrived), not their declared 4 MiB.
	if grown := peak - min(peak, baseHeap); grown > 64*mib {
		t.Errorf("heap grew by %d MiB during the attack", grown/mib)
	}
	if !settle(10*time.Second, func() bool { return runtime.NumGoroutine() <= baseGoroutines+10 }) {
		t.Errorf("goroutines: %d after the attack, %d before", runtime.NumGoroutine(), baseGoroutines)
	}
	checkBudgetsReturned(t, f.gw.Admin)
	if !settle(5*time.Second, func() bool { return liveHeap() < baseHeap+16*mib }) {
		t.Errorf("live heap %d MiB after the attack, %d MiB before", liveHeap()/mib, baseHeap/mib)
	}
}

// TestSlowBodyIsCut (issue 22 §1): a body still arriving when server.bodyReadTimeout has passed
// is answered 408 and its connection closed, however much it still trickles.
func TestSlowBodyIsCut(t *testing.T) {
	f := startEdgeGateway(t, func(c *Config) { c.Server.BodyReadTimeout = time.Second })
	c, err := net.Dial("tcp", f.gw.MCP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{", f.gw.MCP)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for range 60 { // 6 s of trickling at most
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response while the body trickled: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout || !res.Close {
		t.Fatalf("status %d, close %v; want 408 and the connection closed", res.StatusCode, res.Close)
	}
}

// scrapeValue reads one unlabelled sample from the admin listener's /metrics.
func scrapeValue(t *testing.T, admin, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(get(t, "http://"+admin+"/metrics"), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return -1
}

// TestUnreadResponsesAreCut (issue 22 §2): authenticated clients that ask for a 15 MB result and
// never read it have their responses cut at the write deadline, which releases the backend
// call, the handler and the buffers while the clients still hold their connections open; each
// is counted; the healthy caller is unaffected throughout.
func TestUnreadResponsesAreCut(t *testing.T) {
	const readers = 6
	f := startEdgeGateway(t, func(c *Config) {
		c.Server.WriteTimeout = time.Second
		c.Server.MinWriteRate = 16 << 20 // 15 MB gets 1 s more: about 2 s in all
		c.Server.MaxConcurrentPerCaller = readers
		c.Server.MaxConcurrent = 2 * readers
		// The one caller's share of the result budget (an eighth) holds all its readers' results.
		c.Server.MaxResultBytesInFlight = 1 << 30
	})
	if status, code, err := f.call(http.DefaultClient, f.healthy, "small"); err != nil || status != 200 || code != 0 {
		t.Fatalf("warm-up call: %d %d %v", status, code, err)
	}
	baseGoroutines, baseHeap := runtime.NumGoroutine(), liveHeap()
	stopLoad := make(chan struct{})
	load := f.healthyLoad(stopLoad)
	f.callUnread(t, readers, "big", edgeCallBody("big"))
	// The clients read nothing and keep their connections open. Within the deadlines every
	// handler lets go: goroutines and live heap return to the baseline.
	cut := settle(90*time.Second, func() bool { // a fail-safe bound for a loaded machine, not a timing
		return scrapeValue(t, f.gw.Admin, "mcp_gateway_client_write_timeouts_total") >= readers
	})
	released := settle(5*time.Second, func() bool {
		return runtime.NumGoroutine() <= baseGoroutines+10+2 && liveHeap() < baseHeap+32*mib
	})
	close(stopLoad)
	<-load.done
	live := liveHeap()
	t.Logf("%d unread 15 MB responses: live heap %.1f MiB over the baseline after the deadlines; healthy caller %d calls, %d failed",
		readers, float64(live-min(live, baseHeap))/mib, load.calls.Load(), load.errors.Load())
	if !cut {
		t.Errorf("mcp_gateway_client_write_timeouts_total = %v, want %d", scrapeValue(t, f.gw.Admin, "mcp_gateway_client_write_timeouts_total"), readers)
	}
	if !released {
		t.Errorf("with the clients still connected: %d goroutines (baseline %d), live heap %d MiB (baseline %d MiB)",
			runtime.NumGoroutine(), baseGoroutines, live/mib, baseHeap/mib)
	}
	if errs := load.errors.Load(); errs*100 > load.calls.Load() {
		t.Errorf("the healthy caller failed %d of %d calls (first: %v)", errs, load.calls.Load(), load.firstErr.Load())
	}
	checkBudgetsReturned(t, f.gw.Admin)
}

// TestLargeResultsBoundedMemory (issue 22 §3): many concurrent 15 MB results are relayed whole
// or refused once the replica's result budget is spent (503/-32014) or, all of them being one
// caller's, its share of it (429/-32012), and the heap stays
// within a bound set by that budget, not by the number of callers.
func TestLargeResultsBoundedMemory(t *testing.T) {
	const (
		callers = 8
		each    = 3
		budget  = 64 * mib
	)
	f := startEdgeGateway(t, func(c *Config) { c.Server.MaxResultBytesInFlight = budget })
	if status, code, err := f.call(http.DefaultClient, f.healthy, "big"); err != nil || status != 200 || code != 0 {
		t.Fatalf("one big call alone: %d %d %v", status, code, err)
	}
	baseHeap := liveHeap()
	heap := sampleHeap()
	var ok, refused, other atomic.Int64
	var firstOther atomic.Value
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 30 * time.Second}
			defer c.CloseIdleConnections()
			for range each {
				status, code, err := f.call(c, f.attacker, "big")
				switch {
				case err == nil && status == 200 && code == 0:
					ok.Add(1)
				case err == nil && status == http.StatusServiceUnavailable && code == -32014,
					err == nil && status == http.StatusTooManyRequests && code == -32012: // the caller's share
					refused.Add(1)
				default:
					other.Add(1)
					firstOther.CompareAndSwap(nil, fmt.Sprintf("status %d code %d err %v", status, code, err))
				}
			}
		}()
	}
	wg.Wait()
	peak := heap.end()
	grown := peak - min(peak, baseHeap)
	t.Logf("%d callers × %d calls of 15 MB: %d relayed, %d refused; peak heap %.1f MiB over the baseline (budget %d MiB)",
		callers, each, ok.Load(), refused.Load(), float64(grown)/mib, budget/mib)
	if other.Load() > 0 {
		t.Errorf("%d calls neither succeeded nor were refused with 503/-32014 or 429/-32012 (first: %v)", other.Load(), firstOther.Load())
	}
	if ok.Load() == 0 {
		t.Error("no call was relayed")
	}
	// The budget bounds the live buffers; the garbage collector lets the heap reach about
	// twice the live size, plus the connections' own buffers.
	if grown > 3*budget {
		t.Errorf("heap grew by %d MiB with a result budget of %d MiB", grown/mib, budget/mib)
	}
	if !settle(5*time.Second, func() bool { return liveHeap() < baseHeap+16*mib }) {
		t.Errorf("live heap %d MiB after the calls, %d MiB before", liveHeap()/mib, baseHeap/mib)
	}
	checkBudgetsReturned(t, f.gw.Admin)
}

// checkBudgetsReturned: once nothing is in flight, the body and result budgets are whole again,
// so that no request, whatever became of it, keeps a share of them.
func checkBudgetsReturned(t *testing.T, admin string) {
	t.Helper()
	for _, name := range []string{"mcp_gateway_request_body_bytes_in_flight", "mcp_gateway_result_bytes_in_flight"} {
		if !settle(5*time.Second, func() bool { return scrapeValue(t, admin, name) == 0 }) {
			t.Errorf("%s = %v with nothing in flight", name, scrapeValue(t, admin, name))
		}
	}
}

// TestUnreadStreamIsCut (issue 22 §2): an SSE response is bounded by its progress, not only its
// start: clients that stop reading a stream of progress events have it cut at the write
// deadline of the event that no longer goes out, which also ends the backend's stream, and each
// is counted.
func TestUnreadStreamIsCut(t *testing.T) {
	const readers = 4
	f := startEdgeGateway(t, func(c *Config) {
		c.Server.WriteTimeout = time.Second
		c.Upstreams[0].Timeout = time.Minute // longer than the test: only the deadline can end it
	})
	body := strings.Replace(edgeCallBody("stream"), `clientCapabilities":{}}`, `clientCapabilities":{},"progressToken":"p"}`, 1)
	f.callUnread(t, readers, "stream", body)
	cut := settle(20*time.Second, func() bool {
		return scrapeValue(t, f.gw.Admin, "mcp_gateway_client_write_timeouts_total") >= readers && f.backend.streams.Load() == 0
	})
	if !cut {
		t.Fatalf("write timeouts %v, backend streams still open %d; want %d and 0",
			scrapeValue(t, f.gw.Admin, "mcp_gateway_client_write_timeouts_total"), f.backend.streams.Load(), readers)
	}
	checkBudgetsReturned(t, f.gw.Admin)
}
