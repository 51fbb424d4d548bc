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
)

// concurrency bounds requests in flight on this replica, overall and per authenticated caller,
// so one caller (or a flood) cannot hold every connection, goroutine and backend slot.
type concurrency struct {
	all       chan struct{}
	perCaller int
	mu        sync.Mutex
	callers   map[string]int
}

func newConcurrency(max, perCaller int) *concurrency {
	c := &concurrency{perCaller: perCaller, callers: map[string]int{}}
	if max > 0 {
		c.all = make(chan struct{}, max)
	}
	return c
}

var errBusy = &Error{Status: http.StatusServiceUnavailable, Outcome: outcomeRateLimited,
	RPC:    jsonrpc.NewError(jsonrpc.CodeUnavailable, "Too many requests in flight; retry later"),
	Header: http.Header{"Retry-After": {"1"}}}

var errCallerBusy = &Error{Status: http.StatusTooManyRequests, Outcome: outcomeRateLimited,
	RPC:    jsonrpc.NewError(jsonrpc.CodeRateLimited, "Too many concurrent requests from this caller; retry later"),
	Header: http.Header{"Retry-After": {"1"}}}

// acquire takes an overall slot; release must be called once when it succeeded.
func (c *concurrency) acquire() (release func(), err error) {
	if c.all == nil {
		return func() {}, nil
	}
	select {
	case c.all <- struct{}{}:
		return func() { <-c.all }, nil
	default:
		return nil, errBusy
	}
}

// acquireCaller takes one of the caller's slots.
func (c *concurrency) acquireCaller(caller string) (release func(), err error) {
	if c.perCaller <= 0 || caller == "" {
		return func() {}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.callers[caller] >= c.perCaller {
		return nil, errCallerBusy
	}
	c.callers[caller]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.callers[caller]--; c.callers[caller] <= 0 {
			delete(c.callers, caller)
		}
	}, nil
}

// admit is stage admit: an in-flight slot on this replica, one of the caller's, and a token of
// the caller's rate limit. Every request that is authenticated takes them, on every path: the
// 2026-07-28 pipeline here, and an era edge once for its whole client request
// (Incoming.Admit). release gives the slots back; it is nil when admission failed.
func (s *Server) admit(x *request) (release func(), err error) {
	releaseAll, err := s.inflight.acquire()
	if err != nil {
		return nil, err
	}
	releaseCaller, err := s.inflight.acquireCaller(x.subject())
	if err != nil {
		releaseAll()
		return nil, err
	}
	release = func() { releaseCaller(); releaseAll() }
	if err := x.limitCaller(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}
