package mcphttp

import (
	"errors"
	"testing"
)

func TestConcurrencyLimits(t *testing.T) {
	c := newConcurrency(2, 1)
	r1, err1 := c.acquire()
	r2, err2 := c.acquire()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := c.acquire(); !errors.Is(err, errBusy) {
		t.Fatalf("third overall slot: %v, want busy", err)
	}
	r1()
	r3, err := c.acquire()
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
	r3()

	a1, err := c.acquireCaller("alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.acquireCaller("alice"); !errors.Is(err, errCallerBusy) {
		t.Fatalf("second slot for alice: %v, want busy", err)
	}
	b1, err := c.acquireCaller("bob")
	if err != nil {
		t.Fatalf("bob is limited by alice: %v", err)
	}
	a1()
	b1()
	if len(c.callers) != 0 {
		t.Fatalf("callers map keeps %d entries after release", len(c.callers))
	}
	if _, err := newConcurrency(-1, -1).acquireCaller("x"); err != nil {
		t.Fatal("disabled limits refused a request")
	}
}
