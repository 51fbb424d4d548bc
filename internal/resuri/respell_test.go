package resuri

import "testing"

// TestRespell: a URI under a template is written with the template's literal text as listed and
// the expressions' text as the URI has it (non-ASCII percent-encoded), and only when that reads
// back as the URI.
func TestRespell(t *testing.T) {
	for _, tt := range []struct{ listed, u, want string }{
		{"MEM://Items/%7e{id}", "mem://items/~1", "MEM://Items/%7e1"},
		{"MEM://Items/%7e{id}", "mem://items/~caf%C3%A9", "MEM://Items/%7ecaf%C3%A9"},
		{"MEM://Items/%7e{id}", "mem://items/~café", "MEM://Items/%7ecaf%C3%A9"},
		{"Mem://X/{a}%2D{b}/%7E", "mem://x/1-2-3/~", "Mem://X/1%2D2-3/%7E"},
		{"mem://x//{a}", "mem://x/b", "mem://x//b"},
		{"file://LOCALHOST/{p}", "file:///etc", "file://LOCALHOST/etc"},
		{"file:/{p}", "file:///etc", "file:/etc"},
		{"mem://x/é/{id}", "mem://x/é/1", "mem://x/é/1"},
		{"mem://x/%C3%A9/{id}", "mem://x/é/ü", "mem://x/%C3%A9/%C3%BC"},
		{"mem://x/{id}{?q}", "mem://x/a?q=%7E", "mem://x/a?q=~"},
		{"MEM://x/a", "mem://x/a", "MEM://x/a"},
		{"MEM://H{a}/x", "mem://hb/x", "MEM://Hb/x"},
	} {
		normal, err := NormalizeTemplate(tt.listed)
		if err != nil {
			t.Fatalf("%q: %v", tt.listed, err)
		}
		u, err := Normalize(tt.u)
		if err != nil {
			t.Fatalf("%q: %v", tt.u, err)
		}
		got, ok := Respell(tt.listed, normal, u)
		if !ok || got != tt.want {
			t.Errorf("Respell(%q, %q): %q, %v; want %q", tt.listed, u, got, ok, tt.want)
		}
		if back, err := Normalize(got); err != nil || back != u {
			t.Errorf("%q reads back as %q, %v; want %q", got, back, err, u)
		}
	}
	// Not under the template, or a listed text whose expressions are not the normal form's,
	// or a pair of which no respelling reads back as u: nothing.
	for _, tt := range []struct{ listed, normal, u string }{
		{"MEM://Items/%7e{id}", "mem://items/~{id}", "mem://items/1"},
		{"MEM://Items/%7e{id}", "mem://items/~{id}", "mem://other/~1"},
		{"MEM://Items/%7e{id}", "mem://items/~{x}", "mem://items/~1"},
		{"MEM://Items/%7e{id}/{b}", "mem://items/~{id}", "mem://items/~1"},
		{"MEM://Other/{id}", "mem://items/{id}", "mem://items/1"},
		{"mem://x/../{id}", "mem://{id}", "mem://a"},
		{"mem://x/%2e%2e/{id}", "mem://x/../{id}", "mem://x/../a"},
	} {
		if got, ok := Respell(tt.listed, tt.normal, tt.u); ok {
			t.Errorf("Respell(%q, %q, %q): %q, want none", tt.listed, tt.normal, tt.u, got)
		}
	}
}

// TestReadsAs: a spelling names the normal form when it normalises to it without a dot segment.
func TestReadsAs(t *testing.T) {
	const n = "mem://items/~1"
	for _, s := range []string{n, "MEM://Items/%7e1", "mem://items//%7E1", "mem://items:/~1?", "Mem://ITEMS/~1#"} {
		if !ReadsAs(s, n) {
			t.Errorf("ReadsAs(%q, %q) = false", s, n)
		}
	}
	for _, s := range []string{"mem://items/x/../~1", "mem://items/./~1", "mem://items/%2e/~1", "mem://items/x/%2E%2E/~1",
		"mem://items/~1/.", "mem://items/~2", "mem://items/~1/", "mem://items/%7E1%2F", "MEM://Items/%7e1 ", "x"} {
		if ReadsAs(s, n) {
			t.Errorf("ReadsAs(%q, %q) = true", s, n)
		}
	}
	// A template's text likewise.
	const tn = "mem://items/~{id}"
	for _, tt := range []struct {
		s    string
		want bool
	}{{"MEM://Items/%7e{id}", true}, {tn, true}, {"mem://items/x/../~{id}", false}, {"mem://items/~{idx}", false}, {"mem://items/~1", false}} {
		if got := ReadsAs(tt.s, tn); got != tt.want {
			t.Errorf("ReadsAs(%q, %q) = %v", tt.s, tn, got)
		}
	}
}
