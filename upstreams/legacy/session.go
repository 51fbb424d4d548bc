package legacy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
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

// maxAcquireWaits bounds how often acquire waits for a session being opened by another caller.
const maxAcquireWaits = 64

// Session is one initialized session with a legacy backend.
type Session struct {
	id string // Mcp-Session-Id; empty when the backend assigned none
	// caller marks a session of one caller of a token-exchange backend: every request on it
	// carries that caller's exchanged token, and no other caller's request goes on it.
	caller  bool
	version string // negotiated protocolVersion
	init    *InitResult
	ids     atomic.Int64 // upstream request ids: unique per session, whoever the caller is
	busy    int          // requests in flight; guarded by Pool.mu
	// leveled: logging/setLevel debug was sent, so the backend logs every message of a
	// request on it and the gateway keeps each request's own (RoundTrip.logLevel).
	leveled atomic.Bool
}

// nextID returns a fresh upstream request id. Client ids cannot be reused on a shared
// session: two callers may both send id 1, and a legacy server refuses a duplicate in-flight id.
func (s *Session) nextID() json.RawMessage {
	return strconv.AppendInt(nil, s.ids.Add(1), 10)
}

// InitResult is the part of an InitializeResult the gateway keeps.
type InitResult struct {
	Version string
	// Capabilities is the server's capabilities object, as it came.
	Capabilities json.RawMessage
	Instructions string
}

// Pool holds live sessions of one identity: the gateway's, or one caller's.
type Pool struct {
	size    int  // at most this many sessions
	caller  bool // the sessions are one caller's (Session.caller)
	mu      sync.Mutex
	live    []*Session
	opening int
	changed chan struct{} // closed and replaced whenever live or opening changes
	last    *InitResult
}

func (p *Pool) init(size int) {
	p.size = size
	p.changed = make(chan struct{})
}

// signal wakes acquirers waiting for a session; p.mu must be held.
func (p *Pool) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// acquire returns a session for one request: an idle one, else a new one while the pool has
// room, else the least busy. release must follow.
func (p *Pool) acquire(ctx context.Context, br *Bridge) (*Session, error) {
	for range maxAcquireWaits {
		p.mu.Lock()
		var best *Session
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
			return p.open(ctx, br)
		}
		wait := p.changed
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, wire.Classify(ctx, br.be.Name(), ctx.Err())
		case <-wait:
		}
	}
	return nil, br.errorf(wire.ErrUnavailable, "no legacy session became available")
}

func (p *Pool) open(ctx context.Context, br *Bridge) (*Session, error) {
	s, err := br.initialize(ctx, p.caller)
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

func (p *Pool) release(s *Session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.busy--
}

// drop removes an expired session so no new request uses it.
func (p *Pool) drop(s *Session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.live, s); i >= 0 {
		p.live = slices.Delete(p.live, i, i+1)
		p.signal()
	}
}

// initResult returns the last InitializeResult, opening a session when there is none yet.
func (p *Pool) initResult(ctx context.Context, br *Bridge) (*InitResult, error) {
	p.mu.Lock()
	last := p.last
	p.mu.Unlock()
	if last != nil {
		return last, nil
	}
	s, err := p.acquire(ctx, br)
	if err != nil {
		return nil, err
	}
	p.release(s)
	return s.init, nil
}

// takeAll empties the pool and returns its sessions.
func (p *Pool) takeAll() []*Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	live := p.live
	p.live, p.last = nil, nil
	p.signal()
	return live
}

// Initialize opens a session that no pool holds (a listen's own: subscriptions are per session,
// and a session has one GET stream): of the caller ctx carries (WithCaller), else of the
// gateway. Delete must end it.
func (br *Bridge) Initialize(ctx context.Context) (*Session, error) {
	_, asCaller := ctx.Value(callerKey{}).(caller)
	return br.initialize(ctx, asCaller)
}

// initialize performs the handshake for a session of the gateway (caller false) or of the
// caller whose subject ctx carries (WithCaller), bounded by the backend's timeout; a failure is
// recorded like any backend request.
func (br *Bridge) initialize(ctx context.Context, caller bool) (*Session, error) {
	start := br.now()
	ctx, cancel := context.WithTimeoutCause(ctx, br.be.Timeout(), wire.ErrCallTimeout)
	defer cancel()
	s, err := br.handshake(ctx, caller)
	if err != nil {
		br.be.Failed(era.MethodInitialize, caller, start, err)
		return nil, err
	}
	return s, nil
}

// clientCapabilities is what the gateway declares to a pre-2026 backend: form elicitation (an
// empty object means form mode only,
// https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation#capabilities),
// plain sampling and roots, without listChanged. A session is shared by many callers, so this is
// what some caller may honour, not a promise for every call: a request made during a call
// reaches that call's client when it is a pre-2026 client that declared the capability itself
// (ClientRequests), and is answered with an error otherwise, as a client without the capability
// would answer. Without the declaration a backend would not even ask.
var clientCapabilities = json.RawMessage(`{"elicitation":{},"sampling":{},"roots":{}}`)

// appsCapabilities is clientCapabilities declaring the MCP Apps extension with the one mimeType
// it defines, in the form the ext-apps specification (2026-01-26) gives for initialize.
var appsCapabilities = json.RawMessage(`{"elicitation":{},"sampling":{},"roots":{},` +
	`"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`)

