package configerr

import (
	"errors"
	"reflect"
	"testing"
)

var errKind = errors.New("pkg: invalid config")

// TestUnder: a block's problems are placed under the block's path, keep their own kind or take
// the one given, and a plain error becomes a problem of the block itself.
func TestUnder(t *testing.T) {
	errs := Under("upstreams[1]", errKind,
		At("timeout", "must not be negative"),
		At("[0]", "indexed"),
		errors.Join(At("tls.caFile", "missing"), errors.New("plain")),
		nil,
	)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
		if !errors.Is(e, errKind) {
			t.Errorf("%v does not match the kind", e)
		}
	}
	want := []string{"upstreams[1].timeout: must not be negative", "upstreams[1][0]: indexed",
		"upstreams[1].tls.caFile: missing", "upstreams[1]: plain"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if p, ok := PathOf(errs[0]); !ok || p != "upstreams[1].timeout" {
		t.Errorf("PathOf = %q, %v", p, ok)
	}
	if got := Under("", nil, At("a", "x"))[0].Error(); got != "a: x" {
		t.Errorf("no prefix: %q", got)
	}
}

// TestListAndNote: List flattens joined problems in order; Note prefixes the messages, not
// the paths; %w wraps.
func TestListAndNote(t *testing.T) {
	inner := errors.New("inner")
	joined := errors.Join(At("a", "one"), errors.Join(At("b", "two: %w", inner), nil), At("c", "three"))
	l := List(joined)
	if len(l) != 3 || l[1].Error() != "b: two: inner" || !errors.Is(l[1], inner) {
		t.Fatalf("List = %q", l)
	}
	n := Note(`rule "r"`, l[0], errors.New("plain"))
	if n[0].Error() != `a: rule "r": one` || n[1].Error() != `rule "r": plain` {
		t.Errorf("Note = %q", n)
	}
	if List(nil) != nil {
		t.Error("List(nil) is not empty")
	}
}
