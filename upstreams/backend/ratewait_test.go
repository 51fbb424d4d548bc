package backend

import (
	"errors"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// TestRateWaitsPerCaller: for a backend that answers as each caller, one caller's 429 holds back
// only that caller's requests (not another caller's, not the gateway's own), each wait ends when
// its time passes, at most max callers are remembered (the least recently limited forgotten),
// and a wait begun while one runs is not reported again; for a backend that answers as the
// gateway, any caller's 429 holds back everyone's.
func TestRateWaitsPerCaller(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	var begun int
	w := newRateWaits("b", true, 2, func(string) { begun++ })
	if !w.begin(now, "alice", 10*time.Second) || w.begin(now, "alice", 5*time.Second) {
		t.Error("a first 429 begins a wait; a second within it does not")
	}
	var rl *wire.RateLimitError
	if err := w.refuse(now.Add(time.Second), "alice"); !errors.Is(err, ErrRateLimitWait) || !errors.As(err, &rl) || rl.RetryAfter != 9*time.Second {
		t.Errorf("alice within her wait: %v, want ErrRateLimitWait with 9s left", err)
	}
	for _, other := range []string{"bob", chargeNone, chargeShared} {
		if err := w.refuse(now, other); err != nil {
			t.Errorf("%q held back by alice's 429: %v", other, err)
		}
	}
	if err := w.refuse(now.Add(10*time.Second), "alice"); err != nil {
		t.Errorf("alice once her wait passed: %v", err)
	}
	w.begin(now, "bob", time.Minute)
	w.begin(now, "carol", time.Minute)
	if w.order.Len() != 2 || w.left(now, "alice") != 0 || w.left(now, "carol") != time.Minute {
		t.Errorf("%d callers remembered, alice %v, carol %v: want 2, alice forgotten first", w.order.Len(), w.left(now, "alice"), w.left(now, "carol"))
	}
	if begun != 3 {
		t.Errorf("%d waits reported, want 3", begun)
	}

	shared := newRateWaits("s", false, 2, nil)
	shared.begin(now, "alice", time.Minute)
	for _, other := range []string{"bob", chargeNone, chargeShared} {
		if shared.left(now, other) != time.Minute {
			t.Errorf("%q not held back by a 429 of a backend that answers as the gateway", other)
		}
	}
}
