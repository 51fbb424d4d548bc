package gateway

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// How a reload replaces the component set that serves requests (docs/deploy.md, "Changing the
// configuration"). Requests find the current set through an atomic pointer and are counted on
// it; a request keeps the set it started on to its end. A replaced set is retired: it takes no
// new request, and once its last one has finished (or server.shutdownTimeout has passed and the
// connections still holding one were closed) its background work ends and its backends'
// connections are released.

// gate counts a set's requests in flight and, once closed, refuses new ones and reports when the
// last one has left. Entering and leaving cost one atomic add each.
type gate struct {
	n       atomic.Int64 // requests in flight, plus gateClosed once closed
	once    sync.Once
	drained chan struct{} // closed when the gate is closed and no request is in flight
}

const gateClosed = 1 << 62

// enter admits a request unless the gate is closed.
func (g *gate) enter() bool {
	if g.n.Add(1) >= gateClosed {
		g.leave()
		return false
	}
	return true
}

// leave ends a request admitted by enter (or refused by it).
func (g *gate) leave() {
	if g.n.Add(-1) == gateClosed {
		g.once.Do(func() { close(g.drained) })
	}
}

// close refuses every later request; drained is closed once the admitted ones have left.
func (g *gate) close() {
	if g.n.Add(gateClosed) == gateClosed {
		g.once.Do(func() { close(g.drained) })
	}
}

// inFlight is the number of requests admitted and not yet left.
func (g *gate) inFlight() int64 { return g.n.Load() % gateClosed }

// enter returns the current component set with the request counted on it. A set retired between
// loading the pointer and entering refuses, and the pointer then names its successor.
func (g *gateway) enter() *components {
	for {
		c := g.current.Load()
		if c.gate.enter() {
			return c
		}
	}
}

// mcpHandler serves the MCP listener with the current component set.
type mcpHandler struct{ g *gateway }

func (h mcpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := h.g.enter()
	defer c.gate.leave()
	closeAfterChunked(w, r)
	boundBody(w, r, c.cfg.Server.BodyReadTimeout)
	if tc, ok := r.Context().Value(connKey{}).(*trackedConn); ok {
		tc.hold(c, 1)
		defer tc.hold(c, -1)
	}
	if isStream(r) {
		if h.g.streamAdmitted != nil {
			h.g.streamAdmitted(r)
		}
		var done func()
		r, done = c.streams.track(r)
		defer done()
	}
	c.mcp.ServeHTTP(w, r)
}

// adminHandler serves the admin listener with the current component set. Admin requests are
// short and read-only: they are not counted.
type adminHandler struct{ g *gateway }

func (h adminHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := h.g.current.Load()
	closeAfterChunked(w, r)
	boundBody(w, r, c.cfg.Server.BodyReadTimeout)
	c.adminEcho.ServeHTTP(w, r)
}

// closeAfterChunked closes an HTTP/1.1 connection once it has answered a request whose body
// came chunked. net/http reads such a body by its chunks and drops any Content-Length sent
// beside Transfer-Encoding before the handler sees the request, so the handler cannot tell a
// request that sent both; RFC 9112 §6.1 has the server close the connection after answering
// one, since a proxy in front that framed the body by its Content-Length may have sent what
// this server reads as the next request (request smuggling). Chunked request bodies are rare
// (the SDKs send a length), so every one is treated so: the client opens a new connection for
// its next request, and whatever followed the body on this one is never read.
func closeAfterChunked(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 && len(r.TransferEncoding) > 0 {
		w.Header().Set("Connection", "close")
	}
}

// boundBody gives the body of r, if it has one, server.bodyReadTimeout to arrive, whatever
// reads it. net/http itself reads up to 256 KiB of a body the handler left unread before it
// writes the response, with no deadline of its own: without this, a refusal (415, 404, 405,
// an admin route) of a chunked body that never ends would never be sent, and its connection
// and goroutine would be held for as long as the client likes. Whoever reads a whole body and
// then works on lifts the deadline (the MCP endpoint, webpage.ReadForm). A deadline passing after
// the body was read cancels nothing (net/http clears it when it starts its background read at
// the body's end), but net/http reads to the body's end once the handler returns, and that read
// would fail on a passed deadline and cost the client its keep-alive connection.
func boundBody(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if r.ContentLength == 0 || d < 0 {
		return
	}
	if d == 0 {
		d = mcphttp.DefaultBodyReadTimeout
	}
	if rd, ok := w.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = rd.SetReadDeadline(time.Now().Add(d))
	}
}

