package upstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// changeLog records Options.OnListChanged calls.
type changeLog struct {
	mu    sync.Mutex
	calls []string
}

func (c *changeLog) hook(upstream, method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, upstream+" "+method)
}

func (c *changeLog) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func listenCacheRegistry(t *testing.T, url string, opts Options) *Registry {
	t.Helper()
	return newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "fake", URL: url, Protocol: ProtocolVersion,
		Breaker: BreakerConfig{Disabled: true}, Timeout: 5 * time.Second}}}, opts)
}

// listedTool lists tools and returns the one tool's namespaced name.
func listedTool(t *testing.T, r *Registry) string {
	t.Helper()
	res, err := listTools(r, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	name := onlyToolName(res)
	if name == "" {
		t.Fatalf("tools/list gave %s, want one tool", res)
	}
	return name
}

// onlyToolName returns the name of the one tool a tools/list result holds, or "" when it does
// not hold exactly one. It does not fail the test, so goroutines may call it.
func onlyToolName(res json.RawMessage) string {
	var v struct {
		Tools []struct{ Name string }
	}
	if json.Unmarshal(res, &v) != nil || len(v.Tools) != 1 {
		return ""
	}
	return v.Tools[0].Name
}

// TestListChangedInvalidatesCachedList: a client that hears tools/list_changed through the
// gateway and lists again gets the new list, not the one cached for the backend's ttlMs
// (docs/protocol.md §5.1), and the notification is handed on for the other replicas.
func TestListChangedInvalidatesCachedList(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	var changes changeLog
	r := listenCacheRegistry(t, url, Options{OnListChanged: changes.hook})
	ls := NewListens(r)

	if got := listedTool(t, r); got != "fake__v0" {
		t.Fatalf("first list: %s", got)
	}
	if got := listedTool(t, r); got != "fake__v0" || lb.Lists.Load() != 1 {
		t.Fatalf("second list: %s after %d backend lists, want the cached fake__v0", got, lb.Lists.Load())
	}

	c := upstreamstest.ListenVia(ls, `"L"`, `{"toolsListChanged":true}`, nil)
	defer c.Stop(t)
	if ack := c.Next(t); !strings.Contains(ack, "subscriptions/acknowledged") {
		t.Fatalf("first message %s", ack)
	}
	mcptest.WaitFor(t, "the backend stream is open", func() bool { open, _ := lb.Counts(); return open == 1 })
	lb.Version.Store(1)
	lb.Notify(upstreamstest.ToolsChanged)
	upstreamstest.WantChanged(t, c.Next(t), `"L"`)

	// No waiting: the cache is dropped before the notification is handed to any client.
	if got := listedTool(t, r); got != "fake__v1" || lb.Lists.Load() != 2 {
		t.Fatalf("list after list_changed: %s after %d backend lists, want fake__v1 from the backend", got, lb.Lists.Load())
	}
	if got := listedTool(t, r); got != "fake__v1" || lb.Lists.Load() != 2 {
		t.Fatalf("the new list is cached again: %s after %d backend lists", got, lb.Lists.Load())
	}
	if got := changes.get(); len(got) != 1 || got[0] != "fake notifications/tools/list_changed" {
		t.Fatalf("OnListChanged calls %q", got)
	}
}

func TestListChangedDropsOnlyItsLists(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	r := listenCacheRegistry(t, url, Options{})
	listedTool(t, r)
	for _, tt := range []struct {
		upstream, method string
		dropped          int
	}{
		{"fake", wire.NotifPromptsListChanged, 0},
		{"fake", wire.NotifResourcesListChanged, 0},
		{"fake", wire.NotifResourcesUpdated, 0},
		{"other", wire.NotifToolsListChanged, 0},
		{"fake", wire.NotifToolsListChanged, 1},
		{"fake", wire.NotifToolsListChanged, 0}, // nothing left to drop
	} {
		if got := r.ListChanged(tt.upstream, tt.method); got != tt.dropped {
			t.Errorf("ListChanged(%s, %s) dropped %d, want %d", tt.upstream, tt.method, got, tt.dropped)
		}
	}
	listedTool(t, r)
	if n := lb.Lists.Load(); n != 2 {
		t.Fatalf("%d backend lists, want 2: one at first, one after the tools list was dropped", n)
	}
}

// TestListAfterChangeDoesNotJoinEarlierFetch: a list request that was already on its way to the
// backend when list_changed arrived may carry the old list. A caller who lists after the
// notification does not share that request but asks the backend itself, and the old answer,
// arriving last, is not cached over the new one.
func TestListAfterChangeDoesNotJoinEarlierFetch(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	release := make(chan struct{})
	lb.Hold = func(n int64) {
		if n == 1 {
			<-release
		}
	}
	r := listenCacheRegistry(t, url, Options{})

	early := make(chan string, 1)
	go func() { early <- listedTool(t, r) }()
	mcptest.WaitFor(t, "the first list reaches the backend", func() bool { return lb.Lists.Load() == 1 })
	lb.Version.Store(1)
	r.ListChanged("fake", wire.NotifToolsListChanged)

	late := make(chan string, 1)
	go func() { late <- listedTool(t, r) }()
	select {
	case got := <-late:
		if got != "fake__v1" {
			t.Fatalf("list after the change gave %s, want fake__v1", got)
		}
	case <-time.After(30 * time.Second): // fail-safe: it waits for the held first request
		close(release)
		t.Fatal("the list after the change joined the request sent before it")
	}
	close(release)
	if got := <-early; got != "fake__v0" {
		t.Fatalf("the early list gave %s, want the old fake__v0", got)
	}
	if got := listedTool(t, r); got != "fake__v1" || lb.Lists.Load() != 2 {
		t.Fatalf("third list %s after %d backend lists; want fake__v1 from the cache", got, lb.Lists.Load())
	}
}

// TestListChangedUnderConcurrentLists: while the backend's list changes without pause and
// callers list without pause (sharing fetches, filling the cache), every list shows the change
// signalled last before it started, or a later one; never an earlier list.
func TestListChangedUnderConcurrentLists(t *testing.T) {
	lb, url := upstreamstest.StartListenBackend(t)
	r := listenCacheRegistry(t, url, Options{})
	var signalled atomic.Int64 // the last version whose ListChanged has returned
	stop := make(chan struct{})
	var changer sync.WaitGroup
	changer.Go(func() {
		for v := int64(1); ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			lb.Version.Store(v)
			r.ListChanged("fake", wire.NotifToolsListChanged)
			signalled.Store(v)
		}
	})
	var listers sync.WaitGroup
	for range 4 {
		listers.Go(func() {
			for range 300 {
				floor := signalled.Load()
				res, err := listTools(r, context.Background())
				var seen int64
				if err == nil {
					_, err = fmt.Sscanf(onlyToolName(res), "fake__v%d", &seen)
				}
				if err != nil || seen < floor {
					t.Errorf("a list started after change %d showed %s (%v)", floor, res, err)
					return
				}
			}
		})
	}
	listers.Wait()
	close(stop)
	changer.Wait()
	if n := signalled.Load(); n < 10 {
		t.Fatalf("only %d changes happened while listing; the test exercised nothing", n)
	}
}
