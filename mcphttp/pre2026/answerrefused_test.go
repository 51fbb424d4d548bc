package pre2026

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestAnswerRefused: a client's answer the gateway could not deliver says whether to send it
// again, as docs/denials.md lists: too many of the caller's answers on their way to other
// replicas is the caller's limit (429, in server.draftErrors' shape) with a retry after 1 s; a
// store that cannot carry it is 503 with Retry-After 1; anything else is final (-32600).
func TestAnswerRefused(t *testing.T) {
	var asked time.Duration
	limited := func(d time.Duration, msg string) *mcphttp.Error {
		asked = d
		return &mcphttp.Error{Status: http.StatusTooManyRequests, RPC: jsonrpc.NewError(jsonrpc.CodeRateLimited, msg)}
	}
	err := answerRefused(fmt.Errorf("forward: %w", errAsksBusy), limited)
	var e *mcphttp.Error
	if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || asked != time.Second {
		t.Fatalf("busy: %v (retry after %v), want the caller's limit with 1s", err, asked)
	}
	err = answerRefused(fmt.Errorf("forward: %w", errAsksUnavailable), limited)
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.Header.Get("Retry-After") != "1" {
		t.Fatalf("store unavailable: %v", err)
	}
	var rpc *jsonrpc.Error
	if err := answerRefused(errors.New("sealed answer does not open"), limited); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("an answer nobody waits for: %v", err)
	}
	if err := answerRefused(&badResultError{Method: "roots/list"}, limited); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams ||
		rpc.Message != `Invalid params: this answer to roots/list was not taken: its result needs a "roots" array; answer again` {
		t.Fatalf("a result its request cannot take: %v", err)
	}
}