// connKey carries a connection's *trackedConn in its requests' contexts.
type connKey struct{}

// trackedConn is one MCP connection and the component sets its requests in flight run on (one
// at a time over HTTP/1.1, several over HTTP/2).
type trackedConn struct {
	conn net.Conn
	// cut cancels the context of the connection's requests with a cause the pipeline answers
	// them with (mcphttp.ErrShuttingDown) before the connection is closed.
	cut   context.CancelCauseFunc
	mu    sync.Mutex
	holds []connHold // one entry per set with a request in flight here; almost always one
}

// connHold counts a connection's requests in flight on one set. A slice of them rather than a
// map: a map's delete and insert on every request cost several times the rest of the tracking.
type connHold struct {
	c *components
	n int
}

func (tc *trackedConn) hold(c *components, delta int) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for i := range tc.holds {
		if tc.holds[i].c != c {
			continue
		}
		if tc.holds[i].n += delta; tc.holds[i].n <= 0 {
			last := len(tc.holds) - 1
			tc.holds[i] = tc.holds[last]
			tc.holds[last] = connHold{} // the backing array must not keep a closed set alive
			tc.holds = tc.holds[:last]
		}
		return
	}
	if delta > 0 {
		tc.holds = append(tc.holds, connHold{c: c, n: delta})
	}
}

func (tc *trackedConn) holding(c *components) bool {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, h := range tc.holds {
		if h.c == c {
			return true
		}
	}
	return false
}

// connTracker knows the MCP listener's open connections (http.Server's ConnContext and
// ConnState hooks): one entry per connection, nothing per request.
type connTracker struct {
	mu    sync.Mutex
	conns map[net.Conn]*trackedConn
}

func (t *connTracker) connContext(ctx context.Context, c net.Conn) context.Context {
	tc := &trackedConn{conn: c, holds: make([]connHold, 0, 1)}
	ctx, tc.cut = context.WithCancelCause(ctx)
	t.mu.Lock()
	if t.conns == nil {
		t.conns = map[net.Conn]*trackedConn{}
	}
	t.conns[c] = tc
	t.mu.Unlock()
	return context.WithValue(ctx, connKey{}, tc)
}

// cutAll cancels the requests of every open connection with cause, which the pipeline answers
// them with on their open responses, and returns how many connections had a request in flight.
// The connections stay open for those answers to be written.
func (t *connTracker) cutAll(cause error) int {
	t.mu.Lock()
	conns := make([]*trackedConn, 0, len(t.conns))
	for _, tc := range t.conns {
		conns = append(conns, tc)
	}
	t.mu.Unlock()
	n := 0
	for _, tc := range conns {
		tc.mu.Lock()
		busy := len(tc.holds) > 0
		tc.mu.Unlock()
		if busy {
			n++
		}
		tc.cut(cause)
	}
	return n
}

func (t *connTracker) connState(c net.Conn, s http.ConnState) {
	if s == http.StateClosed || s == http.StateHijacked {
		t.mu.Lock()
		tc := t.conns[c]
		delete(t.conns, c)
		t.mu.Unlock()
		if tc != nil {
			tc.cut(nil) // releases the connection's context
		}
	}
}

// cutHolding cancels the requests of every connection with a request in flight on c with cause,
// which the pipeline answers them with on their open responses, and returns how many it cut.
// Over HTTP/2 a connection may carry requests of other sets too: they are cut with it, as
// closing it would end them.
func (t *connTracker) cutHolding(c *components, cause error) int {
	t.mu.Lock()
	var hold []*trackedConn
	for _, tc := range t.conns {
		if tc.holding(c) {
			hold = append(hold, tc)
		}
	}
	t.mu.Unlock()
	for _, tc := range hold {
		tc.cut(cause)
	}
	return len(hold)
}

