package catalog

import (
	"bytes"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// listDigest is the digest page computes for items.
func listDigest(spec listSpec, items []listItem) []byte {
	d := newListDigester(spec)
	for i := range items {
		d.add(&items[i])
	}
	return d.sum()
}

// TestListDigestBindsContentAndOrder: the digest a cursor carries changes when any item's
// bytes change (a backend edits a tool's description), when items swap places, and when one
// is left out, so a cursor cut from the old view is refused.
func TestListDigestBindsContentAndOrder(t *testing.T) {
	spec, _ := listSpecFor(wire.MethodToolsList)
	item := func(name, desc string) listItem {
		return newListItem(names.Target{Upstream: "a", Name: name}, []byte(`{"name":"a__`+name+`","description":"`+desc+`"}`))
	}
	base := []listItem{item("x", "one"), item("y", "two"), item("z", "three")}
	want := listDigest(spec, base)
	if got := listDigest(spec, []listItem{item("x", "one"), item("y", "two"), item("z", "three")}); !bytes.Equal(got, want) {
		t.Fatal("the same list gave another digest")
	}
	for name, items := range map[string][]listItem{
		"edited":    {item("x", "one"), item("y", "TWO"), item("z", "three")},
		"reordered": {item("y", "two"), item("x", "one"), item("z", "three")},
		"shorter":   {item("x", "one"), item("y", "two")},
	} {
		if bytes.Equal(listDigest(spec, items), want) {
			t.Errorf("%s list kept the digest", name)
		}
	}
	if prompts, _ := listSpecFor(wire.MethodPromptsList); bytes.Equal(listDigest(prompts, base), want) {
		t.Error("another method kept the digest")
	}
}
