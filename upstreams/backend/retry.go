package backend

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
)

// Defaults of RetryConfig.
const (
	// DefaultRetryAttempts is the number of tries of a request that is safe to repeat, the first
	// included.
	DefaultRetryAttempts = 3
	// DefaultRetryBackoff is the backoff before the second try; it doubles with each further try.
	DefaultRetryBackoff = 100 * time.Millisecond
	// DefaultRetryMaxBackoff caps one backoff.
	DefaultRetryMaxBackoff = 2 * time.Second
	// MaxRetryAttempts bounds RetryConfig.Attempts.
	MaxRetryAttempts = 10
)

// RetryConfig tunes the retries of requests that are safe to repeat: the gateway's own
// server/discover and list pages. tools/call, prompts/get, resources/read and
// completion/complete are never retried: the gateway cannot know whether a backend acted on a
// request whose answer was lost.
type RetryConfig struct {
	// Attempts is the number of tries, the first included; 1 disables retries. Zero means
	// DefaultRetryAttempts; at most MaxRetryAttempts.
	Attempts int `yaml:"attempts"`
	// Backoff is the wait before the second try, doubled for each further try and jittered
	// (a random wait between half and all of it). Zero means DefaultRetryBackoff.
	Backoff time.Duration `yaml:"backoff"`
	// MaxBackoff caps one wait. Zero means DefaultRetryMaxBackoff.
	MaxBackoff time.Duration `yaml:"maxBackoff"`
}

func (c *RetryConfig) validate() []error {
	var errs []error
	if c.Attempts < 0 || c.Attempts > MaxRetryAttempts {
		errs = append(errs, configerr.At("attempts", "%d: want 0..%d", c.Attempts, MaxRetryAttempts))
	}
	if c.Backoff < 0 {
		errs = append(errs, configerr.At("backoff", "must not be negative"))
	}
	if c.MaxBackoff < 0 {
		errs = append(errs, configerr.At("maxBackoff", "must not be negative"))
	}
	return errs
}

// retryPolicy is the compiled RetryConfig.
type retryPolicy struct {
	attempts   int
	backoff    time.Duration
	maxBackoff time.Duration
}

func newRetryPolicy(c RetryConfig) retryPolicy {
	p := retryPolicy{attempts: c.Attempts, backoff: orDuration(c.Backoff, DefaultRetryBackoff),
		maxBackoff: orDuration(c.MaxBackoff, DefaultRetryMaxBackoff)}
	if p.attempts == 0 {
		p.attempts = DefaultRetryAttempts
	}
	return p
}

// wait returns the jittered backoff before try number n+1 (n ≥ 1 tries done).
func (p retryPolicy) wait(n int) time.Duration {
	d := p.backoff << min(n-1, 30)
	if d <= 0 || d > p.maxBackoff {
		d = p.maxBackoff
	}
	// "Equal jitter": spreads the retries of many replicas without ever retrying at once.
	return d/2 + rand.N(d/2+1)
}

// retryable reports whether a failed safe request may be tried again: only when the backend
// was not reached or said it is unavailable (refused, reset, 502/503/504). A timeout is not
// retried (a slow backend stays slow and the caller's budget is spent), nor an open circuit,
// a bad answer, a 429 (wire.ErrRateLimited: the backend asked the caller to wait), or the
// caller going away.
func retryable(err error) bool {
	return errors.Is(err, wire.ErrUnavailable) && !errors.Is(err, ErrCircuitOpen) && !errors.Is(err, ErrCredentials)
}

// RoundTrip sends a gateway-originated request that is safe to repeat (a list page or
// server/discover) and returns the decoded final response, notifications skipped, retrying
// with backoff within ctx. A health probe is tried once: the next probe is its retry.
//
// What a pre-2026 server asks while it answers (an elicitation, a sampling request, roots/list)
// is refused: the request is the gateway's own (an interceptor's invocation, a list page made
// for a caller's call), so whatever client ctx's call could reach (legacy.ClientRequests) is
// not that server's to ask, and nothing would check what it asks on the way.
func (b *Backend) RoundTrip(ctx context.Context, o *Request) (*jsonrpc.Message, error) {
	ctx = legacy.WithoutClientRequests(ctx)
	attempts := b.retry.attempts
	if o.probe {
		attempts = 1
	}
	var err error
	for n := 1; ; n++ {
		var m *jsonrpc.Message
		if m, err = b.roundTripOnce(ctx, o); err == nil || n >= attempts || !retryable(err) {
			return m, err
		}
		t := time.NewTimer(b.retry.wait(n))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}