// closeHolding closes every connection with a request in flight on c, which ends those
// requests (their contexts are cancelled), and returns how many it closed.
func (t *connTracker) closeHolding(c *components) int {
	t.mu.Lock()
	var hold []net.Conn
	for conn, tc := range t.conns {
		if tc.holding(c) {
			hold = append(hold, conn)
		}
	}
	t.mu.Unlock()
	for _, conn := range hold {
		_ = conn.Close()
	}
	return len(hold)
}

// liveSets are the component sets not yet closed: the current one and those retiring. Edge
// metrics sum over them, and a list_changed from another replica reaches all of them.
type liveSets struct {
	mu   sync.Mutex
	sets map[*components]struct{}
	// closedWriteTimeouts keeps the write-timeout count of closed sets, so the counter never
	// goes back.
	closedWriteTimeouts uint64
	retiring            sync.WaitGroup
	stopped             chan struct{} // closed by stop: retiring sets are closed with the process
	stopOnce            sync.Once
}

func (l *liveSets) add(c *components) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sets == nil {
		l.sets = map[*components]struct{}{}
		l.stopped = make(chan struct{})
	}
	l.sets[c] = struct{}{}
}

// each calls fn with every live set, under the lock: fn must not block.
func (l *liveSets) each(fn func(*components)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.sets {
		fn(c)
	}
}

// count is the number of live sets.
func (l *liveSets) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sets)
}

func (l *liveSets) writeTimeouts() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.closedWriteTimeouts
	for c := range l.sets {
		n += c.mcpServer.WriteTimeouts()
	}
	return n
}

func (l *liveSets) bodyBytesInFlight() (n int64) {
	l.each(func(c *components) { n += c.mcpServer.BodyBytesInFlight() })
	return n
}

func (l *liveSets) resultBytesInFlight() (n int64) {
	l.each(func(c *components) { n += c.backends.ResultBytesInFlight() })
	return n
}

// listChanged applies another replica's list_changed to every live set's caches.
func (l *liveSets) listChanged(upstream, method string) (dropped int) {
	l.each(func(c *components) { dropped += c.backends.ListChanged(upstream, method) })
	return dropped
}

// close closes c and forgets it.
func (l *liveSets) close(c *components) {
	c.close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sets[c]; ok {
		l.closedWriteTimeouts += c.mcpServer.WriteTimeouts()
		delete(l.sets, c)
	}
}

// stop makes retiring sets stop waiting for their requests; closeAll then closes them.
func (l *liveSets) stop() {
	l.mu.Lock()
	stopped := l.stopped
	l.mu.Unlock()
	if stopped != nil {
		l.stopOnce.Do(func() { close(stopped) })
	}
}

// closeAll closes every live set, after the retiring ones stopped waiting.
func (l *liveSets) closeAll() {
	l.stop()
	l.retiring.Wait()
	l.mu.Lock()
	all := make([]*components, 0, len(l.sets))
	for c := range l.sets {
		all = append(all, c)
	}
	l.mu.Unlock()
	for _, c := range all {
		l.close(c)
	}
}

// start runs the current set's background work for as long as the process runs.
func (g *gateway) start(runCtx context.Context) {
	g.reloads.mu.Lock()
	defer g.reloads.mu.Unlock()
	g.reloads.runCtx = runCtx
	if g.lists != nil {
		g.lists.run(runCtx)
	}
	g.startComponents(g.current.Load())
}

// startComponents starts c's background work: health probes, the writing back of pins a shared
// store forgot, the endpoint's subscriptions and the fetching of its issuers' keys. It ends
// when c is closed or the process stops.
func (g *gateway) startComponents(c *components) {
	ctx, cancel := context.WithCancel(g.reloads.runCtx)
	c.cancel = cancel
	go c.backends.Run(ctx)
	if c.pinGuard != nil {
		go c.pinGuard.Watch(ctx)
	}
	c.mcpServer.Start(ctx)
	if c.auth != nil {
		go c.auth.Authenticator().WatchKeys(ctx)
	}
	c.admin.SetReady(!g.reloads.draining)
}

