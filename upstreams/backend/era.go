package backend

// Bridging to pre-2026 backends (docs/protocol.md §7): toward a 2025-11-25, 2025-06-18 or 2025-03-26
// backend the gateway is a legacy client with a small pool of sessions, while the Backend API
// stays the same, so a 2026-07-28 client cannot tell the eras apart.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
)

// legacyState is one backend's era and, for a legacy backend, its session pools.
//
// How the era is learnt (protocol: auto), so that a transient answer never changes whom a
// backend sees or how it is spoken to:
//
//   - It is learnt once, from a definitive answer to the gateway's server/discover probe: a
//     DiscoverResult (legacy when its supportedVersions lacks 2026-07-28), an error from the
//     range the 2026 revision reserves, or -32022 naming the supported versions. A bare 400, 404
//     or 405 (what a legacy server, but also a proxy or a restarting backend, may answer) only
//     makes legacy a candidate: it is learnt when a legacy initialize handshake then succeeds.
//     Anything else (no answer, a timeout, a 5xx, garbage) leaves the era unknown: the request
//     fails with that answer as its error, and so does every request for a short backoff
//     (probeBackoff) after which the next one probes again.
//   - Once learnt it is kept: failed calls, timeouts, 4xx and 5xx answers never change it. The
//     health probe re-learns it only from an answer that names the versions and contradicts it:
//     a DiscoverResult whose supportedVersions names (or lacks) 2026-07-28, or -32022 naming the
//     supported versions. A backend replaced by one of another era that answers only with bare
//     statuses needs a pinned protocol or a restart of the gateway.
//   - A pinned protocol is never probed nor changed.
//
// One probe at a time runs per backend (probeFlight), on its own context bounded by the
// backend's timeout, so callers that give up do not cancel it for the others.
type legacyState struct {
	// pinned is the configured revision; empty under auto.
	pinned string
	// offer is the protocolVersion sent in initialize.
	offer string
	// client is the clientInfo sent in initialize.
	client json.RawMessage
	mu     sync.Mutex
	era    era.Era
	// bridge holds the sessions with the backend once it speaks a pre-2026 revision.
	bridge *legacy.Bridge
	flight singleflight.Group
	// failed remembers the last probe that learnt nothing, so that a broken backend is probed
	// once per interval rather than once per call (probeBackoff).
	failed probeBackoff
	// beforeFlight, when set (tests only), runs after awaitEra's looks and before the flight.
	beforeFlight func()
	// inFlight, when set (tests only), runs at the start of each flight; joined runs after a
	// caller started or joined one.
	inFlight, joined func()
}

func newLegacyState(protocol, userAgent string) *legacyState {
	s := &legacyState{offer: protocol20251125, client: clientInfo(userAgent)}
	switch protocol {
	case "", ProtocolAuto:
	case ProtocolVersion:
		s.pinned, s.era = protocol, era.Modern
	default:
		s.pinned, s.offer, s.era = protocol, protocol, era.Legacy
	}
	return s
}

// clientInfo turns a User-Agent such as "mcp-gateway/1.4.0" into the initialize clientInfo.
func clientInfo(userAgent string) json.RawMessage {
	name, version, ok := strings.Cut(userAgent, "/")
	if !ok || version == "" {
		version = "unknown"
	}
	out, _ := json.Marshal(map[string]string{"name": name, "version": version})
	return out
}

func (s *legacyState) known() era.Era {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.era
}

// learn records an era learnt from a definitive answer while it was unknown. A pinned or
// already learnt era is kept.
func (s *legacyState) learn(e era.Era) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pinned == "" && s.era == era.Unknown {
		s.era = e
	}
}

// relearn replaces a learnt era after an answer that names the versions and contradicts it;
// it reports whether the era changed. A pinned era is never changed.
func (s *legacyState) relearn(e era.Era) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pinned != "" || s.era == e || e == era.Unknown {
		return false
	}
	s.era = e
	return true
}

// eraFanOutWait bounds how long a request that fans out to every backend (a list, the
// gateway's server/discover) waits for the era probe of a backend whose era is unknown. A
// healthy backend answers the probe in milliseconds; one that hangs is left out of that list
// rather than holding it for the backend's whole timeout, while the probe goes on for the
// requests that target the backend.
const eraFanOutWait = 2 * time.Second

