package mcphttp

import (
	"errors"
	"testing"
)

func TestConcurrencyLimits(t *testing.T) {
	c := newConcurrency(2, 1, 0)
	r1, err1 := c.acquire()
	r2, err2 := c.acquire()
	if err1 != nil || err2 != nil || !r1 || !r2 {
		t.Fatal(err1, err2)
	}
	if _, err := c.acquire(); !errors.Is(err, errBusy) {
		t.Fatalf("third overall slot: %v, want busy", err)
	}
	c.releaseAll()
	if _, err := c.acquire(); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	c.releaseAll()
	c.releaseAll()
	if len(c.all) != 0 {
		t.Fatalf("%d overall slots held after every release", len(c.all))
	}

	if took, err := c.acquireCaller("alice"); err != nil || !took {
		t.Fatal(took, err)
	}
	if _, err := c.acquireCaller("alice"); !errors.Is(err, errCallerBusy) {
		t.Fatalf("second slot for alice: %v, want busy", err)
	}
	if _, err := c.acquireCaller("bob"); err != nil {
		t.Fatalf("bob is limited by alice: %v", err)
	}
	c.releaseCaller("alice")
	c.releaseCaller("bob")
	if len(c.callers.n) != 0 {
		t.Fatalf("callers map keeps %d entries after release", len(c.callers.n))
	}
	if _, err := newConcurrency(-1, -1, -1).acquireCaller("x"); err != nil {
		t.Fatal("disabled limits refused a request")
	}
}
