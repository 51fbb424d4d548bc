package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParseMix(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"call", "call:1", false},
		{"call:8,list:1,confirm:1,sse:2", "call:8,list:1,confirm:1,sse:2", false},
		{"call:4,legacy-call:1", "call:4,legacy-call:1", false},
		{"legacy-init", "", true}, // the handshake is reported, never mixed in
		{" call : 3", "", true},
		{"call:0", "", true},
		{"call:-1", "", true},
		{"call:x", "", true},
		{"mystery", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := ParseMix(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrBadMix) {
					t.Fatalf("ParseMix(%q) error = %v, want ErrBadMix", tt.in, err)
				}
				return
			}
			if err != nil || m.String() != tt.want {
				t.Fatalf("ParseMix(%q) = %q, %v; want %q", tt.in, m.String(), err, tt.want)
			}
		})
	}
}

func TestPickFollowsWeights(t *testing.T) {
	m := Mix{{OpCall, 2}, {OpList, 1}, {OpSSE, 3}}
	want := []Op{OpCall, OpCall, OpList, OpSSE, OpSSE, OpSSE}
	for x, w := range want {
		if got := pick(m, x); got != w {
			t.Errorf("pick(%d) = %s, want %s", x, got, w)
		}
	}
}

func TestConfigValidateReportsEverything(t *testing.T) {
	c := Config{Concurrency: MaxConcurrency + 1, Requests: -1, Duration: MaxDuration + time.Second,
		Args: json.RawMessage(`[1]`), Token: "a\nb"}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad config")
	}
	for _, want := range []string{"URL is required", "concurrency", "requests", "duration", "args must be", "token"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error %q does not mention %q", err, want)
		}
	}
	if err := (Config{URL: "http://127.0.0.1:1/mcp"}).Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

// fakeResolver answers every name with fixed addresses.
type fakeResolver []netip.Addr

func (f fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return f, nil
}

func TestCheckLoopback(t *testing.T) {
	lo := fakeResolver{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}
	mixed := fakeResolver{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("192.0.2.7")}
	tests := []struct {
		url  string
		r    Resolver
		want error
	}{
		{"http://127.0.0.1:8080/mcp", lo, nil},
		{"http://127.9.8.7/mcp", lo, nil},
		{"http://[::1]:80/mcp", lo, nil},
		{"http://[::ffff:127.0.0.1]:80/mcp", lo, nil},
		{"http://gateway.test/mcp", lo, nil},
		{"http://gateway.test/mcp", mixed, ErrNotLoopback},
		{"http://gateway.test/mcp", fakeResolver{}, ErrNotLoopback},
		{"http://10.0.0.1/mcp", lo, ErrNotLoopback},
		{"http://[2001:db8::1]/mcp", lo, ErrNotLoopback},
		{"http://0.0.0.0:80/mcp", lo, ErrNotLoopback},
		{"https://127.0.0.1/mcp", lo, ErrBadTarget},
		{"http:///mcp", lo, ErrBadTarget},
		{"::", lo, ErrBadTarget},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			err := CheckLoopback(t.Context(), tt.r, tt.url)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("CheckLoopback(%q) = %v, want %v", tt.url, err, tt.want)
			}
		})
	}
}

func TestDialerRefusesNonLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "192.0.2.1:80": false, "[2001:db8::1]:80": false} {
		if err := loopbackControl("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("loopbackControl(%s) = %v, want ok=%v", addr, err, ok)
		}
	}
}

func TestNewRefusesNonLoopbackTarget(t *testing.T) {
	r, err := New(Config{URL: "http://192.0.2.1:9/mcp", Requests: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Run(t.Context()); !errors.Is(err, ErrNotLoopback) {
		t.Fatalf("Run against 192.0.2.1 = %v, want ErrNotLoopback", err)
	}
}
