package pins

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// toolsNamed lists n tools named prefix0… with the same small schema.
func toolsNamed(t testing.TB, prefix string, n int) []Listed {
	t.Helper()
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"%s%04d","description":"Tool number %d.","inputSchema":{"type":"object"}}`, prefix, i, i)
	}
	return listed(t, KindTool, items...)
}

// TestGuardBounds: pins and drift records are bounded per backend in count and bytes. A backend
// renaming its 300 tools 30 times after first contact writes nothing to the store (renamed
// tools are new, not pinned); the drift records stay within maxDriftRecords and
// maxDriftBytes and the rest is counted as omitted; a first contact beyond MaxPerBackend or
// MaxBytesPerBackend pins only what fits; an item removed for longer than the retention
// leaves the records (and is not logged again) while its pin stays.
func TestGuardBounds(t *testing.T) {
	ctx := context.Background()
	st, s, clk := newMapStore(), testSealer(t, "k1"), &clock{t: time.Unix(1e9, 0)}
	events := 0
	g := tofuGuard(t, nil, st, s, clk, func(string, Class, Action) { events++ })
	g.CheckList(ctx, "be", KindTool, toolsNamed(t, "t", 300))
	for round := range 30 {
		g.CheckList(ctx, "be", KindTool, toolsNamed(t, fmt.Sprintf("r%02d_", round), 300))
	}
	if len(st.m) != 1 {
		t.Errorf("%d store keys after 30 renames, want the one manifest", len(st.m))
	}
	drift := g.Drift()
	raw, _ := json.Marshal(drift)
	if len(drift) > maxDriftRecords || len(raw) > maxDriftBytes+maxDriftRecords*64 {
		t.Errorf("%d drift records, %d bytes of /pins", len(drift), len(raw))
	}
	state := g.State("be")
	if state.Drifted != 600 || state.Omitted != 600-len(drift) || len(drift) != 600 {
		// 300 removed (the pins) and 300 new (the last names): all fit.
		t.Errorf("state %+v with %d records", state, len(drift))
	}
	// More drifted items than the records hold.
	g.CheckList(ctx, "be", KindTool, toolsNamed(t, "many", 3000))
	if n := len(g.Drift()); n != maxDriftRecords {
		t.Errorf("%d records, want the bound %d", n, maxDriftRecords)
	}
	if st := g.State("be"); st.Drifted != 3300 || st.Omitted != 3300-maxDriftRecords {
		t.Errorf("state %+v", st)
	}

	// First contact beyond the bounds.
	small := tofuGuard(t, &Config{Mode: ModeTOFU, MaxPerBackend: 100}, st, s, clk, nil, "big")
	v := small.CheckList(ctx, "big", KindTool, toolsNamed(t, "t", 150))
	if v["t0099"].Action != "" || v["t0100"].Classes.String() != "new" {
		t.Errorf("beyond MaxPerBackend: %+v %+v", v["t0099"], v["t0100"])
	}
	bytesCap := tofuGuard(t, &Config{Mode: ModeTOFU, MaxBytesPerBackend: 1000}, st, s, clk, nil, "wide")
	v = bytesCap.CheckList(ctx, "wide", KindTool, toolsNamed(t, "t", 50))
	pinned := 0
	for _, x := range v {
		if x.Action == "" {
			pinned++
		}
	}
	if pinned == 0 || pinned >= 50 {
		t.Errorf("%d of 50 pinned under a 1000-byte bound", pinned)
	}

	// Retention: removed items leave the records after it, once, and stay out.
	r := tofuGuard(t, &Config{Mode: ModeTOFU, Retention: time.Hour}, newMapStore(), s, clk, func(string, Class, Action) { events++ })
	r.CheckList(ctx, "be", KindTool, toolsNamed(t, "t", 10))
	r.CheckList(ctx, "be", KindTool, toolsNamed(t, "t", 5))
	if n := len(r.Drift()); n != 5 {
		t.Fatalf("%d records of removed tools, want 5", n)
	}
	clk.add(2 * time.Hour)
	events = 0
	for range 3 {
		r.CheckList(ctx, "be", KindTool, toolsNamed(t, "t", 5))
	}
	if n := len(r.Drift()); n != 0 || events != 0 {
		t.Errorf("after the retention: %d records, %d new events", n, events)
	}
	if got := r.Unlisted("be", KindTool, "t0009"); got.Classes.String() != "removed" {
		t.Errorf("the pin of an expired removed tool: %+v", got)
	}
	// It comes back changed: drift again.
	back := toolsNamed(t, "t", 10)
	back[9] = listed(t, KindTool, `{"name":"t0009","description":"Tool number 9, now different.","inputSchema":{"type":"object"}}`)[0]
	if v := r.CheckList(ctx, "be", KindTool, back); v["t0009"].Classes.String() != "text-changed" || len(r.Drift()) != 1 {
		t.Errorf("an expired removed tool back, changed: %+v, records %d", v["t0009"], len(r.Drift()))
	}
}