// errEraPending marks a fan-out request that stopped waiting for a backend's era probe. The
// request was not sent, so it says nothing about the backend: neither the breaker nor the
// health state count it, and it is not retried (it comes wrapped in wire.ErrTimeout).
var errEraPending = errors.New("the backend's protocol era is still being probed")

// isLegacy reports the backend's era for o, learning it when unknown. d is the backend's
// server/discover answer when the probe just fetched one from a modern backend.
func (b *Backend) isLegacy(ctx context.Context, o *Request) (legacy bool, d *Discovered, err error) {
	switch b.legacy.known() {
	case era.Modern:
		return false, nil, nil
	case era.Legacy:
		return true, nil, nil
	}
	p, err := b.awaitEra(ctx, o)
	if err != nil {
		return false, nil, err
	}
	return p.era == era.Legacy, p.disc, nil
}

// probeResult is the outcome of one shared era probe.
type probeResult struct {
	era  era.Era // era.Unknown when the answer was not definitive
	disc *Discovered
}

// awaitEra joins the backend's era probe, starting it when none is in flight. The probe runs
// on its own context (the caller's values, not its cancellation) bounded by the backend's
// timeout, so one caller giving up does not fail it for the others. A caller's probe is governed
// by the circuit breaker like any backend request; only a health probe (o.probe) passes an open circuit,
// as it does for server/discover. A request that fans out to every backend waits at most
// eraFanOutWait.
func (b *Backend) awaitEra(ctx context.Context, o *Request) (*probeResult, error) {
	health := o.probe
	if !health && b.breaker.isOpen(b.env.Now()) {
		return nil, b.breaker.openErr()
	}
	if !health {
		if err := b.legacy.failed.pending(b.env.Now()); err != nil {
			return nil, probeWaitErr{err}
		}
	}
	probe := probeRequest(b, o) // built here: the probe may outlive o's request
	if b.legacy.beforeFlight != nil {
		b.legacy.beforeFlight()
	}
	var limit <-chan time.Time
	if fanOut(o) && !b.required {
		t := time.NewTimer(eraFanOutWait)
		defer t.Stop()
		limit = t.C
	}
	// A flight that ended in its starter's own outcome (starterErr) answers nothing about this
	// caller, who flies again under its own charge. Each such flight ends at once or with the
	// starter's answer, and ctx and limit bound the waiting.
	for {
		ch := b.legacy.flight.DoChan("era", func() (any, error) { return b.eraFlight(ctx, health, probe) })
		if b.legacy.joined != nil {
			b.legacy.joined()
		}
		select {
		case res := <-ch:
			var own starterErr
			if errors.As(res.Err, &own) {
				if own.charge != probe.charge() {
					continue
				}
				return nil, probeErr{own.error}
			}
			if w, ok := res.Err.(probeWaitErr); ok {
				return nil, w
			}
			if res.Err != nil {
				return nil, probeErr{res.Err}
			}
			return res.Val.(*probeResult), nil
		case <-limit:
			return nil, fmt.Errorf("%w: %w: %s", wire.ErrTimeout, errEraPending, b.name)
		case <-ctx.Done():
			// The request's own timeout may pass just before the probe's: it waited on the probe,
			// whose outcome the probe records, so it is not counted again.
			return nil, probeErr{wire.Classify(ctx, b.name, ctx.Err())}
		}
	}
}

