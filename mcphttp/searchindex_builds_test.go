package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestIndexBuildsBounded: index builds in flight are bounded: one private build per caller at a
// time, private builds in at most maxIndexBuilds-1 slots, all builds in maxIndexBuilds. With
// three callers' private builds stalled, a public catalog's build still starts; a fourth caller's
// private build, and a second one of a caller whose first is running, wait for a slot and are
// refused (errIndexBuildsBusy) when none frees within the wait, never building. Once the builds
// end, the refused searches build.
func TestIndexBuildsBounded(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithMiddleware(scopedLists))
	pub := mcptest.StartServer(t, "pub")
	reg := func(name, url string) *upstreams.Registry {
		s, _ := testServer(t, Config{}, oneBackendNamed(name, url), upstreams.Options{}, Deps{})
		return s.backends
	}
	private, public := reg("be", be.URL()), reg("pub", pub.URL())
	catalog := func(r *upstreams.Registry, caller, scope string) *upstreams.ToolCatalog {
		t.Helper()
		meta := strings.Replace(mcptest.Meta, `"_meta":{`, `"_meta":{"test/scope":"`+scope+`",`, 1)
		cat, err := r.ToolCatalog(context.Background(), &upstreams.ListRequest{Method: upstreams.MethodToolsList,
			CacheKey: caller, Params: json.RawMessage(`{` + meta + `}`)})
		if err != nil {
			t.Fatal(err)
		}
		return cat
	}
	c := newIndexCache(slog.New(slog.DiscardHandler), 0)
	c.buildWait = 20 * time.Millisecond // the refusals below wait this long
	gate, started := make(chan struct{}), make(chan struct{}, 8)
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(gate) }) })
	var inFlight, most, builds atomic.Int32
	c.buildFn = func(cat *upstreams.ToolCatalog) *catalogIndex {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		builds.Add(1)
		started <- struct{}{}
		<-gate
		defer inFlight.Add(-1)
		return c.build(cat, "")
	}
	var wg sync.WaitGroup
	search := func(cat *upstreams.ToolCatalog, owner string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.get(context.Background(), cat, owner); err != nil {
				t.Errorf("%s's search after the builds: %v", owner, err)
			}
		}()
		<-started
	}
	const alice, bob, carol, dave = "https://idp#alice", "https://idp#bob", "https://idp#carol", "https://idp#dave"
	for _, caller := range []string{alice, bob, carol} {
		search(catalog(private, caller, caller), caller)
	}
	search(catalog(public, "", ""), "") // a public build finds the slot private ones leave
	refused := func(cat *upstreams.ToolCatalog, owner, why string) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, err := c.get(context.Background(), cat, owner)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, errIndexBuildsBusy) {
				t.Fatalf("%s: got %v, want %v", why, err, errIndexBuildsBusy)
			}
		case <-started:
			t.Fatalf("%s started a build: %d in flight", why, inFlight.Load())
		}
	}
	alice2, daves := catalog(private, alice, alice+"2"), catalog(private, dave, dave)
	refused(alice2, alice, "a caller's second private build while its first runs")
	refused(daves, dave, "a fourth private build")
	if n := builds.Load(); n != maxIndexBuilds {
		t.Fatalf("%d builds started, want %d", n, maxIndexBuilds)
	}
	// A wait cut short by the caller ends with its context's cause.
	ctx, cancel := context.WithCancelCause(context.Background())
	gone := errors.New("client left")
	cancel(gone)
	if _, err := c.get(ctx, daves, dave); !errors.Is(err, gone) {
		t.Fatalf("a search whose caller left while it waited for a slot: got %v, want its cause", err)
	}
	release.Do(func() { close(gate) })
	wg.Wait()
	for _, s := range []struct {
		cat   *upstreams.ToolCatalog
		owner string
	}{{alice2, alice}, {daves, dave}} {
		if _, err := c.get(context.Background(), s.cat, s.owner); err != nil {
			t.Fatalf("%s's search once the builds ended: %v", s.owner, err)
		}
	}
	if m := most.Load(); m > maxIndexBuilds {
		t.Fatalf("%d builds in flight at once, beyond %d", m, maxIndexBuilds)
	}
	if n := builds.Load(); n != maxIndexBuilds+2 {
		t.Fatalf("%d builds in all, want %d", n, maxIndexBuilds+2)
	}
}
