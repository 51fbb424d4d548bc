package metrics

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// toolCalls counts tool calls by (upstream, tool, outcome). The tool names of
// each upstream come from an allowlist the gateway replaces as it discovers
// tools; lookups read it through an atomic pointer, and only replacing it or
// creating a series for the first time takes the mutex.
type toolCalls struct {
	vec      *prometheus.CounterVec
	outcomes closedSet
	maxTools int
	byName   map[string]*upstreamTools // fixed in New; read without lock
	other    *upstreamTools            // unknown upstreams: tool is always Other
	mu       sync.Mutex                // serializes allowlist swaps and series creation
}

// upstreamTools is one upstream's current allowlist and its Other tool.
type upstreamTools struct {
	name  string
	known atomic.Pointer[map[string]*toolEntry]
	other *toolEntry
}

// toolEntry holds the counters of one (upstream, tool) pair by outcome.
// retired is set when the tool leaves the allowlist: its series are deleted
// and later calls that still hold the entry count as Other instead of
// recreating them, which keeps the bound exact.
type toolEntry struct {
	tool    string
	retired atomic.Bool
	slots   []atomic.Pointer[box[prometheus.Counter]]
}

func newToolCalls(vec *prometheus.CounterVec, upstreams []string, outcomes closedSet, maxTools int) *toolCalls {
	t := &toolCalls{vec: vec, outcomes: outcomes, maxTools: maxTools,
		byName: make(map[string]*upstreamTools, len(upstreams))}
	for _, u := range upstreams {
		t.byName[u] = t.newUpstream(u)
	}
	t.other = t.newUpstream(Other)
	return t
}

func (t *toolCalls) newUpstream(name string) *upstreamTools {
	u := &upstreamTools{name: name, other: t.newEntry(Other)}
	empty := map[string]*toolEntry{}
	u.known.Store(&empty)
	return u
}

func (t *toolCalls) newEntry(tool string) *toolEntry {
	return &toolEntry{tool: tool, slots: make([]atomic.Pointer[box[prometheus.Counter]], t.outcomes.size())}
}

// inc counts one call; it allocates only when a series is created.
func (t *toolCalls) inc(upstream, tool, outcome string) {
	u, ok := t.byName[upstream]
	if !ok {
		u = t.other
	}
	e, ok := (*u.known.Load())[tool]
	if !ok || e.retired.Load() {
		e = u.other
	}
	o := t.outcomes.of(outcome)
	if b := e.slots[o].Load(); b != nil {
		b.v.Inc()
		return
	}
	t.resolve(u, e, o).Inc()
}

// resolve creates the series for (u, e, o) under the mutex, so that it cannot
// interleave with setKnown retiring e and deleting its series.
func (t *toolCalls) resolve(u *upstreamTools, e *toolEntry, o int) prometheus.Counter {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.retired.Load() {
		e = u.other
	}
	if b := e.slots[o].Load(); b != nil {
		return b.v
	}
	c := t.vec.WithLabelValues(u.name, e.tool, t.outcomes.values[o])
	e.slots[o].Store(&box[prometheus.Counter]{v: c})
	return c
}

// setKnown replaces the allowlist of upstream. Tools kept keep their
// counters; tools dropped lose their series.
func (t *toolCalls) setKnown(upstream string, tools []string) {
	u, ok := t.byName[upstream]
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *u.known.Load()
	next := make(map[string]*toolEntry, min(len(tools), t.maxTools))
	for _, name := range tools {
		if len(next) == t.maxTools {
			break
		}
		if _, dup := next[name]; dup || name == Other || !validLabelValue(name) {
			continue
		}
		if e, kept := old[name]; kept {
			next[name] = e
		} else {
			next[name] = t.newEntry(name)
		}
	}
	u.known.Store(&next)
	for name, e := range old {
		if _, kept := next[name]; !kept {
			t.retire(u, e)
		}
	}
}

func (t *toolCalls) retire(u *upstreamTools, e *toolEntry) {
	e.retired.Store(true)
	for o := range e.slots {
		if e.slots[o].Swap(nil) != nil {
			t.vec.DeleteLabelValues(u.name, e.tool, t.outcomes.values[o])
		}
	}
}
