package clientaddr

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestInFlightPerClient: one client address holds at most its share of unauthenticated slots;
// another address is not affected; a released slot is available again, and releasing twice
// gives back one.
func TestInFlightPerClient(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	l := NewLimiter(LimiterConfig{MaxUnauthenticated: 2}, nil, c.now)
	a, b := netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("192.0.2.2/32")
	s1, ok1 := l.Enter(a)
	_, ok2 := l.Enter(a)
	if !ok1 || !ok2 {
		t.Fatal("the first two slots were refused")
	}
	if _, ok := l.Enter(a); ok {
		t.Fatal("a third slot was given")
	}
	if _, ok := l.Enter(b); !ok {
		t.Fatal("another client was refused")
	}
	s1.Release()
	s1.Release()
	if _, ok := l.Enter(a); !ok {
		t.Fatal("a released slot was not given again")
	}
	if _, ok := l.Enter(a); ok {
		t.Fatal("a double release gave back two slots")
	}
}

// TestFailedAuthBucket: a client address may fail its burst, then is refused verification
// until its rate earns a token back; the time it is told to wait is the time that takes.
func TestFailedAuthBucket(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	l := NewLimiter(LimiterConfig{FailedAuthPerMinute: 6, FailedAuthBurst: 3}, nil, c.now)
	a, b := netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("2001:db8::/64")
	for i := range 3 {
		if ok, _ := l.MayVerify(a); !ok {
			t.Fatalf("refused after %d failures, burst 3", i)
		}
		l.Failed(a)
	}
	ok, wait := l.MayVerify(a)
	if ok || wait != 10*time.Second {
		t.Fatalf("after the burst: may %v, wait %v; want refused for 10s", ok, wait)
	}
	if ok, _ := l.MayVerify(b); !ok {
		t.Fatal("another client was refused")
	}
	c.t = c.t.Add(9 * time.Second)
	if ok, _ := l.MayVerify(a); ok {
		t.Fatal("allowed before a token was earned")
	}
	c.t = c.t.Add(time.Second)
	if ok, _ := l.MayVerify(a); !ok {
		t.Fatal("refused once a token was earned")
	}
}

// TestLimiterBoundedLRU: the limiter keeps at most MaxTracked client addresses, forgetting the
// least recently seen; a slot released into a forgotten entry is harmless.
func TestLimiterBoundedLRU(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	l := NewLimiter(LimiterConfig{MaxUnauthenticated: 1, FailedAuthBurst: 1, MaxTracked: 100}, nil, c.now)
	first := netip.MustParsePrefix("10.0.0.0/32")
	held, _ := l.Enter(first)
	l.Failed(first)
	for i := range 1000 {
		a := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		l.Failed(netip.PrefixFrom(a, 32))
		if n := l.Tracked(); n > 100 {
			t.Fatalf("%d tracked, bound 100", n)
		}
	}
	if ok, _ := l.MayVerify(first); !ok {
		t.Error("the least recently seen address was not forgotten")
	}
	held.Release() // into the forgotten entry
	if _, ok := l.Enter(first); !ok {
		t.Error("a forgotten address was refused")
	}
}

// TestLimiterOff: negative settings and a nil limiter bound nothing.
func TestLimiterOff(t *testing.T) {
	a := netip.MustParsePrefix("192.0.2.1/32")
	cfg := LimiterConfig{MaxUnauthenticated: -1, FailedAuthPerMinute: -1}
	if !cfg.Off() {
		t.Fatal("Off is false")
	}
	for _, l := range []*Limiter{nil, NewLimiter(cfg, nil, time.Now)} {
		for range 100 {
			if _, ok := l.Enter(a); !ok {
				t.Fatal("a slot was refused")
			}
			l.Failed(a)
		}
		if ok, _ := l.MayVerify(a); !ok {
			t.Fatal("verification was refused")
		}
	}
}

// TestEntryBytes: a tracked client address, with its share of the body budget, costs at most
// EntryBytes of heap, the figure docs/limits.md's inventory states.
func TestEntryBytes(t *testing.T) {
	const n = DefaultMaxTracked // the documented figure is for the default
	l := NewLimiter(LimiterConfig{MaxTracked: n, MaxBodyBytes: 1 << 20}, bodyread.NewBudget(64<<20), time.Now)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 8), byte(i)})
		s, _ := l.Enter(netip.PrefixFrom(a, 64))
		s.Release()
		l.Failed(netip.PrefixFrom(a, 64))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(l)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.0f bytes per tracked address", per)
	if l.Tracked() != n || per > EntryBytes {
		t.Errorf("%d tracked, %.0f bytes each; want %d, at most %d", l.Tracked(), per, n, EntryBytes)
	}
}
