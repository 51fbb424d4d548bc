package gateway

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestReloadStormUnderLoad: while clients call without pause, the policy is reloaded back and
// forth (add allowed, then not) with a broken configuration in between, many times. No call is
// dropped: echo, allowed by every configuration, always succeeds. No call is served under a mix
// of two policies: every add the gateway answered as allowed reached the backend, and no refused
// one did.
func TestReloadStormUnderLoad(t *testing.T) {
	t.Parallel()
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	both, echoOnly := authYAML(iss.URL(), `["echo", "add"]`, "", alpha), authYAML(iss.URL(), `["echo"]`, "", alpha)
	f := startReloadGateway(t, "30s", both)
	token := mintFor(t, iss, "alice")
	ctx, stop := context.WithCancel(context.Background())
	var echoFailed, addAllowed, addRefused, rounds atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		cs := mcptest.Connect(t, f.url(), mcptest.WithBearer(token))
		wg.Go(func() {
			for ctx.Err() == nil {
				if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
					echoFailed.Add(1)
					t.Errorf("echo failed during the reloads: %v %+v", err, res)
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}})
				if err == nil && !res.IsError {
					addAllowed.Add(1)
				} else {
					addRefused.Add(1)
				}
				rounds.Add(1)
			}
		})
	}
	for i := range 40 {
		body := both
		switch i % 3 {
		case 1:
			body = echoOnly
		case 2:
			body = "auth: {issuers: [{issuer: \"" + iss.URL() + "\"}], policy: {rules: [{id: x, tols: [\"*\"]}]}}\n"
		}
		if err := f.reload(t, "30s", body); (err != nil) != (i%3 == 2) {
			t.Fatalf("reload %d: %v", i, err)
		}
		// Every configuration serves calls before the next replaces it, some of them in flight
		// when it does.
		before := rounds.Load()
		mcptest.WaitFor(t, "calls on the new configuration", func() bool { return rounds.Load() >= before+3 })
	}
	stop()
	wg.Wait()
	adds := 0
	for _, e := range alpha.RequestsOf("tools/call") {
		if e.Header.Get("Mcp-Name") == "add" {
			adds++
		}
	}
	t.Logf("echo failures %d, add allowed %d, refused %d, reached the backend %d", echoFailed.Load(), addAllowed.Load(), addRefused.Load(), adds)
	if int64(adds) != addAllowed.Load() {
		t.Errorf("%d adds reached the backend, %d were answered as allowed", adds, addAllowed.Load())
	}
	if addAllowed.Load() == 0 || addRefused.Load() == 0 {
		t.Errorf("the storm did not exercise both policies: %d allowed, %d refused", addAllowed.Load(), addRefused.Load())
	}
}

// TestReloadWhileRedisAway: with the shared store hung (paused: connections open, no answer)
// or stopped, a reload is applied without waiting on it, and the new policy serves calls that
// need no shared state. The store's timeouts are long, so a reload that waited on the store
// would not end within reloadWait.
func TestReloadWhileRedisAway(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	redis := testredis.Start(t)
	store := "redis: {url: \"" + redis.URL() + "\", dialTimeout: 10m, readTimeout: 10m, writeTimeout: 10m}\n" +
		"mrtr: {keys: [{id: k1, secret: {value: \"" + strings.Repeat("k3y", 12) + "\"}}]}\n"
	f := startReloadGateway(t, "30s", store+authYAML(iss.URL(), `["echo"]`, "", alpha))
	cs := mcptest.Connect(t, f.url(), mcptest.WithBearer(mintFor(t, iss, "alice")))
	for i, away := range []struct {
		name        string
		leave, back func()
	}{{"paused", redis.Pause, redis.Resume}, {"stopped", redis.Stop, redis.Restart}} {
		away.leave()
		tools := []string{`["add"]`, `["echo"]`}[i%2]
		want := []string{"alpha__add", "alpha__echo"}[i%2]
		if err := f.reload(t, "30s", store+authYAML(iss.URL(), tools, "", alpha)); err != nil {
			t.Fatalf("%s: reload refused: %v", away.name, err)
		}
		if names := toolNames(t, cs); !slices.Equal(names, []string{want}) {
			t.Errorf("%s: after the reload the tools are %v, want %s", away.name, names, want)
		}
		away.back()
	}
}
