package mcphttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/metrics"
)

// Limiter takes one token from a rate-limit bucket (store.Store implements it).
type Limiter interface {
	Allow(ctx context.Context, key string, limit store.Limit) (store.RateDecision, error)
}

// RateLimits is the compiled rate-limit configuration.
type RateLimits struct {
	// Store holds the buckets; shared across replicas when it is Redis. Required when any limit
	// is set.
	Store Limiter
	// PerCaller, when set, limits every caller's requests: without authentication, every
	// client address's (request.bound).
	PerCaller *store.Limit
	// Rules maps a policy rule's rateLimit text to its parsed limit, compiled at start-up.
	Rules map[string]store.Limit
	// FailOpen admits requests when the store cannot answer (capacity protection only); false
	// refuses them with a retryable 503.
	FailOpen bool
}

// limitCaller applies the per-caller limit: part of stage admit, after authentication.
func (x *request) limitCaller() error {
	s := x.s
	if s.rate.PerCaller == nil {
		return nil
	}
	return x.takeToken("c|"+x.bound(), *s.rate.PerCaller)
}

// limitTool applies the rate limit of the policy rule that allowed this call, per caller and
// item the rule names (a wildcard's items together):
// stage limit-tool, after stage mrtr-in, so only calls that reach the backend count.
func (x *request) limitTool() error {
	s := x.s
	if x.route.decision.RateLimit == "" {
		return nil
	}
	l, ok := s.rate.Rules[x.route.decision.RateLimit]
	if !ok {
		// Compiled from the same policy at start-up; a miss is a bug, and limits fail closed
		// only by configuration, so log it loudly rather than refuse.
		s.log.Error("rate limit not compiled", "rule", x.route.decision.RuleID)
		return nil
	}
	// Per caller, rule and what the rule counts the call against (authz.Decision.RateItem):
	// a name the rule lists has its own bucket; every name a wildcard covers shares the
	// wildcard's, so the buckets a caller can make are the rule's patterns, not the names it
	// invents, and a limit cannot be spread over invented names.
	d := &x.route.decision
	return x.takeToken(ruleBucket(x.bound(), d.RuleID, x.route.upstream, d.RateItem), l)
}

// ruleBucket is the key of caller's bucket under rule for item of upstream. Buckets live in
// the shared store, where a replica of the previous release keeps counting in them during a
// rolling update, so the parts are joined by "|" as that release joins them. A caller key may
// hold "|" (a subject is whatever the issuer says), and so may an item (a resource URI the rule
// lists): joined, ("…#a|r", "x") and ("…#a", "r|x") would be one bucket, and one caller could
// spend another's limit. So when any part holds "|", every part is written with its length
// instead, under "tn|", which no joined key starts with ("t|" does). Such a caller's buckets
// are new ones after an update: counted afresh, once, for at most the limit's window.
func ruleBucket(caller, rule, upstream, item string) string {
	if !strings.Contains(caller, "|") && !strings.Contains(rule, "|") && !strings.Contains(upstream, "|") && !strings.Contains(item, "|") {
		return "t|" + caller + "|" + rule + "|" + upstream + "|" + item
	}
	var b strings.Builder
	b.WriteString("tn|")
	for _, p := range [...]string{caller, rule, upstream, item} {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

func (x *request) takeToken(key string, l store.Limit) error {
	s := x.s
	d, err := s.rate.Store.Allow(x.ctx, key, l)
	switch {
	case err != nil:
		s.metrics.RateLimit(metrics.RateError)
		// While the store's circuit breaker is open every call lands here without asking
		// Redis; the breaker logs its own state changes, and a line per call would flood
		// the log at full request rate.
		if !errors.Is(err, store.ErrSkipped) {
			s.log.LogAttrs(x.ctx, slog.LevelWarn, "rate limit store unavailable",
				slog.Bool("fail_open", s.rate.FailOpen), slog.String("error", err.Error()))
		}
		if s.rate.FailOpen {
			return nil
		}
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUnavailable, "Rate limiter unavailable; retry later"))
		e.Header = http.Header{"Retry-After": {"1"}}
		e.Outcome = outcomeUnavailable
		return e
	case d.Allowed:
		s.metrics.RateLimit(metrics.RateAllowed)
		return nil
	}
	s.metrics.RateLimit(metrics.RateLimited)
	return s.drafts.limited(d.RetryAfter, "Rate limit exceeded; retry after "+retryAfterSeconds(d.RetryAfter)+"s")
}
