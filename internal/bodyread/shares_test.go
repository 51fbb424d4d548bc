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
