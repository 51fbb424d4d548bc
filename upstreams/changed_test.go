package upstreams

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestListChangedPassedOnOnceAWindow: a backend with three distinct listens on this replica
// (three streams, each hearing every notification) that sends 40 tools/list_changed has them
// passed on to the other replicas once at the start of the window and once at its end, not
// 120 times; a window without more closes, and the next notification is passed on at once.
func TestListChangedPassedOnOnceAWindow(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	var passed atomic.Int64
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "fault", URL: url, Protocol: ProtocolVersion}}},
		Options{OnListChanged: func(upstream, method string) {
			if upstream == "fault" && method == "notifications/tools/list_changed" {
				passed.Add(1)
			}
		}})
	var mu sync.Mutex
	var ends []func()
	r.notices.after = func(_ time.Duration, f func()) *time.Timer {
		mu.Lock()
		defer mu.Unlock()
		ends = append(ends, f)
		return nil
	}
	endWindow := func() {
		mu.Lock()
		f := ends[len(ends)-1]
		mu.Unlock()
		f()
	}
	ls := NewListens(r)
	var clients []*upstreamstest.Client
	for _, uri := range []string{"mem://a", "mem://b", "mem://c"} {
		c := upstreamstest.ListenVia(ls, `"`+uri+`"`, `{"toolsListChanged":true,"resourceSubscriptions":["fault+`+uri+`"]}`, nil)
		c.Next(t) // the acknowledgement
		clients = append(clients, c)
	}
	mcptest.WaitFor(t, "three backend streams", func() bool { open, _ := lb.Counts(); return open == 3 })
	burst := func(n int) {
		for range n {
			lb.Notify(upstreamstest.ToolsChanged)
		}
		// Each stream relays in order: once its client has the update sent after the burst,
		// its stream has handled every list_changed before it.
		for _, uri := range []string{"mem://a", "mem://b", "mem://c"} {
			lb.Notify(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"` + uri + `"}}`)
		}
		for _, c := range clients {
			for m := c.Next(t); !strings.Contains(m, "resources/updated"); m = c.Next(t) {
				// a list_changed the client was told of (its queue coalesces them)
			}
		}
	}
	burst(40)
	if n := passed.Load(); n != 1 {
		t.Fatalf("passed on %d times during the window, want once", n)
	}
	endWindow() // more came: passed on once, and the next window opens
	endWindow() // nothing came: the window closes
	if n := passed.Load(); n != 2 {
		t.Fatalf("passed on %d times after the window, want twice", n)
	}
	burst(1)
	if n := passed.Load(); n != 3 {
		t.Fatalf("a notification after a closed window: passed on %d times in all, want 3", n)
	}
	for _, c := range clients {
		c.Stop(t)
	}
}
