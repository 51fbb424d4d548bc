// Package legacy is the gateway's client side toward a pre-2026 backend (2025-11-25,
// 2025-06-18, 2025-03-26): the initialize handshake, a small pool of sessions (a few shared
// ones that authenticate as the gateway, and one per caller of a token-exchange backend), one
// request and its response on a session (a JSON body or a resumable event stream), the
// backend's own requests answered on the way, notifications/cancelled for a request the caller
// abandoned, and DELETE of sessions no longer needed.
//
// It owns the sessions and the transport only. How a message of one era maps to the other is
// package era's; when a backend is spoken to as pre-2026, and how its answers reach the caller
// as 2026-07-28 ones, is upstreams'. The bridge sees its backend through Backend.
package legacy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// Backend is what the bridge needs of the backend it talks to.
type Backend interface {
	Name() string
	URL() string
	// Header is the backend's static request headers; the bridge copies them, never changes them.
	Header() http.Header
	Client() *http.Client
	// Timeout bounds one request, the handshake included.
	Timeout() time.Duration
	// MaxBytes bounds a response body and each event.
	MaxBytes() int64
	// Results is the replica's budget of response bytes in flight: what a round trip of a
	// caller's request (Bridge.Start) reads of its response is charged to it until the round
	// trip is freed (RoundTrip.Free). Nil charges nothing.
	Results() *bodyread.Budget
	// HasCredentials reports whether the backend has credentials configured (Authorization).
	HasCredentials() bool
	// Authorization returns the Authorization value of one request (see Bridge): subject and
	// key as given to WithCaller.
	Authorization(ctx context.Context, subject, key string, fromCaller bool) (string, error)
	// Failed records a request the bridge made on its own (the initialize handshake) that
	// failed, as every backend request is recorded; forCaller marks the handshake of a caller's
	// own session (WithCaller), whose failure the caller's request that needed it reports too.
	Failed(method string, forCaller bool, start time.Time, err error)
}

// Config holds what the handshake declares and the bounds of the per-caller sessions.
type Config struct {
	// Offer is the protocolVersion sent in initialize.
	Offer string
	// ClientInfo is the clientInfo sent in initialize.
	ClientInfo json.RawMessage
	// MaxCallers bounds the callers that hold a session with one token-exchange backend;
	// zero means DefaultMaxSessions.
	MaxCallers int
	// CallerIdle is how long a caller's session may go unused; zero means DefaultSessionIdle.
	CallerIdle time.Duration
	// CheckInit, when set, refuses an InitializeResult the gateway cannot use; the handshake
	// then fails with its error.
	CheckInit func(*InitResult) error
	// Apps adds the MCP Apps extension to the capabilities declared (appsCapabilities).
	Apps bool
	Log  *slog.Logger
	Now  func() time.Time
}

// Defaults of the per-caller sessions of a token-exchange backend.
const (
	// DefaultMaxSessions bounds the callers that hold a session with one such backend in one
	// replica (one session each).
	DefaultMaxSessions = 256
	// DefaultSessionIdle is how long a caller's session may go unused before it is closed.
	DefaultSessionIdle = 5 * time.Minute
)

// poolSize bounds the sessions one replica keeps with one backend that sees the gateway as one
// identity (static headers, client credentials). Legacy lists do not vary per session here (the
// gateway declares the same capabilities on every session), so a few sessions shared by all
// callers are enough; more only spread concurrent calls.
const poolSize = 4

// Bounds of a round trip.
const (
	// maxResumes bounds the SEP-1699 reconnections of one response stream.
	maxResumes = 10
	// maxResumeDelay caps the backend's retry hint before reconnecting.
	maxResumeDelay = 5 * time.Second
	// sideTimeout bounds the gateway's side messages to a legacy backend: answers to its
	// requests, notifications/cancelled, DELETE of a session.
	sideTimeout = 5 * time.Second
	// maxSkipped bounds the messages read before the response.
	maxSkipped = 10000
	// maxAsks bounds the backend's requests (ping, elicitation, sampling, roots, anything
	// else) one call answers: each costs a POST of the gateway's to the backend, and a client
	// request a question to the client too. Real servers send a few per call; a backend that
	// loops (on ping, say) would otherwise have the gateway send one POST per message it
	// streams, up to maxSkipped. Answers within a call go one at a time, so a caller holds at
	// most one per call in flight (server.maxConcurrentPerCaller calls), and at most maxAsks
	// per call. Past it the call fails with errTooManyAsks and the backend is told that the
	// call is cancelled (End). On a GET stream, which lasts as long as its listeners, the
	// bound is per asksWindow.
	maxAsks = 100
	// asksWindow is the period over which a GET stream may have maxAsks requests answered:
	// a ping every second is well inside it.
	asksWindow = time.Minute
)

