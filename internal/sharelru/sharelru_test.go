package sharelru

import (
	"slices"
	"testing"
)

// op is one step on a cache of string keys and values: a Put of size bytes counted against
// caller, or, with get, a Get; publish makes key public.
type op struct {
	key, caller string
	size        int64
	get         bool
	publish     bool
	resize      bool
}

func put(key, caller string, size int64) op { return op{key: key, caller: caller, size: size} }
func get(key string) op                     { return op{key: key, get: true} }
func publish(key string) op                 { return op{key: key, publish: true} }
func resize(key string, size int64) op      { return op{key: key, size: size, resize: true} }

// TestRules runs each rule as a sequence of steps and checks what stays, each caller's usage
// and every eviction with its cause.
func TestRules(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cfg     Config
		ops     []op
		kept    []string // keys held at the end, any order
		gone    []string // keys not held at the end
		usage   map[string]int
		evicted []Cause
		refused []string // keys whose Put reported false
	}{{
		name:    "count bound evicts the least recently used",
		cfg:     Config{MaxEntries: 3, ShareDivisor: 1},
		ops:     []op{put("a", "", 0), put("b", "", 0), put("c", "", 0), get("a"), put("d", "", 0)},
		kept:    []string{"a", "c", "d"},
		gone:    []string{"b"},
		evicted: []Cause{Full},
	}, {
		name:    "bytes bound evicts until the new entry fits",
		cfg:     Config{MaxBytes: 100, ShareDivisor: 1},
		ops:     []op{put("a", "", 40), put("b", "", 40), put("c", "", 10), put("d", "", 60)},
		kept:    []string{"c", "d"},
		gone:    []string{"a", "b"},
		evicted: []Cause{Full, Full},
	}, {
		name:    "an entry larger than the bytes bound is refused and evicts nothing",
		cfg:     Config{MaxBytes: 100, ShareDivisor: 4},
		ops:     []op{put("a", "", 60), put("big", "", 101)},
		kept:    []string{"a"},
		gone:    []string{"big"},
		refused: []string{"big"},
	}, {
		name:    "an entry grown past the bytes bound evicts the least recently used for room",
		cfg:     Config{MaxBytes: 100, ShareDivisor: 4},
		ops:     []op{put("a", "", 40), put("b", "", 40), get("a"), resize("b", 61)},
		kept:    []string{"b"},
		gone:    []string{"a"},
		evicted: []Cause{Full},
	}, {
		name:    "a private entry grown past its share evicts its caller's own, never another's",
		cfg:     Config{MaxBytes: 100, ShareDivisor: 4}, // share: 25 bytes
		ops:     []op{put("p", "", 40), put("a1", "alice", 10), put("a2", "alice", 10), resize("a2", 20)},
		kept:    []string{"p", "a2"},
		gone:    []string{"a1"},
		usage:   map[string]int{"alice": 1},
		evicted: []Cause{Share},
	}, {
		name:    "an entry grown beyond a share is dropped and evicts nothing",
		cfg:     Config{MaxBytes: 100, ShareDivisor: 4},
		ops:     []op{put("p", "", 40), put("a", "alice", 10), resize("a", 26), put("b", "bob", 20), publish("b"), resize("b", 50)},
		kept:    []string{"p", "b"},
		gone:    []string{"a"},
		refused: []string{"a"},
	}, {
		name:    "a private entry larger than a share is refused",
		cfg:     Config{MaxBytes: 100, ShareDivisor: 4},
		ops:     []op{put("a", "bob", 20), put("big", "alice", 26), put("pub", "", 26)},
		kept:    []string{"a", "pub"},
		gone:    []string{"big"},
		usage:   map[string]int{"bob": 1},
		refused: []string{"big"},
	}, {
		name: "a caller at its share in number evicts its own least recently used, never another's",
		cfg:  Config{MaxEntries: 8, ShareDivisor: 4}, // share: two entries
		ops: []op{put("b1", "bob", 0), put("p", "", 0), put("a1", "alice", 0), put("a2", "alice", 0),
			get("a1"), put("a3", "alice", 0), put("a4", "alice", 0)},
		kept:    []string{"b1", "p", "a3", "a4"},
		gone:    []string{"a1", "a2"},
		usage:   map[string]int{"alice": 2, "bob": 1},
		evicted: []Cause{Share, Share},
	}, {
		name:    "own least recently used: a get makes an entry its caller's most recent",
		cfg:     Config{MaxEntries: 8, ShareDivisor: 4},
		ops:     []op{put("a1", "alice", 0), put("a2", "alice", 0), get("a1"), put("a3", "alice", 0)},
		kept:    []string{"a1", "a3"},
		gone:    []string{"a2"},
		usage:   map[string]int{"alice": 2},
		evicted: []Cause{Share},
	}, {
		name: "a caller at its share in bytes evicts its own",
		cfg:  Config{MaxBytes: 400, ShareDivisor: 4}, // share: 100 bytes
		ops: []op{put("b1", "bob", 90), put("a1", "alice", 40), put("a2", "alice", 40),
			put("a3", "alice", 40)},
		kept:    []string{"b1", "a2", "a3"},
		gone:    []string{"a1"},
		usage:   map[string]int{"alice": 2, "bob": 1},
		evicted: []Cause{Share},
	}, {
		name:  "the share is at least one entry",
		cfg:   Config{MaxEntries: 3, ShareDivisor: 8},
		ops:   []op{put("a1", "alice", 0), put("a2", "alice", 0), put("b1", "bob", 0)},
		kept:  []string{"a2", "b1"},
		gone:  []string{"a1"},
		usage: map[string]int{"alice": 1, "bob": 1},
		// the share, then nothing: the cache has room
		evicted: []Cause{Share},
	}, {
		name: "public entries count against no share",
		cfg:  Config{MaxEntries: 8, ShareDivisor: 4},
		ops: []op{put("p1", "", 0), put("p2", "", 0), put("p3", "", 0), put("a1", "alice", 0),
			put("a2", "alice", 0)},
		kept:  []string{"p1", "p2", "p3", "a1", "a2"},
		usage: map[string]int{"alice": 2},
	}, {
		name: "a published entry leaves its caller's share: the caller's churn cannot evict it",
		cfg:  Config{MaxEntries: 8, ShareDivisor: 4},
		ops: []op{put("s", "alice", 0), publish("s"), put("a1", "alice", 0), put("a2", "alice", 0),
			put("a3", "alice", 0)},
		kept:    []string{"s", "a2", "a3"},
		gone:    []string{"a1"},
		usage:   map[string]int{"alice": 2},
		evicted: []Cause{Share},
	}, {
		name:    "a published entry still counts against the cache's bounds",
		cfg:     Config{MaxEntries: 2, ShareDivisor: 1},
		ops:     []op{put("s", "alice", 0), publish("s"), put("b1", "bob", 0), put("c1", "carol", 0)},
		kept:    []string{"b1", "c1"},
		gone:    []string{"s"},
		usage:   map[string]int{"bob": 1, "carol": 1},
		evicted: []Cause{Full},
	}, {
		name: "the cache's bounds evict whoever's is least recently used once the share has room",
		cfg:  Config{MaxEntries: 4, ShareDivisor: 2}, // share: two entries
		ops: []op{put("a1", "alice", 0), put("b1", "bob", 0), put("p", "", 0), put("b2", "bob", 0),
			put("a2", "alice", 0)},
		kept:    []string{"b1", "p", "b2", "a2"},
		gone:    []string{"a1"},
		usage:   map[string]int{"alice": 1, "bob": 2},
		evicted: []Cause{Full},
	}, {
		name:  "a put under a held key replaces it, counted against its new caller",
		cfg:   Config{MaxEntries: 4, ShareDivisor: 2},
		ops:   []op{put("k", "alice", 0), put("k", "bob", 0)},
		kept:  []string{"k"},
		usage: map[string]int{"bob": 1},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			var evicted []Cause
			tt.cfg.OnEvict = func(c Cause) { evicted = append(evicted, c) }
			c := New[string, string](tt.cfg)
			var refused []string
			for _, o := range tt.ops {
				switch {
				case o.get:
					if v, ok := c.Get(o.key); !ok || v != o.key {
						t.Fatalf("Get(%q) = %q, %v before its eviction", o.key, v, ok)
					}
				case o.publish:
					if !c.Publish(o.key) {
						t.Fatalf("Publish(%q): not held", o.key)
					}
				case o.resize:
					if !c.Resize(o.key, o.size) {
						refused = append(refused, o.key)
					}
				default:
					if !c.Put(o.key, o.key, o.caller, o.size) {
						refused = append(refused, o.key)
					}
				}
			}
			for _, k := range tt.kept {
				if _, ok := c.Peek(k); !ok {
					t.Errorf("%q evicted, want it kept", k)
				}
			}
			for _, k := range tt.gone {
				if _, ok := c.Peek(k); ok {
					t.Errorf("%q kept, want it gone", k)
				}
			}
			if c.Len() != len(tt.kept) {
				t.Errorf("Len() = %d, want %d", c.Len(), len(tt.kept))
			}
			if c.Callers() != len(tt.usage) {
				t.Errorf("Callers() = %d, want %d", c.Callers(), len(tt.usage))
			}
			for caller, want := range tt.usage {
				if n, _ := c.Usage(caller); n != want {
					t.Errorf("Usage(%q) = %d entries, want %d", caller, n, want)
				}
			}
			if !slices.Equal(evicted, tt.evicted) {
				t.Errorf("evictions %v, want %v", evicted, tt.evicted)
			}
			if !slices.Equal(refused, tt.refused) {
				t.Errorf("refused %v, want %v", refused, tt.refused)
			}
			checkBounds(t, c, tt.cfg)
		})
	}
}

