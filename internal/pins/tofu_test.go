package pins

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestGuardTOFUReadsEarlierRecords: the per-kind records of earlier releases (ManifestKey) are
// the backend's pins while it has no record of every kind: read, never rewritten by a read;
// the first write (here a first contact of another kind) writes them into one record with the
// new kind, and from then on that record alone counts. An earlier record that does not open
// makes every kind of the backend unverified and is not written over by a first contact.
func TestGuardTOFUReadsEarlierRecords(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Unix(1e9, 0)}
	s := testSealer(t, "k1")
	st := newMapStore()
	old, err := SealManifest(s, &Manifest{Backend: "be", Kind: KindTool,
		Pins: map[string]*Definition{"a": def(t, KindTool, a1), "b": def(t, KindTool, b1)}})
	if err != nil {
		t.Fatal(err)
	}
	st.m[ManifestKey("be", KindTool)] = old
	g := tofuGuard(t, nil, st, s, clk, nil, "be")
	v := g.CheckList(ctx, "be", KindTool, listed(t, KindTool, a1, b1, c1))
	if v["a"].Action != "" || v["b"].Action != "" || v["c"].Classes.String() != "new" {
		t.Fatalf("tools against the earlier record: %+v", v)
	}
	if _, ok := st.m[ManifestsKey("be")]; ok {
		t.Fatal("a read wrote the backend's record")
	}
	if v := g.CheckInstructions(ctx, "be", "Use me."); v.Action != "" {
		t.Fatalf("first instructions: %+v", v)
	}
	ms, err := OpenManifests(s, "be", st.m[ManifestsKey("be")])
	if err != nil || len(ms) != 2 || len(ms[KindTool].Pins) != 2 || ms[KindInstructions] == nil {
		t.Fatalf("the record first contact wrote: %v %v; want the earlier tools and the instructions", ms, err)
	}
	// The earlier record changes (a replica of the earlier release): it no longer counts.
	changed, _ := SealManifest(s, &Manifest{Backend: "be", Kind: KindTool, Pins: map[string]*Definition{"c": def(t, KindTool, c1)}})
	st.m[ManifestKey("be", KindTool)] = changed
	clk.add(tofuRecheck + time.Second)
	if v := g.CheckList(ctx, "be", KindTool, listed(t, KindTool, a1, b1, c1)); v["a"].Action != "" || v["c"].Classes.String() != "new" {
		t.Errorf("tools after the record was written: %+v", v)
	}

	st2 := newMapStore()
	st2.m[ManifestKey("be", KindPrompt)] = []byte("not sealed")
	g2 := tofuGuard(t, nil, st2, s, clk, nil, "be")
	if v := g2.CheckList(ctx, "be", KindTool, listed(t, KindTool, a1)); !v["a"].Unverified() || !v["a"].Blocked() {
		t.Errorf("a tool beside an earlier record that does not open: %+v, want unverified", v["a"])
	}
	if len(st2.m) != 1 {
		t.Errorf("first contact wrote beside an earlier record that does not open: %d keys", len(st2.m))
	}
}

// TestSealedRecordWithinBounds: a backend's record full in every kind (MaxPerBackend items of
// MaxBytesPerBackend bytes of canonical text each) seals within MaxSealedBytes, the most the
// sealer opens: an approval of every kind at its bounds is not refused by its own size.
func TestSealedRecordWithinBounds(t *testing.T) {
	cfg := &Config{Mode: ModeTOFU, MaxPerBackend: 10, MaxBytesPerBackend: 8000}
	wide := make([]string, 12)
	for i := range wide {
		wide[i] = fmt.Sprintf(`{"name":"t%02d","description":"%s","inputSchema":{"type":"object"}}`, i, strings.Repeat("x", 1000))
	}
	items := listed(t, KindTool, wide...)
	ms := map[Kind]*Manifest{}
	for _, kind := range Kinds() {
		// Tools under every kind: the record's size is what counts here, not the kinds' shapes.
		m, over := FirstContact("be", kind, items, nil, cfg.maxPins(), cfg.maxPinBytes())
		if len(over) == 0 {
			t.Fatalf("%s: %d pins, none over; want the bytes bound reached", kind, len(m.Pins))
		}
		ms[kind] = m
	}
	sealed, err := SealManifests(testSealer(t, "k1"), "be", ms)
	if err != nil || len(sealed) > cfg.MaxSealedBytes() {
		t.Fatalf("a record full in every kind: %d bytes (%v), MaxSealedBytes %d", len(sealed), err, cfg.MaxSealedBytes())
	}
}