// Bridge is the client side toward one pre-2026 backend: its sessions and the requests on them.
//
// A session of the gateway (shared by the callers of a backend that sees the gateway as one
// identity, or used for the gateway's own discover, probes and listens) authenticates with the
// client credentials grant; a session of one caller of a token-exchange backend with that
// caller's exchanged token, from the subject its ctx carries (WithCaller).
type Bridge struct {
	be     Backend
	offer  string
	client json.RawMessage
	log    *slog.Logger
	now    func() time.Time
	check  func(*InitResult) error
	caps   json.RawMessage // the capabilities initialize declares
	// pool holds the sessions that authenticate as the gateway itself (static headers, client
	// credentials; for a token-exchange backend only the gateway's own discover and probes).
	pool Pool
	// callers holds one session per caller of a token-exchange backend.
	callers callerPools
}

// New returns the bridge to be.
func New(be Backend, cfg Config) *Bridge {
	br := &Bridge{be: be, offer: cfg.Offer, client: cfg.ClientInfo, log: cfg.Log, now: cfg.Now, check: cfg.CheckInit,
		caps: clientCapabilities}
	if cfg.Apps {
		br.caps = appsCapabilities
	}
	if br.log == nil {
		br.log = slog.New(slog.DiscardHandler)
	}
	if br.now == nil {
		br.now = time.Now
	}
	br.pool.init(poolSize)
	br.callers.init(cfg.MaxCallers, cfg.CallerIdle)
	return br
}

// Gateway returns the pool of the sessions that authenticate as the gateway.
func (br *Bridge) Gateway() *Pool { return &br.pool }

// CallerPool returns the pool of the caller key identifies (a digest of its issuer and
// subject), creating it when needed; release hands it back when the request is done. Sessions
// of idle or evicted callers are ended in the background. When every per-caller session is in
// use the request is refused with ErrUnavailable rather than put on another caller's session.
func (br *Bridge) CallerPool(key [sha256.Size]byte) (pool *Pool, release func(), err error) {
	owner, closed, err := br.callers.take(key, br.now())
	if len(closed) > 0 {
		go br.deleteSessions(closed)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w (limit %d)", wire.ErrUnavailable, br.be.Name(), err, br.callers.max)
	}
	return &owner.pool, func() { br.callers.give(owner, br.now()) }, nil
}

// Callers returns the number of callers holding sessions.
func (br *Bridge) Callers() int { return br.callers.size() }

// Close ends every session, the gateway's and the callers', with DELETE, so the backend frees
// them now rather than at its idle timeout.
func (br *Bridge) Close() {
	live := br.pool.takeAll()
	live = append(live, br.callers.takeAll()...)
	br.deleteSessions(live)
}

// deleteSessions ends sessions with DELETE, in parallel, and waits.
func (br *Bridge) deleteSessions(live []*Session) {
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Go(func() { br.Delete(context.Background(), s) })
	}
	wg.Wait()
}

// InitResult returns the backend's last InitializeResult, opening a session of the gateway when
// there is none yet.
func (br *Bridge) InitResult(ctx context.Context) (*InitResult, error) {
	return br.pool.initResult(ctx, br)
}

// ReadErr classifies an error met while reading a legacy response.
func (br *Bridge) ReadErr(ctx context.Context, err error) error {
	if errors.Is(err, bodyread.ErrBudget) {
		return err // the replica's overload, not the backend's failure: the caller names it
	}
	return wire.ReadErr(ctx, br.be.Name(), br.be.MaxBytes(), err)
}

// errorf builds an error wrapping sentinel with the backend name.
func (br *Bridge) errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s: "+format, append([]any{sentinel, br.be.Name()}, args...)...)
}

// DrainClose reads and discards a small remainder of a body so its connection can be reused.
func DrainClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}
