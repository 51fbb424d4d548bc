package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestMapErrorOutcomes: each failure the backends' package reports keeps its own outcome on the
// client request, the one the backend request is counted under, and anything unclassified is
// the gateway's own error. No request from outside reaches that last row in a working gateway;
// this is where it is pinned.
func TestMapErrorOutcomes(t *testing.T) {
	for _, tc := range []struct {
		err     error
		status  int
		outcome string
	}{
		{fmt.Errorf("%w: b: HTTP 500", upstreams.ErrBadResponse), http.StatusBadGateway, outcome.BadResponse},
		{fmt.Errorf("%w: b: refused", upstreams.ErrUnavailable), http.StatusBadGateway, outcome.Unavailable},
		{fmt.Errorf("%w: old", upstreams.ErrTooManyAsks), http.StatusBadGateway, outcome.BadResponse},
		{fmt.Errorf("%w: b: slow", upstreams.ErrTimeout), http.StatusGatewayTimeout, outcome.Timeout},
		{context.DeadlineExceeded, http.StatusGatewayTimeout, outcome.Timeout},
		{context.Canceled, 499, outcome.Canceled},
		{upstreams.ErrUnknownName, http.StatusBadRequest, outcome.ClientError},
		{upstreams.ErrResultBudget, http.StatusServiceUnavailable, outcome.RateLimited},
		{fmt.Errorf("call: %w", &upstreams.RateLimitError{Backend: "b", RetryAfter: 2500 * time.Millisecond}), http.StatusTooManyRequests, outcome.RateLimited},
		{errors.New("something the gateway did not expect"), http.StatusInternalServerError, outcome.GatewayError},
	} {
		e := mapError(tc.err)
		if e.Status != tc.status || e.Outcome != tc.outcome {
			t.Errorf("mapError(%v) = %d %s, want %d %s", tc.err, e.Status, e.Outcome, tc.status, tc.outcome)
		}
	}
}

// TestTooManyAsksSaysWhy: a call a pre-2026 backend flooded with requests of its own ends with
// a 502 that says so in words, counted as the backend's bad response.
func TestTooManyAsksSaysWhy(t *testing.T) {
	e := mapError(fmt.Errorf("%w: old", upstreams.ErrTooManyAsks))
	if e.Status != http.StatusBadGateway || e.RPC == nil || e.RPC.Code != jsonrpc.CodeUpstreamUnavailable ||
		!strings.Contains(e.RPC.Message, "more than 100 requests of its own during one call") || e.Outcome != outcome.BadResponse {
		t.Fatalf("mapError = %d %+v %s, want 502 -32010 saying the backend sent too many requests, bad_response", e.Status, e.RPC, e.Outcome)
	}
}