// checkBounds fails when the cache or a caller holds more than its bounds allow, or when the
// bytes counted differ from the entries held.
func checkBounds(t *testing.T, c *Cache[string, string], cfg Config) {
	t.Helper()
	var sum int64
	perCaller := map[string]int64{}
	counted := map[string]int{}
	for _, e := range c.entries {
		sum += e.size
		if e.caller != "" {
			perCaller[e.caller] += e.size
			counted[e.caller]++
		}
	}
	if sum != c.Bytes() {
		t.Errorf("Bytes() = %d, entries hold %d", c.Bytes(), sum)
	}
	if cfg.MaxEntries > 0 && c.Len() > cfg.MaxEntries || cfg.MaxBytes > 0 && c.Bytes() > cfg.MaxBytes {
		t.Errorf("%d entries of %d bytes, bounds %d and %d", c.Len(), c.Bytes(), cfg.MaxEntries, cfg.MaxBytes)
	}
	for caller, b := range perCaller {
		n, ub := c.Usage(caller)
		if n != counted[caller] || ub != b {
			t.Errorf("Usage(%q) = %d, %d; entries say %d, %d", caller, n, ub, counted[caller], b)
		}
		if cfg.MaxEntries > 0 && n > c.ShareEntries() || cfg.MaxBytes > 0 && b > c.ShareBytes() {
			t.Errorf("%q holds %d entries of %d bytes, share %d and %d", caller, n, b, c.ShareEntries(), c.ShareBytes())
		}
	}
}

