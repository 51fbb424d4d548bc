package upstreams

import (
	"errors"
	"testing"

	"github.com/mcp-gateway/gateway/internal/bodyread"
)

// TestResultSharePerCaller: a caller's copies of results (TakeResultBytes) are charged within its
// share of the replica's result budget, an eighth of it and at least three times the largest
// maxResponseBytes: past its share a caller's next bytes are refused while another caller's still
// fit, and giving them back leaves nothing charged and no caller's share held. Without shares
// the first caller takes the budget and the second is refused.
func TestResultSharePerCaller(t *testing.T) {
	const (
		budget   = 64 << 20
		maxBytes = 4 << 20
		share    = 3 * maxBytes // more than budget/8
	)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: "http://127.0.0.1:1/mcp", MaxResponseBytes: maxBytes}}},
		Options{MaxResultBytesInFlight: budget})
	if r.TakeResultBytes("idp#a", share) != nil {
		t.Fatalf("a caller's first %d bytes do not fit its share", share)
	}
	if err := r.TakeResultBytes("idp#a", 1); err == nil {
		t.Error("a caller's bytes past its share were charged")
		r.ReturnResultBytes("idp#a", 1)
	} else if !errors.Is(err, bodyread.ErrShare) {
		t.Errorf("a caller's bytes past its share: %v, want its share's refusal (bodyread.ErrShare)", err)
	}
	if r.TakeResultBytes("idp#b", share) != nil {
		t.Error("another caller's bytes were refused while the first holds its share")
	} else {
		r.ReturnResultBytes("idp#b", share)
	}
	r.ReturnResultBytes("idp#a", share)
	if n := r.ResultBytesInFlight(); n != 0 {
		t.Errorf("%d result bytes in flight once every charge was given back", n)
	}
	if r.TakeResultBytes("idp#a", share) != nil {
		t.Error("the caller's share was not whole again once given back")
	} else {
		r.ReturnResultBytes("idp#a", share)
	}
}

// TestResultShareSize: a share is an eighth of the budget, at least three times the largest
// maxResponseBytes, and none (the budget alone) when that would be the whole budget or the
// budget is unbounded.
func TestResultShareSize(t *testing.T) {
	for _, tc := range []struct {
		budget, maxBytes, want int64
	}{
		{budget: 128 << 20, maxBytes: 16 << 20, want: 48 << 20},
		{budget: 1 << 30, maxBytes: 16 << 20, want: 128 << 20},
		{budget: 32 << 20, maxBytes: 16 << 20, want: 0},
		{budget: -1, maxBytes: 16 << 20, want: 0},
	} {
		r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: "http://127.0.0.1:1/mcp", MaxResponseBytes: tc.maxBytes}}},
			Options{MaxResultBytesInFlight: tc.budget})
		got := int64(0)
		if r.callers != nil {
			got = r.callers.Take("idp#a").Max()
			r.callers.Give("idp#a")
		}
		if got != tc.want {
			t.Errorf("budget %d, maxResponseBytes %d: a caller's share %d, want %d", tc.budget, tc.maxBytes, got, tc.want)
		}
	}
}
