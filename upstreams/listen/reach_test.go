package listen

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestListChangedOnlyOfBackendsTheCallerReaches: a list_changed tells its listener that a
// backend exists and changed. A caller whose policy gives it nothing of a backend
// (Caller.Reaches) is not listened for there, and a caller whose policy stops reaching it
// while its listen lasts (a reload) hears no more of it, while another caller on the same
// shared stream still does.
func TestListChangedOnlyOfBackendsTheCallerReaches(t *testing.T) {
	seen, seenURL := upstreamstest.StartListenBackend(t)
	hidden, hiddenURL := upstreamstest.StartListenBackend(t)
	ls := New(newTestSource(t, modernConfig("seen", seenURL), modernConfig("hidden", hiddenURL)))
	var bReaches atomic.Bool
	var bHidden atomic.Int64
	bReaches.Store(true)
	callers := map[string]Caller{
		`"none"`: {Reaches: func(up string) bool { return up != "hidden" }},
		`"all"`:  {},
		`"b"`: {Reaches: func(up string) bool { return up != "hidden" || bReaches.Load() },
			Dropped: func(cause string, n int) {
				if cause == DropHidden {
					bHidden.Add(int64(n))
				}
			}},
	}
	clients := map[string]*upstreamstest.Client{}
	for _, id := range []string{`"none"`, `"all"`, `"b"`} {
		c := &upstreamstest.Client{Msgs: make(chan string, 64), Done: make(chan error, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		c.Cancel = cancel
		params := `{"_meta":` + upstreamstest.Meta + `,"notifications":{"toolsListChanged":true}}`
		go func() {
			c.Done <- ls.ListenFor(ctx, json.RawMessage(id), json.RawMessage(params), nil, callers[id], func(m []byte) error {
				c.Msgs <- string(m)
				return nil
			})
		}()
		c.Next(t) // the acknowledgement
		clients[id] = c
	}
	mcptest.WaitFor(t, "every listen joined its streams", func() bool {
		feeds, subs := ls.subscribers()
		return feeds == 2 && subs == 5 // seen's stream: all three; hidden's: all and b
	})
	// A stream is joined before its request reaches the backend, and a backend tells only the
	// streams it has of a change: wait for each backend's one request (the hidden one's is held
	// to one at the end: none's listen must not have made a second).
	mcptest.WaitFor(t, "each backend's one listen request", func() bool {
		_, s := seen.Counts()
		_, h := hidden.Counts()
		return s >= 1 && h >= 1
	})
	bReaches.Store(false) // b's policy changes while it listens
	hidden.Notify(upstreamstest.ToolsChanged)
	upstreamstest.WantChanged(t, clients[`"all"`].Next(t), `"all"`)
	mcptest.WaitFor(t, "b's copy dropped as hidden", func() bool { return bHidden.Load() == 1 })
	seen.Notify(upstreamstest.ToolsChanged)
	for _, id := range []string{`"all"`, `"none"`, `"b"`} {
		// Each listener's next message is seen's change: none and b heard nothing of hidden's.
		upstreamstest.WantChanged(t, clients[id].Next(t), id)
	}
	if _, n := hidden.Counts(); n != 1 {
		t.Errorf("the hidden backend got %d listen requests, want the one shared by all and b", n)
	}
	for _, c := range clients {
		c.Stop(t)
	}
}
