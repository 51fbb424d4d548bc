package upstreams

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// legacyPoolSize bounds the sessions one replica keeps with one legacy backend that sees the
// gateway as one identity (static headers, client credentials). Legacy lists do not vary per
// session here (the gateway declares the same capabilities on every session), so a few sessions
// shared by all callers are enough; more only spread concurrent calls.
const legacyPoolSize = 4

// Defaults of the per-caller sessions of a token-exchange legacy backend (AuthConfig).
const (
	// DefaultMaxLegacySessions bounds the callers that hold a session with one such backend in
	// one replica (one session each).
	DefaultMaxLegacySessions = 256
	// DefaultLegacySessionIdle is how long a caller's session may go unused before it is closed.
	DefaultLegacySessionIdle = 5 * time.Minute
)

// maxAcquireWaits bounds how often acquire waits for a session being opened by another caller.
const maxAcquireWaits = 64

// legacySession is one initialized session with a legacy backend.
type legacySession struct {
	id string // Mcp-Session-Id; empty when the backend assigned none
	// caller marks a session of one caller of a token-exchange backend: every request on it
	// carries that caller's exchanged token, and no other caller's request goes on it.
	caller  bool
	version string // negotiated protocolVersion
	init    *initResult
	ids     atomic.Int64 // upstream request ids: unique per session, whoever the caller is
	busy    int          // requests in flight; guarded by sessionPool.mu
}

// nextID returns a fresh upstream request id. Client ids cannot be reused on a shared
// session: two callers may both send id 1, and a legacy server refuses a duplicate in-flight id.
func (s *legacySession) nextID() json.RawMessage {
	return strconv.AppendInt(nil, s.ids.Add(1), 10)
}

// initResult is the part of an InitializeResult the gateway keeps.
type initResult struct {
	version      string
	caps         capSet
	instructions string
}

// discovered synthesizes the backend's server/discover contribution (digest §7). capSet
// carries only the server capabilities the gateway merges, so core tasks and anything else
// legacy-only are dropped.
func (i *initResult) discovered() *discovered {
	return &discovered{caps: i.caps, instructions: i.instructions, ttl: MaxDiscoverTTL}
}

// sessionPool holds live sessions of one identity: the gateway's, or one caller's.
type sessionPool struct {
	size    int  // at most this many sessions
	caller  bool // the sessions are one caller's (legacySession.caller)
	mu      sync.Mutex
	live    []*legacySession
	opening int
	changed chan struct{} // closed and replaced whenever live or opening changes
	last    *initResult
}

func (p *sessionPool) init(size int) {
	p.size = size
	p.changed = make(chan struct{})
}

// signal wakes acquirers waiting for a session; p.mu must be held.
func (p *sessionPool) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// acquire returns a session for one request: an idle one, else a new one while the pool has
// room, else the least busy. release must follow.
func (p *sessionPool) acquire(ctx context.Context, r *Registry, b *backend) (*legacySession, error) {
	for range maxAcquireWaits {
		p.mu.Lock()
		var best *legacySession
		for _, s := range p.live {
			if best == nil || s.busy < best.busy {
				best = s
			}
		}
		full := len(p.live)+p.opening >= p.size
		if best != nil && (best.busy == 0 || full) {
			best.busy++
			p.mu.Unlock()
			return best, nil
		}
		if !full {
			p.opening++
			p.mu.Unlock()
			return p.open(ctx, r, b)
		}
		wait := p.changed
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, wire.Classify(ctx, b.name, ctx.Err())
		case <-wait:
		}
	}
	return nil, errorf(ErrUnavailable, b, "no legacy session became available")
}

func (p *sessionPool) open(ctx context.Context, r *Registry, b *backend) (*legacySession, error) {
	s, err := r.legacyInitializeAs(ctx, b, p.caller)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opening--
	p.signal()
	if err != nil {
		return nil, err
	}
	s.busy = 1
	p.live = append(p.live, s)
	p.last = s.init
	return s, nil
}

func (p *sessionPool) release(s *legacySession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.busy--
}

// drop removes an expired session so no new request uses it.
func (p *sessionPool) drop(s *legacySession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.live, s); i >= 0 {
		p.live = slices.Delete(p.live, i, i+1)
		p.signal()
	}
}

// initResult returns the last InitializeResult, opening a session when there is none yet.
func (p *sessionPool) initResult(ctx context.Context, r *Registry, b *backend) (*initResult, error) {
	p.mu.Lock()
	last := p.last
	p.mu.Unlock()
	if last != nil {
		return last, nil
	}
	s, err := p.acquire(ctx, r, b)
	if err != nil {
		return nil, err
	}
	p.release(s)
	return s.init, nil
}

// legacyInitialize performs the handshake (digest §7 "Handshake"): initialize offering the
// configured revision with no client capabilities, since the gateway cannot yet honour
// elicitation, sampling or roots for a backend; then notifications/initialized.
func (r *Registry) legacyInitialize(ctx context.Context, b *backend) (*legacySession, error) {
	return r.legacyInitializeAs(ctx, b, false)
}