// eraFlight is one flight of the era probe, run for whoever started it and shared with every
// caller that joins it. At a per-user backend the probe is charged to, and carries the token of,
// the caller who started it: a refusal that is about that caller alone (its own circuit open,
// its account token missing or refused) is returned as starterErr, for that caller only.
func (b *Backend) eraFlight(ctx context.Context, health bool, probe *Request) (any, error) {
	if b.legacy.inFlight != nil {
		b.legacy.inFlight()
	}
	// A probe that ended between this caller's look and its DoChan has learnt the era
	// or started a backoff: probing again would cost the backend a request it was spared.
	if e := b.legacy.known(); e != era.Unknown {
		return &probeResult{era: e}, nil
	}
	if !health {
		if err := b.legacy.failed.pending(b.env.Now()); err != nil {
			return nil, probeWaitErr{err}
		}
	}
	pctx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), b.timeout, wire.ErrCallTimeout)
	defer cancel()
	res, err := b.probeEra(pctx, health, probe)
	if errors.Is(err, ErrCallerCircuitOpen) || errors.Is(err, ErrUserTokenNeeded) {
		return nil, starterErr{charge: probe.charge(), error: err}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// starterErr is an era probe's outcome that belongs to the caller it was charged to (charge)
// and says nothing of the backend's era: that caller's own circuit is open, or the backend
// refused that caller's account token. Another caller that joined the flight probes again under
// its own charge rather than take it.
type starterErr struct {
	charge string
	error
}

func (e starterErr) Unwrap() error { return e.error }

// The backoff after an era probe that learnt nothing: the first wait is probeBackoffBase, each
// further failure doubles it up to probeBackoffMax, and each wait is drawn between half and all
// of that (jitter), so that the replicas of a gateway, and a backend's callers after a restart,
// do not probe in step.
const (
	probeBackoffBase = time.Second
	probeBackoffMax  = 30 * time.Second
)

// probeBackoff is a backend's memory of its last era probe that learnt nothing (no answer, a
// status or an answer that names no era). Until it passes, callers get that failure at once,
// as a clear error saying when the next probe is due, and send nothing: a broken backend costs
// one probe per interval, not one per call. A health probe ignores it and probes anyway; any
// probe that learns the era clears it, so a recovered backend is found at the next probe.
type probeBackoff struct {
	mu    sync.Mutex
	until time.Time
	fails int
	err   error
}

// pending returns the remembered failure while its backoff runs, else nil.
func (p *probeBackoff) pending(now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil || !now.Before(p.until) {
		return nil
	}
	return fmt.Errorf("%w; the gateway probes its protocol era again in %s", p.err, p.until.Sub(now).Round(time.Second))
}

// failure remembers err and starts the next backoff.
func (p *probeBackoff) failure(now time.Time, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fails++
	d := probeBackoffMax
	if p.fails <= 5 { // 1 s << 5 passes the ceiling
		d = min(probeBackoffBase<<(p.fails-1), probeBackoffMax)
	}
	p.until, p.err = now.Add(d/2+rand.N(d/2+1)), err
}

// success forgets any failure.
func (p *probeBackoff) success() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fails, p.err = 0, nil
}

// probeErr is the failure of a shared era probe, handed to every request that waited for it.
// The probe recorded its own outcome once (breaker, health), so the requests do not count it
// again, however many they were.
type probeErr struct{ error }

func (e probeErr) Unwrap() error { return e.error }

// probeWaitErr is a request refused, unsent, while the backoff after a failed era probe runs.
// Unlike probeErr (a request that waited on a probe which recorded its own outcome) the breaker
// counts it: the backend failed this request as surely as it failed the probe, so a backend that
// keeps failing opens its circuit after as many requests as it did before the backoff. It does
// not ask the health prober to look sooner (the backoff already says when to look).
type probeWaitErr struct{ error }

func (e probeWaitErr) Unwrap() error { return e.error }

// fanOut reports whether o is part of a request sent to every backend.
func fanOut(o *Request) bool {
	switch o.Method {
	case wire.MethodDiscover, wire.MethodToolsList, wire.MethodPromptsList, wire.MethodResourcesList, wire.MethodResourceTemplates:
		return !o.probe
	}
	return false
}

// maxProbeEvents bounds the SSE events read while waiting for the probe's response.
const maxProbeEvents = 100

