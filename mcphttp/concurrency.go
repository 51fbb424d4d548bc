package mcphttp

import (
	"net/http"
	"sync"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Defaults for the concurrency limits: far above what one replica serves well, so they only
// stop a flood, not traffic.
const (
	DefaultMaxConcurrent          = 10000
	DefaultMaxConcurrentPerCaller = 256
	// DefaultMaxListensPerCaller leaves room for many clients of one user, each listening
	// once, while one caller's listens stay a small part of a replica's memory.
	DefaultMaxListensPerCaller = 32
	// maxListenParamsBytes bounds the params a listen keeps for as long as it lasts: room for
	// hundreds of resource subscriptions, like a pre-2026 session's (100 of them).
	maxListenParamsBytes = 64 << 10
)

// concurrency bounds requests in flight on this replica, overall and per caller (per client
// address without authentication: request.bound), so one caller (or a flood) cannot hold every
// connection, goroutine and backend slot.
type concurrency struct {
	all     chan struct{}
	callers callerCount
	listens callerCount // each caller's open listens (server.maxListensPerCaller)
}

// callerCount counts what each caller (request.bound) holds on this replica, up to limit each
// (none when limit ≤ 0). A caller's entry goes when it holds nothing.
type callerCount struct {
	limit int
	mu    sync.Mutex
	n     map[string]int
}

// take counts one more for caller; took is false when callers are not limited (nothing to
// give back), ok false when caller already holds limit.
func (c *callerCount) take(caller string) (took, ok bool) {
	if c.limit <= 0 || caller == "" {
		return false, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller] >= c.limit {
		return false, false
	}
	c.n[caller]++
	return true, true
}

// give gives back one that take counted.
func (c *callerCount) give(caller string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller]--; c.n[caller] <= 0 {
		delete(c.n, caller)
	}
}

func newConcurrency(max, perCaller, listensPerCaller int) *concurrency {
	c := &concurrency{callers: callerCount{limit: perCaller, n: map[string]int{}},
		listens: callerCount{limit: listensPerCaller, n: map[string]int{}}}
	if max > 0 {
		c.all = make(chan struct{}, max)
	}
	return c
}

var errBusy = &Error{Status: http.StatusServiceUnavailable, Outcome: outcomeRateLimited,
	RPC:    jsonrpc.NewError(jsonrpc.CodeUnavailable, "Too many requests in flight; retry later"),
	Header: http.Header{"Retry-After": {"1"}}}

// errTooManyListens refuses a listen while the caller has server.maxListensPerCaller open on
// this replica (drafts.tooManyListens is what the gateway answers).
var errTooManyListens = &Error{Status: http.StatusTooManyRequests, Outcome: outcomeRateLimited,
	RPC:    jsonrpc.NewError(jsonrpc.CodeRateLimited, "Too many open listens from this caller; close one first"),
	Header: http.Header{"Retry-After": {"60"}}}

// errCallerBusy is the caller's limit of requests in flight, as the gateway answers it without
// server.draftErrors (drafts.callerBusy is what it answers).
var errCallerBusy = &Error{Status: http.StatusTooManyRequests, Outcome: outcomeRateLimited,
	RPC:    jsonrpc.NewError(jsonrpc.CodeRateLimited, "Too many concurrent requests from this caller; retry later"),
	Header: http.Header{"Retry-After": {"1"}}}

// acquire takes an overall slot; took is false when there is no overall limit. A slot taken
// is given back with releaseAll, once.
func (c *concurrency) acquire() (took bool, err error) {
	if c.all == nil {
		return false, nil
	}
	select {
	case c.all <- struct{}{}:
		return true, nil
	default:
		return false, errBusy
	}
}

func (c *concurrency) releaseAll() { <-c.all }

// acquireCaller takes one of the caller's slots; took is false when callers are not limited. A
// slot taken is given back with releaseCaller, once.
func (c *concurrency) acquireCaller(caller string) (took bool, err error) {
	took, ok := c.callers.take(caller)
	if !ok {
		return false, errCallerBusy
	}
	return took, nil
}

func (c *concurrency) releaseCaller(caller string) { c.callers.give(caller) }

// admission is what stage admit took for a request, held until its response is written. It is
// a value in the request, not a closure: admitting costs no allocation.
type admission struct {
	c      *concurrency
	held   bool   // admit succeeded; release gives back what it took
	all    bool   // an overall slot
	caller string // the caller whose slot was taken; "" for none
	// listen is the caller one of whose listens the whole request holds (holdListen); "" for
	// none. An inner request of it has it too, unheld: its listens are counted as that one.
	listen string
}

// release gives back what admission took, once; later calls do nothing.
func (a *admission) release() {
	if !a.held {
		return
	}
	a.held = false
	if a.caller != "" {
		a.c.releaseCaller(a.caller)
	}
	if a.listen != "" {
		a.c.listens.give(a.listen)
	}
	if a.all {
		a.c.releaseAll()
	}
}

// admit is stage admit: an in-flight slot on this replica, one of the caller's, and a token of
// the caller's rate limit (request.bound: without authentication, its client address's). Every
// request past stage authenticate takes them, on every path: the
// 2026-07-28 pipeline here, and an era edge once for its whole client request
// (Incoming.Admit). What it took is x.admitted, given back once the response is written.
func (s *Server) admit(x *request) error {
	a := admission{c: s.inflight}
	var err error
	if a.all, err = s.inflight.acquire(); err != nil {
		return err
	}
	took, err := s.inflight.acquireCaller(x.bound())
	if err != nil {
		a.held = true
		a.release()
		return s.drafts.callerBusy
	}
	if took {
		a.caller = x.bound()
	}
	a.held = true
	if err := x.limitCaller(); err != nil {
		a.release()
		return err
	}
	x.admitted = a
	return nil
}

// holdListen takes one of the caller's listens for the whole admitted request, given back with
// its admission.
func (a *admission) holdListen(caller string) error {
	if !a.held || a.listen != "" {
		return nil
	}
	took, ok := a.c.listens.take(caller)
	if !ok {
		return errTooManyListens
	}
	if took {
		a.listen = caller
	}
	return nil
}
