package catalog

import (
	"testing"
	"time"
)

// TestSpellIndex: a normal form listed under one spelling is sent in it; one listed under two,
// or under a spelling that differs in more than its non-ASCII text, or as its URI form, or in
// plain ASCII, is not indexed (the URI form or the name itself goes).
func TestSpellIndex(t *testing.T) {
	p := &part{}
	for _, l := range []struct{ n, listed string }{
		{"mem://x/é", "mem://x/é"},           // raw: indexed
		{"mem://x/é", "mem://x/é"},           // the same again: still one spelling
		{"mem://y/é", "mem://y/%c3%a9"},      // lower-case hex: indexed
		{"mem://z/é", "mem://z/%C3%A9"},      // the URI form: not needed
		{"mem://c/é", "mem://c/%C3%A9"},      // collides with the next
		{"mem://c/é", "mem://c/é"},           //
		{"mem://d/é", "mem://d/a/../%C3%A9"}, // a dot segment: never sent
		{"mem://e/é", "MEM://e/é"},           // upper case: never sent
		{"mem://f/é", "mem://f/e\u0301"},     // decomposed: indexed
		{"mem://ascii/a", "mem://ascii/%61"}, // ASCII: not consulted
	} {
		p.addSpelling(l.n, l.listed)
	}
	e := buildSpellIndex(p, 0, time.Unix(0, 0), [32]byte{})
	want := map[string]string{"mem://x/é": "mem://x/é", "mem://y/é": "mem://y/%c3%a9", "mem://f/é": "mem://f/e\u0301"}
	if len(e.spell) != len(want) {
		t.Errorf("index %q, want %q", e.spell, want)
	}
	for n, s := range want {
		if e.spell[n] != s {
			t.Errorf("%q: %q, want %q", n, e.spell[n], s)
		}
	}
}