// legacyInitializeAs is legacyInitialize for a session of the gateway (caller false) or of the
// caller whose subject ctx carries (withLegacyCaller).
func (r *Registry) legacyInitializeAs(ctx context.Context, b *backend, caller bool) (*legacySession, error) {
	start := r.now()
	ctx, cancel := context.WithTimeoutCause(ctx, b.timeout, wire.ErrCallTimeout)
	defer cancel()
	s, err := r.handshake(ctx, b, caller)
	if err != nil {
		r.record(b, era.MethodInitialize, outcomeOf(err), start, err, true)
		return nil, err
	}
	return s, nil
}

func (r *Registry) handshake(ctx context.Context, b *backend, caller bool) (*legacySession, error) {
	params, _ := era.InitializeParams(b.legacy.offer, json.RawMessage(`{}`), b.legacy.client)
	s := &legacySession{caller: caller}
	m, hdr, err := r.legacyRequest(ctx, b, s, era.MethodInitialize, params, nil)
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, errorf(ErrBadResponse, b, "initialize answered error %d", m.Error.Code)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    capSet `json:"capabilities"`
		Instructions    string `json:"instructions"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		return nil, errorf(ErrBadResponse, b, "initialize result: %v", err)
	}
	if !era.IsLegacyVersion(res.ProtocolVersion) {
		return nil, errorf(ErrBadResponse, b, "initialize negotiated unsupported version %q", res.ProtocolVersion)
	}
	id := hdr.Get(mcpheader.SessionID)
	if !visibleASCII(id) {
		return nil, errorf(ErrBadResponse, b, "session id is not visible ASCII")
	}
	s.id, s.version = id, res.ProtocolVersion
	s.init = &initResult{version: res.ProtocolVersion, caps: res.Capabilities, instructions: res.Instructions}
	if err := r.legacyNotify(ctx, b, s, era.NotifInitialized, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// legacyNotify POSTs a notification on s and expects a 2xx (202) without caring for a body.
func (r *Registry) legacyNotify(ctx context.Context, b *backend, s *legacySession, method string, params json.RawMessage) error {
	resp, err := r.legacyDo(ctx, b, s, http.MethodPost, jsonrpc.AppendNotification(nil, method, params), nil, "")
	if err != nil {
		return err
	}
	drainClose(resp.Body)
	if resp.StatusCode/100 != 2 {
		return wire.StatusError(b.name, resp.StatusCode, method+" was refused")
	}
	return nil
}

// legacyRequest sends one gateway-originated request on s and returns the response and the
// response headers, answering server requests on its stream meanwhile.
func (r *Registry) legacyRequest(ctx context.Context, b *backend, s *legacySession, method string, params json.RawMessage, pass http.Header) (*jsonrpc.Message, http.Header, error) {
	x := &legacyRoundTrip{r: r, b: b, sess: s, uid: json.RawMessage(`0`)}
	if s.id != "" {
		x.uid = s.nextID()
	}
	resp, err := r.legacyDo(ctx, b, s, http.MethodPost, legacyRequestBody(x.uid, method, params), pass, "")
	if err != nil {
		return nil, nil, err
	}
	defer x.close()
	if err := x.accept(resp); err != nil {
		return nil, nil, readErr(ctx, b, err)
	}
	for range maxSkippedNotifications {
		m, err := x.next(ctx)
		if err != nil {
			return nil, nil, readErr(ctx, b, err)
		}
		if m.IsResponse() {
			return m, resp.Header, nil
		}
	}
	return nil, nil, errorf(ErrBadResponse, b, "too many notifications before the %s response", method)
}

func legacyRequestBody(id json.RawMessage, method string, params json.RawMessage) []byte {
	dst := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, method)
	if params != nil {
		dst = append(append(dst, `,"params":`...), params...)
	}
	return append(dst, '}')
}

// legacyHeader is the header set of a request on session s (digest §7 "Handshake" 3): the
// session id when one was assigned, and MCP-Protocol-Version except for 2025-03-26, which
// predates that header.
func legacyHeader(b *backend, s *legacySession, pass http.Header) http.Header {
	h := b.header.Clone()
	wire.CopyPassThrough(h, pass)
	if s.id != "" {
		h[mcpheader.SessionID] = []string{s.id}
	}
	if s.version != "" && s.version != protocol20250326 {
		h[mcpheader.ProtocolVersion] = []string{s.version}
	}
	return h
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// pingRequest is the health probe sent to a legacy backend instead of server/discover.
const pingRequest = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// readErr classifies an error met while reading a legacy response, like Stream.readError.
func readErr(ctx context.Context, b *backend, err error) error {
	switch {
	case isClassified(err):
		return err
	case errors.Is(err, wire.ErrTooLarge), errors.Is(err, wire.ErrEventTooLarge):
		return errorf(ErrBadResponse, b, "%v (limit %d bytes)", err, b.maxBytes)
	case errors.Is(err, io.EOF):
		return errorf(ErrBadResponse, b, "the stream ended without a response")
	}
	return wire.Classify(ctx, b.name, err)
}

func isClassified(err error) bool {
	return errors.Is(err, ErrBadResponse) || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrTimeout)
}

// closeLegacy ends every pooled legacy session with DELETE, so backends free them now rather
// than at their idle timeout.
func (r *Registry) closeLegacy() {
	var wg sync.WaitGroup
	for _, b := range r.backends {
		wg.Go(func() { r.closeLegacyBackend(b) })
	}
	wg.Wait()
}

// closeLegacyBackend ends b's pooled sessions, the gateway's and the callers'.
func (r *Registry) closeLegacyBackend(b *backend) {
	live := b.legacy.pool.takeAll()
	live = append(live, b.legacy.callers.takeAll()...)
	r.deleteSessions(b, live)
}

// deleteSessions ends sessions with DELETE, in parallel, and waits.
func (r *Registry) deleteSessions(b *backend, live []*legacySession) {
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Go(func() { r.legacyDelete(context.Background(), b, s) })
	}
	wg.Wait()
}

// takeAll empties the pool and returns its sessions.
func (p *sessionPool) takeAll() []*legacySession {
	p.mu.Lock()
	defer p.mu.Unlock()
	live := p.live
	p.live, p.last = nil, nil
	p.signal()
	return live
}

// callerPools holds the sessions of a token-exchange legacy backend: one per caller, keyed by
// a digest of the caller's identity (issuer and subject), never shared between callers. Their
// number is bounded: a new caller first takes the place of sessions idle for longer than idle,
// then of the least recently used one no request holds; when every session is in use the
// request is refused (ErrUnavailable) rather than put on another caller's session.
type callerPools struct {
	max   int
	idle  time.Duration
	mu    sync.Mutex
	m     map[[sha256.Size]byte]*callerPool
	swept time.Time
}

// callerPool is one caller's sessions.
type callerPool struct {
	pool  sessionPool
	users int       // requests holding the pool; guarded by callerPools.mu
	used  time.Time // last taken or given back; guarded by callerPools.mu
}

func (c *callerPools) init(auth *AuthConfig) {
	c.max, c.idle = DefaultMaxLegacySessions, DefaultLegacySessionIdle
	if auth != nil && auth.MaxLegacySessions > 0 {
		c.max = auth.MaxLegacySessions
	}
	if auth != nil && auth.LegacySessionIdle > 0 {
		c.idle = auth.LegacySessionIdle
	}
}

// callerKey identifies the caller of o: its identity when the gateway named it, else its token
// (one token belongs to one caller).
func callerKey(o *outgoing) [sha256.Size]byte {
	if o.caller != "" {
		return sha256.Sum256([]byte("caller\x00" + o.caller))
	}
	return sha256.Sum256([]byte("token\x00" + o.subject))
}

// take returns the caller's pool, creating it when needed, and the sessions of pools it closed
// (idle or evicted), which the caller ends with DELETE. give must follow.
func (c *callerPools) take(key [sha256.Size]byte, now time.Time) (*callerPool, []*legacySession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var closed []*legacySession
	if c.m == nil {
		c.m = make(map[[sha256.Size]byte]*callerPool)
	}
	if now.Sub(c.swept) >= c.idle/4 {
		c.swept = now
		for k, p := range c.m {
			if p.users == 0 && now.Sub(p.used) >= c.idle {
				closed = append(closed, p.pool.takeAll()...)
				delete(c.m, k)
			}
		}
	}
	p := c.m[key]
	if p == nil {
		if len(c.m) >= c.max {
			var lruKey [sha256.Size]byte
			var lru *callerPool
			for k, q := range c.m {
				if q.users == 0 && (lru == nil || q.used.Before(lru.used)) {
					lruKey, lru = k, q
				}
			}
			if lru == nil {
				return nil, closed, errLegacySessionsFull
			}
			closed = append(closed, lru.pool.takeAll()...)
			delete(c.m, lruKey)
		}
		p = &callerPool{}
		p.pool.init(1)
		p.pool.caller = true
		c.m[key] = p
	}
	p.users++
	p.used = now
	return p, closed, nil
}

// give hands back a pool take returned.
func (c *callerPools) give(p *callerPool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p.users--
	p.used = now
}

// takeAll empties the pools and returns their sessions.
func (c *callerPools) takeAll() []*legacySession {
	c.mu.Lock()
	defer c.mu.Unlock()
	var live []*legacySession
	for k, p := range c.m {
		live = append(live, p.pool.takeAll()...)
		delete(c.m, k)
	}
	return live
}

// size returns the number of callers holding sessions.
func (c *callerPools) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// errLegacySessionsFull: every per-caller session slot of a token-exchange legacy backend is in
// use by a request. It comes wrapped in ErrUnavailable by legacyPool.
var errLegacySessionsFull = errors.New("every per-caller legacy session is in use")