// TestUpdateKeepsCaller: Update replaces a value in place, counted against the same caller and
// marked used, and adds nothing for a key not held.
func TestUpdateKeepsCaller(t *testing.T) {
	var evicted []Cause
	c := New[string, string](Config{MaxEntries: 4, ShareDivisor: 2, OnEvict: func(cause Cause) { evicted = append(evicted, cause) }})
	c.Put("a1", "1", "alice", 0)
	c.Put("a2", "2", "alice", 0)
	if !c.Update("a1", "one") || c.Update("x", "x") {
		t.Fatal("Update: want true for a held key, false for another")
	}
	c.Put("a3", "3", "alice", 0) // a2 is alice's least recently used now
	if v, ok := c.Peek("a1"); !ok || v != "one" {
		t.Errorf("a1 = %q, %v; want the updated value kept", v, ok)
	}
	if _, ok := c.Peek("a2"); ok || c.Len() != 2 {
		t.Errorf("want a2 evicted as alice's least recent; %d entries", c.Len())
	}
	if n, _ := c.Usage("alice"); n != 2 || !slices.Equal(evicted, []Cause{Share}) {
		t.Errorf("alice holds %d, evictions %v; want 2, [share]", n, evicted)
	}
}

// TestRemoveIsNoEviction: removals forget a caller with no entry left and are not reported as
// evictions for room.
func TestRemoveIsNoEviction(t *testing.T) {
	told := 0
	c := New[string, int](Config{MaxEntries: 8, MaxBytes: 800, ShareDivisor: 2, OnEvict: func(Cause) { told++ }})
	for i, k := range []string{"a1", "a2", "b1"} {
		c.Put(k, i, k[:1], 100)
	}
	if !c.Remove("b1") || c.Remove("b1") {
		t.Fatal("Remove: want true once, then false")
	}
	if n := c.RemoveIf(func(k string) bool { return k[0] == 'a' }); n != 2 {
		t.Fatalf("RemoveIf removed %d, want 2", n)
	}
	if c.Len() != 0 || c.Bytes() != 0 || c.Callers() != 0 || told != 0 {
		t.Errorf("after removing all: %d entries, %d bytes, %d callers, %d evictions told", c.Len(), c.Bytes(), c.Callers(), told)
	}
}
