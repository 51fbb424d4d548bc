package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// contractReplay: a first use is recorded, a replay is refused until the id's lifetime ends, ids
// of owners and of ids are apart, and an owner past its budget records nothing more until its
// window ends, while replays cost it nothing.
func contractReplay(t *testing.T, h harness) {
	ctx := context.Background()
	r, ok := h.store.(Replay)
	if !ok {
		t.Fatalf("%T does not implement Replay", h.store)
	}
	const ttl = time.Second
	b := ReplayBudget{Count: 3, Window: 4 * time.Second}
	steps := []replayStep{
		{"alice", "j1", 0, UseFirst},
		{"alice", "j1", 0, UseAgain},
		{"bob", "j1", 0, UseFirst}, // another owner's id of the same name
		{"alice", "j1", ttl / 2, UseAgain},
		{"alice", "j2", 0, UseFirst},
		{"alice", "j3", 0, UseFirst},
		{"alice", "j2", 0, UseAgain}, // replays cost nothing...
		{"alice", "j4", 0, UseOverBudget},
		{"alice", "j4", 0, UseOverBudget}, // ...and an id refused for the budget is not recorded
		{"bob", "j2", 0, UseFirst},
		{"alice", "j1", ttl, UseOverBudget}, // expired, but the window still holds three
		{"alice", "j5", b.Window, UseFirst}, // a new window
		{"alice", "j1", 0, UseFirst},
	}
	spent := time.Duration(0) // of alice's first window
	runReplaySteps(t, h, "FirstUse", func(owner, id string) (Use, error) {
		return r.FirstUse(ctx, owner, id, ttl, b)
	}, steps, func(i int, s replayStep) {
		spent += s.elapse
		if s.owner == "alice" && s.want == UseOverBudget {
			// Refused until the window the first use opened ends: what is left of it, which
			// a server-side clock (Redis) has seen run a little longer.
			left, err := r.BudgetReset(ctx, "alice")
			if err != nil || left > b.Window-spent || left < b.Window-spent-ttl/2 {
				t.Fatalf("step %d: BudgetReset = %v, %v; want about %v", i, left, err, b.Window-spent)
			}
		}
	})
	if left, err := r.BudgetReset(ctx, "carol"); left != 0 || err != nil {
		t.Errorf("BudgetReset of an owner without a window = %v, %v; want 0", left, err)
	}
	for _, bad := range []struct {
		ttl time.Duration
		b   ReplayBudget
	}{{0, b}, {ttl, ReplayBudget{Count: 0, Window: time.Second}}, {ttl, ReplayBudget{Count: 1}}} {
		if _, err := r.FirstUse(ctx, "o", "i", bad.ttl, bad.b); !errors.Is(err, ErrInvalidTTL) && !errors.Is(err, ErrInvalidBudget) {
			t.Errorf("FirstUse(ttl %v, %+v) err = %v, want a refusal", bad.ttl, bad.b, err)
		}
	}
}

// contractReplayConcurrent: of many concurrent first uses of one id exactly one wins, and of
// many ids of one owner exactly the budget is recorded.
func contractReplayConcurrent(t *testing.T, h harness) {
	r := h.store.(Replay)
	ctx := context.Background()
	b := ReplayBudget{Count: 5, Window: time.Minute}
	same := concurrentUses(t, 20, func(int) (Use, error) { return r.FirstUse(ctx, "same", "jti", time.Minute, b) })
	if same[UseFirst] != 1 || same[UseAgain] != 19 {
		t.Errorf("one id used 20 times at once: %d first, %d again", same[UseFirst], same[UseAgain])
	}
	many := concurrentUses(t, 20, func(i int) (Use, error) {
		return r.FirstUse(ctx, "many", fmt.Sprint("jti-", i), time.Minute, b)
	})
	if many[UseFirst] != 5 || many[UseOverBudget] != 15 {
		t.Errorf("20 ids of one owner under a budget of 5: %d first, %d over budget", many[UseFirst], many[UseOverBudget])
	}
}

// replayStep is one row of a replay contract's table: owner uses id, once elapse has passed,
// and gets want.
type replayStep struct {
	owner, id string
	elapse    time.Duration
	want      Use
}