// probeEra sends one modern server/discover, learns the era from a definitive answer, and
// records the request like any other (metrics, breaker, health). A probe that learns nothing
// (no answer, or one that names no era) is an error, remembered for a backoff (probeBackoff):
// the gateway does not guess how to speak to a backend whose era it does not know.
func (b *Backend) probeEra(ctx context.Context, health bool, probe *Request) (*probeResult, error) {
	if !health {
		if err := b.breaker.allow(b.env.Now(), false, probe.charge()); err != nil {
			return nil, err
		}
	}
	start := b.env.Now()
	v, d, err := b.sendProbe(ctx, probe)
	if v.Candidate {
		v = b.confirmLegacy(ctx)
	}
	outcome := outcomeOf(err)
	switch {
	case v.Era != era.Unknown:
		outcome, err = OutcomeOK, nil
	case err == nil:
		outcome, err = OutcomeBadResponse, errorf(wire.ErrBadResponse, b, "server/discover probe: the answer names no protocol era")
	}
	b.record(wire.MethodDiscover, probe.charge(), outcome, start, err, !health)
	if v.Era == era.Unknown {
		// A per-user backend's refusal of the token the probe carried (or of none) is about
		// one caller, not about the backend: another caller's probe may learn the era at once.
		// A 429 is the backend throttling: the next request, after the wait, probes again.
		if !errors.Is(err, context.Canceled) && !errors.Is(err, ErrUserTokenNeeded) && !errors.Is(err, wire.ErrRateLimited) {
			b.legacy.failed.failure(b.env.Now(), err)
		}
		return nil, err
	}
	b.legacy.failed.success()
	b.legacy.learn(v.Era)
	if d != nil {
		b.disc.store(d, b.env.Now())
	}
	if v.Era == era.Legacy {
		b.env.Log.Info("upstream speaks a pre-2026 revision; bridging", "upstream", b.name)
	}
	return &probeResult{era: v.Era, disc: d}, nil
}

// probeRequest is the era probe sent for o: the gateway's own server/discover, which at a
// per-user backend carries the account token of o's caller (the token o carries, else the one
// the vault holds for its caller). Such a backend may refuse any request without one,
// server/discover included, and its era is the same whoever asks; a probe without a token
// would leave it unknown, and every call refused, for good. o nil: the gateway's own probe.
func probeRequest(b *Backend, o *Request) *Request {
	p := &Request{Method: wire.MethodDiscover, Body: []byte(discoverRequest), probe: true}
	if o != nil && o.FromCaller && b.PerUser() {
		p.UserToken, p.Caller, p.FromCaller = o.UserToken, o.Caller, true
	}
	return p
}

// sendProbe sends the server/discover probe p (probeRequest) and classifies the answer; err
// says why no answer came, or why one was not definitive.
func (b *Backend) sendProbe(ctx context.Context, p *Request) (v era.Verdict, d *Discovered, err error) {
	resp, err := b.Post(ctx, p)
	if err != nil {
		return era.Verdict{}, nil, err
	}
	defer resp.Body.Close()
	m, err := readProbeResponse(b, resp)
	v = era.Classify(resp.StatusCode, m, err)
	switch {
	case err != nil:
		err = ReadErr(ctx, b, nil, err) // a probe is read against no budget
	case v.Era == era.Unknown:
		err = noEraErr(b, resp.StatusCode, m) // unless initialize confirms a candidate (probeEra)
	}
	if v.Era == era.Modern && m.Error == nil && m.Result != nil {
		if d, err = parseDiscover(b, m.Result); err != nil {
			return era.Verdict{}, nil, err
		}
	}
	return v, d, err
}

// noEraErr says why m, a JSON-RPC error answered to the era probe with status, names no
// protocol era: its status and code (not its message, the backend's own words), and for a
// refusal where an operator looks first. /readyz and check-config --online show it.
func noEraErr(b *Backend, status int, m *jsonrpc.Message) error {
	code := 0
	if m != nil && m.Error != nil {
		code = m.Error.Code
	}
	why := ""
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		why = "; the backend refused the gateway's request: check the credentials configured for it (its headers or auth)"
	}
	return errorf(wire.ErrBadResponse, b, "server/discover probe: HTTP %d with JSON-RPC error %d, which names no protocol era%s",
		status, code, why)
}

// confirmLegacy learns legacy from a candidate answer only when a legacy initialize handshake
// succeeds; the session stays in the gateway's pool.
func (b *Backend) confirmLegacy(ctx context.Context) era.Verdict {
	if _, err := b.legacy.bridge.InitResult(ctx); err != nil {
		b.env.Log.Warn("upstream answered the era probe like a pre-2026 server, but initialize failed; era left unknown",
			"upstream", b.name, "error", err.Error())
		return era.Verdict{}
	}
	return era.Verdict{Era: era.Legacy}
}

