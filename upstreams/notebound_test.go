package upstreams

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// A backend's notifications on a call's response stream are relayed up to its
// maxNotificationsPerCall; the rest are read, dropped and counted, and the call still ends with
// its result: for a modern backend's SSE response and a pre-2026 backend's mid-call stream alike.
func TestCallNotificationsBoundedPerCall(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartLegacyServer(t, "beta")
	var mu sync.Mutex
	dropped := map[string]int{}
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL(), MaxNotificationsPerCall: 2},
		{Name: "beta", URL: beta.URL(), MaxNotificationsPerCall: 2},
	}}, Options{NotificationDropped: func(upstream string) {
		mu.Lock()
		dropped[upstream]++
		mu.Unlock()
	}})
	meta := strings.TrimSuffix(upstreamstest.Meta, "}") + `,"progressToken":"p"}`
	for _, name := range []string{"alpha", "beta"} {
		t.Run(name, func(t *testing.T) {
			target, err := r.Resolve(KindTool, name+"__progress")
			if err != nil {
				t.Fatalf("%s__progress does not resolve: %v", name, err)
			}
			s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`7`), Target: target,
				Params: json.RawMessage(`{"_meta":` + meta + `,"name":"` + name + `__progress","arguments":{"steps":5}}`), ProgressToken: json.RawMessage(`"p"`)})
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			msgs := collect(t, s)
			if len(msgs) != 3 {
				t.Fatalf("got %d messages, want 2 progress notifications and the result: %v", len(msgs), msgs)
			}
			for i, m := range msgs[:2] {
				if !strings.Contains(m, `"notifications/progress"`) || !strings.Contains(m, `"step `+string(rune('1'+i))+` of 5"`) {
					t.Errorf("message %d = %s, want progress step %d", i, m, i+1)
				}
			}
			if !strings.Contains(msgs[2], `"done 5"`) {
				t.Errorf("final = %s, want the result", msgs[2])
			}
			mu.Lock()
			defer mu.Unlock()
			if dropped[name] != 3 {
				t.Errorf("dropped[%s] = %d, want 3", name, dropped[name])
			}
		})
	}
}

func TestMaxNotificationsPerCallNotNegative(t *testing.T) {
	u := UpstreamConfig{Name: "a", URL: "http://a", MaxNotificationsPerCall: -1}
	errs := u.Problems()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "maxNotificationsPerCall") {
		t.Fatalf("Problems() = %v, want one about maxNotificationsPerCall", errs)
	}
}
