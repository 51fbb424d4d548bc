package bodyread

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestShare: a share holds its bodies to its own bound (ErrShare) and to its parent's
// (ErrBudget); what it charges, its parent is charged; Settle leaves a read body charged to
// the parent only, or to a caller's share of it, and Release gives everything back.
func TestShare(t *testing.T) {
	// A 10 KiB body ends in a 16 KiB buffer, and holds 24 KiB while its buffer grows to it.
	parent := NewBudget(80 << 10)
	a, b := NewShare(parent, 40<<10), NewShare(parent, 64<<10)
	body := strings.Repeat("x", 10<<10)
	read := func(s *Budget) (*Buffer, error) { return Read(strings.NewReader(body), 1<<20, s) }
	a1, err := read(a)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := read(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := read(a); !errors.Is(err, ErrShare) || !errors.Is(err, ErrBudget) {
		t.Fatalf("a third body in a 40 KiB share: %v, want ErrShare", err)
	}
	if a.InUse() != 32<<10 || parent.InUse() != 32<<10 {
		t.Fatalf("share %d, parent %d; want 32 KiB each", a.InUse(), parent.InUse())
	}
	b1, _ := read(b)
	b2, _ := read(b)
	if _, err := read(b); !errors.Is(err, ErrBudget) || errors.Is(err, ErrShare) {
		t.Fatalf("a body past the parent's bound: %v, want ErrBudget, not ErrShare", err)
	}
	if b.InUse() != 32<<10 || parent.InUse() != 64<<10 {
		t.Fatalf("after a refusal: share %d, parent %d", b.InUse(), parent.InUse())
	}
	if err := a1.Settle(nil); err != nil {
		t.Fatal(err)
	}
	if a.InUse() != 16<<10 || parent.InUse() != 64<<10 {
		t.Fatalf("settled: share %d, parent %d; want 16 KiB and 64 KiB", a.InUse(), parent.InUse())
	}
	if _, err := read(a); !errors.Is(err, ErrBudget) || errors.Is(err, ErrShare) {
		t.Fatalf("the share has room, the parent none: %v", err)
	}
	// Into a caller's share of the same parent: the parent is not charged again, and a body
	// that does not fit the caller's share stays where it was.
	caller := NewShare(parent, 20<<10)
	if err := a2.Settle(caller); err != nil {
		t.Fatal(err)
	}
	if err := b1.Settle(caller); !errors.Is(err, ErrShare) {
		t.Fatalf("a second 16 KiB body into a 20 KiB caller's share: %v, want ErrShare", err)
	}
	if a.InUse() != 0 || b.InUse() != 32<<10 || caller.InUse() != 16<<10 || parent.InUse() != 64<<10 {
		t.Fatalf("settled into the caller's share: a %d, b %d, caller %d, parent %d",
			a.InUse(), b.InUse(), caller.InUse(), parent.InUse())
	}
	for _, buf := range []*Buffer{a1, a2, b1, b2} {
		buf.Release()
	}
	if a.InUse() != 0 || b.InUse() != 0 || caller.InUse() != 0 || parent.InUse() != 0 {
		t.Fatalf("released: %d %d %d %d", a.InUse(), b.InUse(), caller.InUse(), parent.InUse())
	}
	if !bytes.Equal([]byte(nil), a1.B) {
		t.Fatal("a released buffer kept its bytes")
	}
}
