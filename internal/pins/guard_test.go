package pins

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
)

// mapStore is a TOFUStore in a map; fail makes every call fail.
type mapStore struct {
	mu   sync.Mutex
	m    map[string][]byte
	fail bool
	sets int
}

func (s *mapStore) SetNX(_ context.Context, key string, value []byte) (bool, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sets++
	if s.fail {
		return false, nil, errors.New("down")
	}
	if v, ok := s.m[key]; ok {
		return false, v, nil
	}
	s.m[key] = append([]byte(nil), value...)
	return true, nil, nil
}

func listed(t *testing.T, kind Kind, items ...string) []Listed {
	t.Helper()
	out := make([]Listed, 0, len(items))
	for _, it := range items {
		d, err := FromJSON(kind, json.RawMessage(it))
		key := ""
		if d != nil {
			key = d.Key
		} else {
			var v struct{ Name string }
			_ = json.Unmarshal([]byte(it), &v)
			key = v.Name
		}
		out = append(out, Listed{Key: key, Def: d, Err: err})
	}
	return out
}

// TestGuardVerdicts: the verdicts of CheckList, Unlisted and CheckInstructions in lockfile and
// tofu mode, and that drift is recorded once per change, not per list.
func TestGuardVerdicts(t *testing.T) {
	const (
		a1 = `{"name":"a","description":"A.","inputSchema":{"type":"object"}}`
		a2 = `{"name":"a","description":"A, changed.","inputSchema":{"type":"object"}}`
		b1 = `{"name":"b","inputSchema":{"type":"object"}}`
		c1 = `{"name":"c","inputSchema":{"type":"object"}}`
	)
	ctx := context.Background()
	lock := NewLock()
	if err := lock.AddItems("be", KindTool, []json.RawMessage{json.RawMessage(a1), json.RawMessage(b1)}); err != nil {
		t.Fatal(err)
	}
	var drifts []string
	g, err := NewGuard(GuardOptions{Config: &Config{LockFile: "pins.yaml"}, Lock: lock, Backends: []string{"be"},
		OnDrift: func(b string, c Class, a Action) { drifts = append(drifts, string(c)+":"+string(a)) }})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // the same list three times: counted once
		v, err := g.CheckList(ctx, "be", KindTool, listed(t, KindTool, a2, c1, `{"name":"d","x":1,"x":2}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := v["a"]; got.Action != ActionConfirm || got.Classes.String() != "text-changed" || got.Pinned == "" || got.Current == "" {
			t.Errorf("a: %+v", got)
		}
		if got := v["c"]; got.Action != ActionBlock || got.Classes.String() != "new" || got.Pinned != "" {
			t.Errorf("c: %+v", got)
		}
		if got := v["d"]; !got.Blocked() {
			t.Errorf("d (duplicate member, cannot be fingerprinted): %+v", got)
		}
	}
	if want := []string{"text-changed:confirm", "new:block", "other-changed:block", "removed:log"}; !sameSet(drifts, want) {
		t.Errorf("drift counted %v, want %v once each", drifts, want)
	}
	if got := g.Unlisted("be", KindTool, "b"); got.Classes.String() != "removed" || got.Action != ActionLog {
		t.Errorf("unlisted pinned b: %+v", got)
	}
	if got := g.Unlisted("be", KindTool, "zz"); !got.Blocked() || got.Classes.String() != "new" {
		t.Errorf("unlisted unpinned zz: %+v", got)
	}
	if st := g.State("be"); st == nil || st.Drifted != 4 || st.Blocked != 2 || st.Confirmed != 1 {
		t.Errorf("state %+v", st)
	}
	// Back to the pin: the drift goes away, and comes back (counted again) when it reappears.
	if _, err := g.CheckList(ctx, "be", KindTool, listed(t, KindTool, a1, b1)); err != nil {
		t.Fatal(err)
	}
	if d := g.Drift(); len(d) != 0 {
		t.Errorf("drift after matching the pins again: %+v", d)
	}

	// tofu: the first definition is stored, later ones are judged against it; a store that
	// does not answer is ErrStoreUnavailable; a pin once known is not asked for again.
	st := &mapStore{m: map[string][]byte{}}
	g2, err := NewGuard(GuardOptions{Config: &Config{Mode: ModeTOFU}, Store: st, Backends: []string{"be"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := g2.CheckList(ctx, "be", KindTool, listed(t, KindTool, a1)); err != nil || v["a"].Action != "" {
		t.Fatalf("first sight: %+v %v", v, err)
	}
	if v, err := g2.CheckList(ctx, "be", KindTool, listed(t, KindTool, a2)); err != nil || v["a"].Action != ActionConfirm {
		t.Fatalf("after the change: %+v %v", v, err)
	}
	if st.sets != 1 {
		t.Errorf("%d store calls, want 1 (the pin is cached once known)", st.sets)
	}
	st.fail = true
	if _, err := g2.CheckList(ctx, "be", KindTool, listed(t, KindTool, a2, b1)); !errors.Is(err, ErrStoreUnavailable) {
		t.Errorf("store down: %v, want ErrStoreUnavailable", err)
	}
	if v, err := g2.CheckInstructions(ctx, "be", "Use me."); !errors.Is(err, ErrStoreUnavailable) || v.Action != "" {
		t.Errorf("instructions with the store down: %+v %v", v, err)
	}

	// off, and modes without what they need.
	g3, err := NewGuard(GuardOptions{Config: &Config{Mode: ModeOff}, Backends: []string{"be"}})
	if err != nil || g3.Enabled("be") {
		t.Errorf("off: %v %v", g3.Enabled("be"), err)
	}
	if _, err := NewGuard(GuardOptions{Config: &Config{Mode: ModeTOFU}, Backends: []string{"be"}}); err == nil {
		t.Error("tofu without a store accepted")
	}
	if _, err := NewGuard(GuardOptions{Config: &Config{LockFile: "x"}, Lock: NewLock(), Backends: []string{"be"}}); err == nil {
		t.Error("a lock file without the backend accepted")
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}
