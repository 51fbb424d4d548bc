package mcphttp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-gateway/gateway/upstreams"
)

// TestIndexBuildNeverStrandsWaiters: a search waiting for another request's build of the same
// catalog version gives up when its own context ends, and a build that panics wakes the
// searches waiting for it, the next of which builds again, so no search waits forever.
func TestIndexBuildNeverStrandsWaiters(t *testing.T) {
	c := newIndexCache(slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
	cat := &upstreams.ToolCatalog{}
	started, release := make(chan struct{}), make(chan struct{})
	builds := 0
	c.buildFn = func(*upstreams.ToolCatalog) *catalogIndex {
		builds++
		if builds == 1 {
			close(started)
			<-release
			panic("index build failed")
		}
		return &catalogIndex{version: cat.Version()}
	}
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_, _ = c.get(context.Background(), cat, "")
	}()
	<-started // the first build is in flight from here on

	ctx, cancel := context.WithCancelCause(context.Background())
	gone := errors.New("client left")
	cancel(gone)
	if ix, err := c.get(ctx, cat, ""); ix != nil || !errors.Is(err, gone) {
		t.Fatalf("a waiter whose request ended got %v, %v", ix, err)
	}

	got := make(chan *catalogIndex, 1)
	go func() {
		ix, err := c.get(context.Background(), cat, "")
		if err != nil {
			t.Errorf("get after a failed build: %v", err)
		}
		got <- ix
	}()
	close(release)
	if p := <-panicked; p == nil {
		t.Fatal("the failing build did not panic in the request that built")
	}
	select {
	case ix := <-got:
		if ix == nil || ix.version != cat.Version() {
			t.Fatalf("a waiter of the failed build got %v", ix)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a waiter of a build that panicked never woke")
	}
	if ix, err := c.get(context.Background(), cat, ""); err != nil || ix == nil || builds != 2 {
		t.Fatalf("the rebuilt index is not kept: %v, %v after %d builds", ix, err, builds)
	}
}

// TestIndexWaitersShareAnIndexNotKept: the searches that wait for a build use the index it
// built even when it is too large to keep, rather than each building it again in turn.
func TestIndexWaitersShareAnIndexNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxBytes = 1 << 20
		c := newIndexCache(slog.New(slog.DiscardHandler), maxBytes)
		cat := &upstreams.ToolCatalog{}
		release := make(chan struct{})
		builds := 0
		c.buildFn = func(*upstreams.ToolCatalog) *catalogIndex {
			builds++
			<-release
			return &catalogIndex{version: cat.Version(), size: maxBytes + 1}
		}
		const waiters = 3
		got := make(chan *catalogIndex, waiters+1)
		search := func() {
			ix, err := c.get(context.Background(), cat, "")
			if err != nil {
				t.Errorf("get: %v", err)
			}
			got <- ix
		}
		go search()
		synctest.Wait() // the first search is building
		for range waiters {
			go search()
		}
		synctest.Wait() // the others wait for its build
		close(release)
		first := <-got
		for range waiters {
			if ix := <-got; ix == nil || ix != first {
				t.Fatalf("a waiter got %p, the build %p", ix, first)
			}
		}
		if builds != 1 {
			t.Fatalf("%d builds for one version's concurrent searches", builds)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.entries.Len() != 0 {
			t.Fatal("an index larger than the cache's bound was kept")
		}
	})
}