// handshake performs initialize offering the configured revision with clientCapabilities, then
// notifications/initialized
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization).
func (br *Bridge) handshake(ctx context.Context, caller bool) (*Session, error) {
	params, _ := era.InitializeParams(br.offer, br.caps, br.client)
	s := &Session{caller: caller}
	m, hdr, err := br.Request(ctx, s, era.MethodInitialize, params, nil)
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, br.errorf(wire.ErrBadResponse, "initialize answered error %d", m.Error.Code)
	}
	var res struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		Instructions    string          `json:"instructions"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		return nil, br.errorf(wire.ErrBadResponse, "initialize result: %v", err)
	}
	init := &InitResult{Version: res.ProtocolVersion, Capabilities: res.Capabilities, Instructions: res.Instructions}
	if br.check != nil {
		if err := br.check(init); err != nil {
			return nil, err
		}
	}
	if !era.IsLegacyVersion(res.ProtocolVersion) {
		return nil, br.errorf(wire.ErrBadResponse, "initialize negotiated unsupported version %q", res.ProtocolVersion)
	}
	id := hdr.Get(mcpheader.SessionID)
	if len(id) > maxSessionIDBytes {
		return nil, br.errorf(wire.ErrBadResponse, "session id of %d bytes is over the %d a session id may have", len(id), maxSessionIDBytes)
	}
	if !visibleASCII(id) {
		return nil, br.errorf(wire.ErrBadResponse, "session id is not visible ASCII")
	}
	s.id, s.version = id, res.ProtocolVersion
	s.init = init
	if err := br.notify(ctx, s, era.NotifInitialized, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// notify POSTs a notification on s and expects a 2xx (202) without caring for a body.
func (br *Bridge) notify(ctx context.Context, s *Session, method string, params json.RawMessage) error {
	resp, err := br.Do(ctx, s, http.MethodPost, jsonrpc.AppendNotification(nil, method, params), nil, "")
	if err != nil {
		return err
	}
	DrainClose(resp.Body)
	if resp.StatusCode/100 != 2 {
		return wire.StatusError(br.be.Name(), resp.StatusCode, method+" was refused")
	}
	return nil
}

// Request sends one gateway-originated request on s and returns the response and the
// response headers, answering server requests on its stream meanwhile.
//
// A request the backend sends meanwhile is refused, whoever's call made the gateway send this
// one: these are the gateway's requests (initialize, before the session is even initialized;
// logging/setLevel and resources/subscribe on a session every caller of the backend may share),
// and only what a backend asks while serving a call may reach that call's client.
func (br *Bridge) Request(ctx context.Context, s *Session, method string, params json.RawMessage, pass http.Header) (*jsonrpc.Message, http.Header, error) {
	ctx = WithoutClientRequests(ctx)
	x := &RoundTrip{br: br, sess: s, uid: json.RawMessage(`0`)}
	if s.id != "" {
		x.uid = s.nextID()
	}
	resp, err := br.Do(ctx, s, http.MethodPost, requestBody(x.uid, method, params), pass, "")
	if err != nil {
		return nil, nil, err
	}
	defer x.Close()
	if err := x.accept(resp); err != nil {
		return nil, nil, br.ReadErr(ctx, err)
	}
	for range maxSkipped {
		m, err := x.Next(ctx)
		if err != nil {
			return nil, nil, br.ReadErr(ctx, err)
		}
		if m.IsResponse() {
			return m, resp.Header, nil
		}
	}
	return nil, nil, br.errorf(wire.ErrBadResponse, "too many notifications before the %s response", method)
}

func requestBody(id json.RawMessage, method string, params json.RawMessage) []byte {
	dst := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	dst = append(dst, `,"method":`...)
	dst = jsonrpc.AppendString(dst, method)
	if params != nil {
		dst = append(append(dst, `,"params":`...), params...)
	}
	return append(dst, '}')
}

// header is the header set of a request on session s: the session id when one was assigned,
// and MCP-Protocol-Version except for 2025-03-26, which predates that header
// (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#protocol-version-header).
func (br *Bridge) header(s *Session, pass http.Header) http.Header {
	h := br.be.Header().Clone()
	wire.CopyPassThrough(h, pass)
	if s.id != "" {
		h[mcpheader.SessionID] = []string{s.id}
	}
	if s.version != "" && s.version != era.V20250326 {
		h[mcpheader.ProtocolVersion] = []string{s.version}
	}
	return h
}

// maxSessionIDBytes bounds a backend's session id. The gateway keeps one per session it holds
// with the backend (up to the pool's bound) and sends it on every request there; real ones are
// well under 100 bytes, and without this bound only the 1 MiB response header limit held them.
const maxSessionIDBytes = 1024

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Delete ends a session with DELETE (a 405 is allowed: the server does not let clients end
// sessions); best effort.
func (br *Bridge) Delete(ctx context.Context, s *Session) {
	if s.id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sideTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, br.be.URL(), nil)
	if err != nil {
		return
	}
	req.Header = br.header(s, nil)
	if resp, err := br.be.Client().Do(req); err == nil {
		DrainClose(resp.Body)
	}
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
	pool  Pool
	users int       // requests holding the pool; guarded by callerPools.mu
	used  time.Time // last taken or given back; guarded by callerPools.mu
}

func (c *callerPools) init(max int, idle time.Duration) {
	c.max, c.idle = DefaultMaxSessions, DefaultSessionIdle
	if max > 0 {
		c.max = max
	}
	if idle > 0 {
		c.idle = idle
	}
}

// take returns the caller's pool, creating it when needed, and the sessions of pools it closed
// (idle or evicted), which the caller ends with DELETE. give must follow.
func (c *callerPools) take(key [sha256.Size]byte, now time.Time) (*callerPool, []*Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var closed []*Session
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
				return nil, closed, ErrSessionsFull
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
func (c *callerPools) takeAll() []*Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	var live []*Session
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

// ErrSessionsFull: every per-caller session slot of a token-exchange legacy backend is in use
// by a request. It comes wrapped in ErrUnavailable by CallerPool.
var ErrSessionsFull = errors.New("every per-caller legacy session is in use")
