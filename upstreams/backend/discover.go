package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// MaxDiscoverTTL caps how long a backend's server/discover answer is reused, whatever ttlMs it
// names, so a capability change reaches clients within minutes.
const MaxDiscoverTTL = 5 * time.Minute

// discoverRequest is the gateway's own server/discover: it declares no client capabilities, so
// backends answer with what they offer to anyone (docs/protocol.md §1).
const discoverRequest = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"` + ProtocolVersion + `",` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

// ListChangedCap is the tools or prompts capability.
type ListChangedCap struct {
	ListChanged bool `json:"listChanged"`
}

// ResourcesCap is the resources capability.
type ResourcesCap struct {
	Subscribe   bool `json:"subscribe"`
	ListChanged bool `json:"listChanged"`
}

// Caps is the part of a backend's ServerCapabilities the gateway reads and merges.
type Caps struct {
	Tools       *ListChangedCap `json:"tools"`
	Prompts     *ListChangedCap `json:"prompts"`
	Resources   *ResourcesCap   `json:"resources"`
	Completions json.RawMessage `json:"completions"`
	Logging     json.RawMessage `json:"logging"`
	// Extensions and Experimental are relayed only for the names the gateway is configured to
	// relay.
	Extensions   map[string]json.RawMessage `json:"extensions"`
	Experimental map[string]json.RawMessage `json:"experimental"`
}

// Discovered is one backend's parsed server/discover result (for a pre-2026 backend,
// synthesized from its InitializeResult).
type Discovered struct {
	Caps         Caps
	Instructions string
	// TTL is how long it may be reused: the backend's ttlMs, capped at MaxDiscoverTTL.
	TTL time.Duration
}

// discoverCache keeps a backend's last discover result until its ttl passes.
type discoverCache struct {
	mu      sync.Mutex
	d       *Discovered
	expires time.Time
}

func (c *discoverCache) get(now time.Time) *Discovered {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.d == nil || !now.Before(c.expires) {
		return nil
	}
	return c.d
}

// last returns the last discover result however old, nil when there is none.
func (c *discoverCache) last() *Discovered {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.d
}

func (c *discoverCache) store(d *Discovered, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d, c.expires = d, now.Add(d.TTL)
}

// CachedDiscovery returns the backend's last server/discover answer while its TTL lasts, else
// nil.
func (b *Backend) CachedDiscovery() *Discovered { return b.disc.get(b.env.Now()) }

// Discovery returns the backend's server/discover answer, reused until its TTL passes, else
// fetched now (hdr carries pass-through headers, trace context). A failure is logged, but for
// the backend rate limiting, which is logged once per wait. A backend rate limiting is up and
// only asks for time: its last answer, however old, is kept meanwhile, so that what it offers
// (the capabilities a listen is planned by, say) is not taken for nothing until the wait has
// passed.
func (b *Backend) Discovery(ctx context.Context, hdr http.Header) (*Discovered, error) {
	if d := b.CachedDiscovery(); d != nil {
		return d, nil
	}
	d, err := b.fetchDiscover(ctx, hdr, false)
	switch {
	case err == nil:
	case errors.Is(err, wire.ErrRateLimited): // logged once per wait (noteRateLimit)
		if d := b.disc.last(); d != nil {
			return d, nil
		}
		return nil, err
	default:
		b.env.Log.Warn("upstream server/discover failed", "upstream", b.name, "error", err.Error())
		return nil, err
	}
	b.disc.store(d, b.env.Now())
	return d, nil
}

// Discover asks the backend for server/discover now, learning its protocol era as the first
// call would; the answer is not cached. For operator tooling.
func (b *Backend) Discover(ctx context.Context) (*Discovered, error) {
	return b.fetchDiscover(ctx, nil, false)
}

// fetchDiscover calls server/discover on b; probe marks the health probe.
func (b *Backend) fetchDiscover(ctx context.Context, hdr http.Header, probe bool) (*Discovered, error) {
	if d, handled, err := b.legacyDiscover(ctx, probe); handled {
		return d, err // the era probe answered, or a legacy backend's InitializeResult did
	}
	m, err := b.RoundTrip(ctx, &Request{Method: wire.MethodDiscover, Header: hdr, Body: []byte(discoverRequest), probe: probe})
	if errors.Is(err, ErrUserTokenNeeded) {
		// A per-user backend that serves nothing without a user's token: it is up, and its
		// tools are what callers connect it for.
		return &Discovered{Caps: Caps{Tools: &ListChangedCap{}}}, nil
	}
	if err != nil {
		return nil, err
	}
	if probe && b.relearnModern(m) {
		d, _, err := b.legacyDiscover(ctx, probe)
		return d, err
	}
	if m.Error != nil {
		err := fmt.Errorf("%w: %s: server/discover answered error %d", wire.ErrBadResponse, b.name, m.Error.Code)
		b.health.down(b.env.Now(), err)
		return nil, err
	}
	return parseDiscover(b, m.Result)
}

// parseDiscover reads a DiscoverResult.
func parseDiscover(b *Backend, result json.RawMessage) (*Discovered, error) {
	var w struct {
		Capabilities Caps   `json:"capabilities"`
		Instructions string `json:"instructions"`
		TTLMs        int64  `json:"ttlMs"`
	}
	if err := json.Unmarshal(result, &w); err != nil {
		return nil, fmt.Errorf("%w: %s: server/discover result: %v", wire.ErrBadResponse, b.name, err)
	}
	ttl := min(time.Duration(max(w.TTLMs, 0))*time.Millisecond, MaxDiscoverTTL)
	return &Discovered{Caps: w.Capabilities, Instructions: keptInstructions(b, w.Instructions), TTL: ttl}, nil
}

// MaxInstructionsBytes bounds the server instructions kept of one backend. Instructions are a
// hint for a model, a few kilobytes at most; a backend's are held for as long as its discovery
// is cached, and every client's server/discover (and every pre-2026 client's initialize) is
// answered with all of them, joined and encoded anew: a backend's megabytes of instructions
// would cost megabytes per discover, counted against no budget.
const MaxInstructionsBytes = 64 << 10

// keptInstructions is what b's instructions s become: s, or nothing when s is longer than
// MaxInstructionsBytes (cut, they would say something else), which is logged.
func keptInstructions(b *Backend, s string) string {
	if len(s) <= MaxInstructionsBytes {
		return s
	}
	b.env.Log.Warn("upstream instructions left out: longer than the gateway relays",
		"upstream", b.name, "bytes", len(s), "max_bytes", MaxInstructionsBytes)
	return ""
}
