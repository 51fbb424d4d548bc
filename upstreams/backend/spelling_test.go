package backend

import (
	"errors"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// TestSpelling: a read is sent in the spelling given only when it names the URI that was
// authorised to every reader: its non-ASCII text written otherwise, or (a URI respelt under a
// template as its backend listed it) case in the scheme or host, escapes of unreserved
// characters or runs of '/' that normalise away; without one, in the URI form of the normal
// form. Any other spelling (another path or character, a dot segment that normalises away, a
// malformed one) is refused, never sent.
func TestSpelling(t *testing.T) {
	const n = "mem://x/café"
	read := func(spelling string) *Call {
		return &Call{Method: wire.MethodResourcesRead, Target: names.Target{Upstream: "u", Name: n}, Spelling: spelling}
	}
	for _, tt := range []struct{ spelling, want string }{
		{"", "mem://x/caf%C3%A9"},
		{"mem://x/caf%C3%A9", "mem://x/caf%C3%A9"},
		{"mem://x/caf%c3%a9", "mem://x/caf%c3%a9"},
		{"mem://x/café", "mem://x/café"},
		{"mem://x/cafe\u0301", "mem://x/cafe\u0301"},
		{"MEM://X/caf%C3%A9", "MEM://X/caf%C3%A9"},
		{"mem://x//%63af%C3%A9", "mem://x//%63af%C3%A9"},
	} {
		if got, err := spelling(read(tt.spelling)); err != nil || got != tt.want {
			t.Errorf("spelling %q: %q, %v; want %q", tt.spelling, got, err, tt.want)
		}
	}
	for _, bad := range []string{"mem://x/y/../caf%C3%A9", "MEM://X/./café", "mem://x/%2E/café", "mem://x/cafe", "mem://x/caf%C3%A8", "mem://y/café", "mem://x/café/..", "mem://x/caf\u00e9 ", "mem://x/%2e%2e/café", "x"} {
		if got, err := spelling(read(bad)); !errors.Is(err, errSpelling) {
			t.Errorf("spelling %q: %q, %v; want errSpelling", bad, got, err)
		}
	}
	// Other methods send their name as it is.
	if got, err := spelling(&Call{Method: wire.MethodToolsCall, Target: names.Target{Upstream: "u", Name: "café"}}); err != nil || got != "café" {
		t.Errorf("tools/call: %q, %v", got, err)
	}
}