// runReplaySteps is the one runner of the replay contracts' tables: each step through use (op
// names it in failures), then after (when set) with the step's index.
func runReplaySteps(t *testing.T, h harness, op string, use func(owner, id string) (Use, error), steps []replayStep, after func(i int, s replayStep)) {
	t.Helper()
	for i, s := range steps {
		h.elapse(s.elapse)
		got, err := use(s.owner, s.id)
		if err != nil {
			t.Fatalf("step %d: %s(%s, %s): %v", i, op, s.owner, s.id, err)
		}
		if got != s.want {
			t.Fatalf("step %d: %s(%s, %s) = %v, want %v", i, op, s.owner, s.id, got, s.want)
		}
		if after != nil {
			after(i, s)
		}
	}
}

// concurrentUses runs use(i) for every i below n at once and counts the answers.
func concurrentUses(t *testing.T, n int, use func(i int) (Use, error)) map[Use]int {
	t.Helper()
	var mu sync.Mutex
	got := map[Use]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			u, err := use(i)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			got[u]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}

// budgetResetFunc is a BudgetReset answer fixed by a test.
type budgetResetFunc func() (time.Duration, error)

func (f budgetResetFunc) BudgetReset(context.Context, string) (time.Duration, error) { return f() }

// TestBudgetFrees: what the store says is left of the window, or the whole window when the store
// cannot say.
func TestBudgetFrees(t *testing.T) {
	ctx := context.Background()
	const window = time.Minute
	for _, c := range []struct {
		name string
		r    budgetResetFunc
		want time.Duration
	}{
		{"window open", func() (time.Duration, error) { return 7 * time.Second, nil }, 7 * time.Second},
		{"no window", func() (time.Duration, error) { return 0, nil }, 0},
		{"store down", func() (time.Duration, error) { return 0, ErrUnavailable }, window},
	} {
		if got := BudgetFrees(ctx, c.r, "alice", window); got != c.want {
			t.Errorf("%s: BudgetFrees = %v, want %v", c.name, got, c.want)
		}
	}
}

// contractReplayGet: FirstUseGet answers as FirstUse does and reads the key as Get does, found
// or not.
func contractReplayGet(t *testing.T, h harness) {
	ctx := context.Background()
	r, ok := h.store.(ReplayGetter)
	if !ok {
		t.Fatalf("%T does not implement ReplayGetter", h.store)
	}
	b := ReplayBudget{Count: 2, Window: time.Minute}
	if err := h.store.Set(ctx, "marker", []byte("v1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	for i, s := range []struct {
		id, key string
		want    Use
		value   string
		found   bool
	}{
		{"j1", "marker", UseFirst, "v1", true},
		{"j1", "marker", UseAgain, "v1", true},
		{"j2", "absent", UseFirst, "", false},
		{"j3", "marker", UseOverBudget, "v1", true},
	} {
		u, v, found, err := r.FirstUseGet(ctx, "alice", s.id, time.Second, b, s.key)
		if err != nil || u != s.want || string(v) != s.value || found != s.found {
			t.Fatalf("step %d: FirstUseGet(%s, %s) = %v %q %v %v, want %v %q %v", i, s.id, s.key, u, v, found, err, s.want, s.value, s.found)
		}
	}
}

// TestRedisFirstUseGetOneRoundTrip: a first use and the read of the marker beside it are one
// command, one round trip, on a single Redis server.
func TestRedisFirstUseGetOneRoundTrip(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL()})
	ctx := context.Background()
	if err := r.Set(ctx, "marker", []byte("v1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	b := ReplayBudget{Count: 10, Window: time.Minute}
	if _, _, _, err := r.FirstUseGet(ctx, "alice", "warm", time.Second, b, "marker"); err != nil { // loads the script
		t.Fatal(err)
	}
	hook := &countingHook{}
	r.client.AddHook(hook)
	u, v, found, err := r.FirstUseGet(ctx, "alice", "j1", time.Second, b, "marker")
	if err != nil || u != UseFirst || string(v) != "v1" || !found {
		t.Fatalf("FirstUseGet = %v %q %v %v", u, v, found, err)
	}
	if n := hook.n.Load(); n != 1 {
		t.Fatalf("FirstUseGet sent %d commands, want 1", n)
	}
}
