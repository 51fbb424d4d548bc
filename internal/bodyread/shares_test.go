package bodyread

import (
	"errors"
	"testing"
)

// TestSharesHeldWhileInFlight: a caller's share is one budget for all its holders, bounded on
// its own and within the parent's; it is forgotten when its last holder gives it back, and the
// key "" reads within the parent alone.
func TestSharesHeldWhileInFlight(t *testing.T) {
	parent := NewBudget(100)
	s := NewShares(parent, 40)
	a, again := s.Take("a"), s.Take("a")
	if a != again || s.Held() != 1 {
		t.Fatalf("one caller, two shares or %d held", s.Held())
	}
	if err := a.Charge(30); err != nil {
		t.Fatal(err)
	}
	if err := again.Charge(20); !errors.Is(err, ErrShare) {
		t.Fatalf("past the share: %v", err)
	}
	if parent.InUse() != 30 {
		t.Fatalf("the parent holds %d, not the share's 30", parent.InUse())
	}
	if s.Take("") != parent || s.Held() != 1 {
		t.Fatal("the key \"\" got a share")
	}
	s.Give("")
	s.Give("a")
	if s.Held() != 1 {
		t.Fatal("a share forgotten while still held")
	}
	s.Give("a")
	if s.Held() != 0 {
		t.Fatal("a share kept with no holder")
	}
	var none *Shares
	if none.Take("a") != nil || none.Held() != 0 || none.Max() != 0 {
		t.Fatal("the nil Shares bounds something")
	}
	none.Give("a")
}

// TestSharesKeylessShareOne: under KeylessShareOne the callers without a key hold one share
// between them, bounded like any caller's, and InUse measures each share on its own.
func TestSharesKeylessShareOne(t *testing.T) {
	parent := NewBudget(100)
	s := NewSharesKeyless(parent, 40, KeylessShareOne)
	x, y, a := s.Take(""), s.Take(""), s.Take("a")
	if x != y || x == parent || x == a || s.Held() != 2 {
		t.Fatalf("the keyless callers do not hold one share of their own (%d held)", s.Held())
	}
	if err := x.Charge(30); err != nil {
		t.Fatal(err)
	}
	if err := y.Charge(20); !errors.Is(err, ErrShare) {
		t.Fatalf("the keyless callers past one share: %v", err)
	}
	if err := a.Charge(5); err != nil {
		t.Fatal(err)
	}
	if s.InUse("") != 30 || s.InUse("a") != 5 || s.InUse("b") != 0 || parent.InUse() != 35 {
		t.Fatalf("in use: keyless %d, a %d, b %d, parent %d", s.InUse(""), s.InUse("a"), s.InUse("b"), parent.InUse())
	}
	s.Give("")
	s.Give("")
	if s.Held() != 1 || s.InUse("") != 0 {
		t.Fatal("the keyless share kept with no holder")
	}
	if p := NewShares(parent, 40); p.Take("") != parent || p.InUse("") != 0 {
		t.Fatal("NewShares gave the keyless callers a share")
	}
	var none *Shares
	if none.InUse("a") != 0 {
		t.Fatal("the nil Shares holds something")
	}
}

// TestSharesReuseOnlyWholeShares: a share given back whole serves the next caller without an
// allocation (one is taken for every call), starting empty; one given back with bytes still out
// is not handed to another caller, whose share would then start spent.
func TestSharesReuseOnlyWholeShares(t *testing.T) {
	s := NewShares(NewBudget(1<<20), 1<<10)
	if n := testing.AllocsPerRun(100, func() {
		b := s.Take("a")
		b.Take(100)
		b.Return(100)
		s.Give("a")
	}); n != 0 {
		t.Errorf("taking and giving back a share makes %v allocations, want 0", n)
	}
	b := s.Take("a")
	if !b.Take(1 << 10) {
		t.Fatal("a whole share does not hold its own size")
	}
	s.Give("a") // before its bytes went back
	if used := s.Take("b").InUse(); used != 0 {
		t.Errorf("another caller's share starts with %d bytes used", used)
	}
	s.Give("b")
	b.Return(1 << 10)
}

// TestSharesReturn: Return gives back the bytes taken from a key's share and the share once,
// for a holder that kept no *Budget; under KeylessInParent the key "" returns to the parent.
func TestSharesReturn(t *testing.T) {
	parent := NewBudget(100)
	s := NewShares(parent, 40)
	if !s.Take("a").Take(30) {
		t.Fatal("30 bytes of a share of 40 refused")
	}
	if s.InUse("a") != 30 || parent.InUse() != 30 || s.Held() != 1 {
		t.Fatalf("after the take: share %d, parent %d, held %d", s.InUse("a"), parent.InUse(), s.Held())
	}
	s.Return("a", 30)
	if s.InUse("a") != 0 || parent.InUse() != 0 || s.Held() != 0 {
		t.Fatalf("after Return: share %d, parent %d, held %d", s.InUse("a"), parent.InUse(), s.Held())
	}
	if !s.Take("").Take(10) || parent.InUse() != 10 {
		t.Fatalf("the keyless caller's bytes: parent %d", parent.InUse())
	}
	s.Return("", 10)
	if parent.InUse() != 0 {
		t.Fatalf("the keyless caller's bytes after Return: parent %d", parent.InUse())
	}
}