// readProbeResponse returns the JSON-RPC response of the probe, from a JSON body or the first
// response event of an SSE body.
func readProbeResponse(b *Backend, resp *http.Response) (*jsonrpc.Message, error) {
	isJSON, isSSE := wire.MediaType(resp.Header.Get("Content-Type"))
	switch {
	case isJSON:
		var buf bytes.Buffer
		if err := wire.ReadBody(&buf, resp.Body, b.maxBytes); err != nil {
			return nil, err
		}
		return wire.DecodeResponse(b.name, resp.StatusCode, buf.Bytes(), b.maxBytes, json.RawMessage(gatewayID))
	case isSSE && resp.StatusCode/100 == 2:
		sse := wire.NewSSEReader(resp.Body, int(b.maxBytes))
		for range maxProbeEvents {
			data, err := sse.Next()
			if err != nil {
				return nil, err
			}
			if m, err := jsonrpc.DecodeMessage(data, wire.JSONLimits(b.maxBytes)); err == nil && m.IsResponse() {
				if err := wire.CheckAnswer(b.name, m, json.RawMessage(gatewayID)); err != nil {
					return nil, err
				}
				return m, nil
			}
		}
	}
	return nil, wire.StatusError(b.name, resp.StatusCode, "server/discover probe got no JSON-RPC response")
}

// legacyDiscover answers fetchDiscover for a legacy backend from its InitializeResult (digest
// §7: synthesize server/discover). A health probe also asks a legacy backend server/discover,
// to re-learn the era from an answer naming 2026-07-28, and pings a session so a dead backend
// shows as down. handled is false for a modern backend whose discover the caller must still
// fetch.
func (b *Backend) legacyDiscover(ctx context.Context, probe bool) (d *Discovered, handled bool, err error) {
	legacy, d, err := b.isLegacy(ctx, &Request{Method: wire.MethodDiscover, probe: probe})
	switch {
	case err != nil:
		if !errors.Is(err, errEraPending) && !errors.Is(err, ErrCircuitOpen) {
			b.health.down(b.env.Now(), err)
		}
		return nil, true, err
	case d != nil:
		b.health.up(b.env.Now)
		return d, true, nil
	case !legacy:
		return nil, false, nil
	}
	if probe {
		if d, ok := b.recheckLegacy(ctx); ok {
			return d, true, nil
		}
		if _, err := b.RoundTrip(ctx, &Request{Method: era.MethodPing, Body: []byte(pingRequest), probe: true}); err != nil {
			return nil, true, err
		}
	}
	init, err := b.legacy.bridge.InitResult(ctx)
	if err != nil {
		return nil, true, err
	}
	b.health.up(b.env.Now)
	return discoveredFrom(b, init), true, nil
}

// recheckLegacy sends a learnt-legacy backend the server/discover probe; an answer naming
// 2026-07-28 among its supportedVersions re-learns the era as modern, and the legacy sessions
// are closed. Any other answer, or none, keeps the era.
func (b *Backend) recheckLegacy(ctx context.Context) (*Discovered, bool) {
	if b.legacy.pinned != "" {
		return nil, false
	}
	ctx, cancel := context.WithTimeoutCause(ctx, b.timeout, wire.ErrCallTimeout)
	defer cancel()
	v, d, _ := b.sendProbe(ctx, probeRequest(b, nil))
	if !v.Named || v.Era != era.Modern || d == nil || !b.legacy.relearn(era.Modern) {
		return nil, false
	}
	b.env.Log.Info("upstream now names 2026-07-28 in server/discover; no longer bridging", "upstream", b.name)
	b.disc.store(d, b.env.Now())
	b.health.up(b.env.Now)
	go b.legacy.bridge.Close()
	return d, true
}

// relearnModern is fetchDiscover's check of a health probe's answer from a learnt-modern
// backend: an answer naming only pre-2026 versions re-learns the era as legacy.
func (b *Backend) relearnModern(m *jsonrpc.Message) bool {
	if era.Named(m) != era.Legacy || !b.legacy.relearn(era.Legacy) {
		return false
	}
	b.env.Log.Info("upstream names only pre-2026 revisions in server/discover; bridging", "upstream", b.name)
	return true
}

// pingRequest is the health probe sent to a legacy backend instead of server/discover.
const pingRequest = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// errorf builds an error wrapping sentinel with the backend name.
func errorf(sentinel error, b *Backend, format string, args ...any) error {
	return fmt.Errorf("%w: %s: "+format, append([]any{sentinel, b.name}, args...)...)
}