// activate makes c the set new requests are served by, and returns the set it replaced (nil at
// start-up). c's backends carry on with the circuits of prev's that reach the same backend the
// same way (upstreams.ShareCircuits; taken over here, not when c was built: a set built and then
// dropped unused must not take the running set's circuits), and the gauges of circuit state
// show c's: carried over, or closed for a backend new or changed.
func (g *gateway) activate(c, prev *components) {
	if prev != nil {
		upstreams.ShareCircuits(c.backends, prev.backends)
	}
	g.sets.add(c)
	if prev != nil {
		prev.current.Store(false)
	}
	c.current.Store(true)
	if g.vaultSize != nil {
		g.vaultSize.Set(c.userOAuth)
	}
	for name, state := range c.backends.CircuitStates() {
		g.rec.SetCircuitState(name, circuitGauge(state))
	}
	g.current.Store(c)
}

// retire waits until prev's requests have left, at most bound, then closes the connections of
// those still running, and closes prev. It returns at once when the process stops (closeAll
// then closes prev). prev.retired is closed either way, before the health gauges are tidied
// (which waits for a reload under way: that reload may be waiting on prev.retired).
func (g *gateway) retire(prev *components, bound time.Duration) {
	defer g.sets.retiring.Done()
	if !g.drain(prev, bound) {
		close(prev.retired)
		return
	}
	g.sets.close(prev)
	close(prev.retired)
	g.forgetRemoved()
}

// drain closes prev's gate and waits until its requests have left, at most bound, then ends
// those still running. It reports false when the process stopped meanwhile.
func (g *gateway) drain(prev *components, bound time.Duration) bool {
	prev.gate.close()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-prev.gate.drained:
		return true
	case <-g.sets.stopped:
		return false
	case <-t.C:
	}
	running := prev.gate.inFlight()
	n := g.conns.cutHolding(prev, mcphttp.ErrReplaced)
	g.log.Warn("requests of the previous configuration still running after server.shutdownTimeout: they are answered with an error, then their connections closed",
		"requests", running, "connections", n)
	if !g.awaitDrained(prev, min(shutdownAnswerGrace, bound/10)) {
		g.conns.closeHolding(prev)
	}
	t.Reset(bound)
	select {
	case <-prev.gate.drained:
	case <-g.sets.stopped:
		return false
	case <-t.C:
		g.log.Warn("requests of the previous configuration did not end with their connections; closing it anyway",
			"requests", prev.gate.inFlight())
	}
	return true
}

// awaitDrained waits at most d for prev's last request to leave, and reports whether it did.
func (g *gateway) awaitDrained(prev *components, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-prev.gate.drained:
		return true
	case <-g.sets.stopped:
	case <-t.C:
	}
	return false
}

// forgetRemoved drops the health gauges of backends that no live set has any more, once the
// sets that had them are closed (their probes would set the gauges again).
func (g *gateway) forgetRemoved() {
	have := map[string]bool{}
	g.sets.each(func(c *components) {
		for _, name := range c.backends.Upstreams() {
			have[name] = true
		}
	})
	g.reloads.mu.Lock()
	defer g.reloads.mu.Unlock()
	for _, name := range g.reloads.metricUpstreams {
		if !have[name] {
			g.rec.ForgetUpstream(name)
		}
	}
}

// close ends c's background work and releases its backends' connections.
func (c *components) close() {
	c.closing.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		if c.backends != nil {
			c.backends.Close()
		}
		c.interceptors.Close()
		// Each of these built its own egress-judged client for this configuration, whose
		// kept-alive connections would stay open until their idle timeout.
		if c.auth != nil {
			c.auth.Authenticator().Close()
		}
		if c.approvals != nil {
			c.approvals.CloseIdleConnections()
		}
		if c.userOAuth != nil {
			c.userOAuth.CloseIdleConnections()
		}
		if c.embedder != nil {
			c.embedder.Close()
		}
	})
}
