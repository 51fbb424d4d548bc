package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestAuthorizationContextExpires: a denial's authorizationContextId ties a retry to it for one
// hour (docs/denials.md): echoed within the hour it is logged verified with the handle, after it
// unverified and without the handle, as a forged one is.
func TestAuthorizationContextExpires(t *testing.T) {
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "t", Secret: bytes.Repeat([]byte("c"), 32)}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	logs := &mcptest.LogBuffer{}
	d := compileDrafts([]string{DraftDenials}, ring.Sealer(seal.PurposeAuthorizationContext),
		slog.New(slog.NewJSONHandler(logs, nil)), func() time.Time { return now })
	x := &request{}
	x.ctx = context.Background()
	x.caller.principal = &authz.Principal{Issuer: "https://idp.example", Subject: "alice"}
	x.in.req = &jsonrpc.Request{Method: "tools/call"}
	x.in.params = &jsonrpc.Params{Name: "alpha__echo", HasName: true, Arguments: json.RawMessage(`{"text":"x"}`)}
	handle := d.authorizationContext(x)
	if handle == "" {
		t.Fatal("no handle minted")
	}
	quoted, _ := json.Marshal(handle)
	x.in.meta = &jsonrpc.Meta{AuthorizationContextID: quoted}
	for _, tc := range []struct {
		after    time.Duration
		verified bool
	}{{time.Hour, true}, {time.Hour + time.Second, false}} {
		now = now.Add(tc.after)
		before := len(logs.String())
		d.correlate(x)
		now = now.Add(-tc.after)
		var line struct {
			Msg      string `json:"msg"`
			Verified bool   `json:"verified"`
			Ctx      string `json:"authz_ctx"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(logs.String()[before:])), &line); err != nil || line.Msg != "authorization context echoed" {
			t.Fatalf("after %v: log %q: %v", tc.after, logs.String()[before:], err)
		}
		if line.Verified != tc.verified || (line.Ctx == handle) != tc.verified {
			t.Errorf("echoed %v after the denial: %+v, want verified %v", tc.after, line, tc.verified)
		}
	}
}
