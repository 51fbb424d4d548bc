package mcphttp

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestDecodeGateBoundsLargeDecodes: however many large bodies arrive at once, no more decode at
// a time than the gate has slots, and small bodies never wait for it.
func TestDecodeGateBoundsLargeDecodes(t *testing.T) {
	g := &decodeGate{slots: make(chan struct{}, 2), wait: time.Minute}
	var now, most atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			leave, err := g.enter(context.Background(), largeBody)
			if err != nil {
				t.Error(err)
				return
			}
			n := now.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond) // hold the turn, so that others queue behind it
			now.Add(-1)
			leave()
		})
	}
	// Small bodies pass while large ones hold every slot.
	for range 2 {
		g.slots <- struct{}{}
	}
	if leave, err := g.enter(context.Background(), largeBody-1); err != nil {
		t.Errorf("a small body waited for the gate: %v", err)
	} else {
		leave()
	}
	<-g.slots
	<-g.slots
	wg.Wait()
	if most.Load() > 2 {
		t.Errorf("%d large decodes at once, want at most 2", most.Load())
	}
}

// TestLargeBodyRefusedWhenGateStaysFull: a large body that cannot get a turn within the wait is
// refused as overload (503, -32014, Retry-After) and never forwarded, while a small request is
// served meanwhile.
func TestLargeBodyRefusedWhenGateStaysFull(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	s, e := testServer(t, Config{MaxBodyBytes: 4 << 20}, oneBackend(be.URL()), upstreams.Options{}, Deps{Version: "test"})
	s.decodes = &decodeGate{slots: make(chan struct{}, 1), wait: 50 * time.Millisecond}
	s.decodes.slots <- struct{}{} // a large decode that never ends
	url := serveTest(t, e).URL + DefaultPath

	large := body("tools/list", `,"pad":"`+strings.Repeat("x", largeBody)+`"`)
	r := do(t, "POST", url, modern("tools/list", ""), large)
	if r.Status != 503 || r.RPC.Error == nil || r.RPC.Error.Code != -32014 || r.Header.Get("Retry-After") == "" {
		t.Errorf("large body with the gate full: %d %s %v, want 503 -32014 with Retry-After", r.Status, r.Body, r.Header)
	}
	if n := len(be.Requests()); n != 0 {
		t.Errorf("the backend got %d requests for a refused one", n)
	}
	if r := do(t, "POST", url, modern("tools/list", ""), body("tools/list", "")); r.Status != 200 {
		t.Errorf("small request while the gate is full: %d %s", r.Status, r.Body)
	}
}
