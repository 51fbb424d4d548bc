package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestPrivateListWithinCallersShare: a per-user backend's list, which is one caller's (its
// account's), is held within that caller's share of the result budget while it is read, as that
// caller's results are: a list that never ends is refused once it passes the share (8 MiB of a
// 64 MiB budget here), after the pages that fit it, and the rest of the budget stays other
// callers'. Before, it was charged to the replica's budget alone: one caller's account, listed,
// took every caller's room until the whole budget was spent (some 70 pages of 900 KiB).
func TestPrivateListWithinCallersShare(t *testing.T) {
	const (
		budget   = 64 << 20
		maxBytes = 1 << 20 // a share is an eighth of the budget, more than three times this
		page     = 900 << 10
	)
	var pages atomic.Int64
	tool := `{"name":"t%d","description":"` + strings.Repeat("d", page) + `","inputSchema":{"type":"object"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &req) != nil || req.Method != MethodToolsList {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		n := pages.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`+tool+`],"nextCursor":"c%d"}}`, req.ID, n, n)
	}))
	defer srv.Close()
	const alice = "https://issuer.example#alice"
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL + "/mcp", Protocol: ProtocolVersion,
		MaxResponseBytes: maxBytes, Auth: AuthConfig{Type: AuthUserOAuth}}}},
		Options{MaxResultBytesInFlight: budget, UserTokens: mcptest.AccountVault{Caller: alice, Token: "alice-account"}})
	_, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, CacheKey: alice,
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
	if !errors.Is(err, ErrResultBudget) {
		t.Fatalf("a list that never ends: %v, want ErrResultBudget", err)
	}
	if n, most := pages.Load(), int64(budget/8/page+2); n > most {
		t.Errorf("the backend was asked for %d pages of %d KiB, more than the caller's share of %d MiB holds (%d)", n, page>>10, budget/8>>20, most)
	}
	if n := r.ResultBytesInFlight(); n != 0 {
		t.Errorf("%d result bytes in flight after the list", n)
	}
}
