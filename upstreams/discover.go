package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// MaxDiscoverTTL caps how long a backend's server/discover answer is reused, whatever ttlMs it
// names, so a capability change reaches clients within minutes.
const MaxDiscoverTTL = 5 * time.Minute

// discoverRequest is the gateway's own server/discover: it declares no client capabilities, so
// backends answer with what they offer to anyone (docs/protocol.md §1).
const discoverRequest = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"` + ProtocolVersion + `",` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

// listChangedCap is the tools or prompts capability.
type listChangedCap struct {
	ListChanged bool `json:"listChanged"`
}

// resourcesCap is the resources capability.
type resourcesCap struct {
	Subscribe   bool `json:"subscribe"`
	ListChanged bool `json:"listChanged"`
}

// capSet is the part of a backend's ServerCapabilities the gateway merges.
type capSet struct {
	Tools       *listChangedCap `json:"tools"`
	Prompts     *listChangedCap `json:"prompts"`
	Resources   *resourcesCap   `json:"resources"`
	Completions json.RawMessage `json:"completions"`
	Logging     json.RawMessage `json:"logging"`
	// Extensions and Experimental are relayed only for the names RelayCapabilities lists.
	Extensions   map[string]json.RawMessage `json:"extensions"`
	Experimental map[string]json.RawMessage `json:"experimental"`

	// relay and the merged named capabilities, set on the merge target only.
	relay      RelayCapabilities
	extensions namedCaps
	experim    namedCaps
}

// discovered is one backend's parsed server/discover result.
type discovered struct {
	caps         capSet
	instructions string
	ttl          time.Duration
}

// discoverCache keeps a backend's last discover result until its ttl passes.
type discoverCache struct {
	mu      sync.Mutex
	d       *discovered
	expires time.Time
}

func (c *discoverCache) get(now time.Time) *discovered {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.d == nil || !now.Before(c.expires) {
		return nil
	}
	return c.d
}

func (c *discoverCache) store(d *discovered, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d, c.expires = d, now.Add(d.ttl)
}

// Discovery is the merged view of the backends for the gateway's server/discover answer.
type Discovery struct {
	// Capabilities is the merged ServerCapabilities object: tools, prompts and resources when
	// any backend has them, listChanged and subscribe when any backend has them, completions
	// and logging only when some backend declares them. Experimental and extension
	// capabilities are dropped: the gateway does not route them.
	Capabilities json.RawMessage
	// Instructions joins the backends' instructions, each introduced by its backend name.
	Instructions string
	// Each are the backends' instructions one by one, in configuration order, for an endpoint
	// that serves some backends only (a tool set).
	Each []BackendInstructions
	// TTL is the least of the backends' ttlMs (capped at MaxDiscoverTTL), zero when a backend
	// failed: a partial answer should not be cached.
	TTL time.Duration
	// Failed names the backends that did not answer; they are left out.
	Failed []string
}

// BackendInstructions are one backend's server instructions.
type BackendInstructions struct {
	// Upstream names the backend.
	Upstream string
	// Text is what it instructs, as pinning lets it through.
	Text string
}

// Capabilities merges the backends' server/discover answers, each reused until its ttlMs
// passes. hdr carries pass-through headers (trace context). It fails with ErrUnavailable only
// when no backend answered.
func (r *Registry) Capabilities(ctx context.Context, hdr http.Header) (*Discovery, error) {
	ds, errs := r.discoverAll(ctx, hdr)
	out := &Discovery{TTL: MaxDiscoverTTL}
	merged := capSet{relay: r.relay}
	var instr []string
	for i, b := range r.backends {
		d := ds[i]
		if d == nil {
			out.Failed = append(out.Failed, b.name)
			out.TTL = 0
			continue
		}
		mergeCaps(&merged, &d.caps)
		out.TTL = min(out.TTL, d.ttl)
		if s := strings.TrimSpace(r.pinnedInstructions(ctx, b, d.instructions)); s != "" {
			instr = append(instr, b.name+": "+s)
			out.Each = append(out.Each, BackendInstructions{Upstream: b.name, Text: s})
		}
	}
	if len(out.Failed) == len(r.backends) {
		return nil, fmt.Errorf("%w: no upstream answered server/discover: %w", ErrUnavailable, errors.Join(errs...))
	}
	out.Instructions = strings.Join(instr, "\n\n")
	out.Capabilities = renderCaps(&merged)
	return out, nil
}

// discoverAll returns each backend's discover result (cached or fetched), nil for failures.
func (r *Registry) discoverAll(ctx context.Context, hdr http.Header) ([]*discovered, []error) {
	ds := make([]*discovered, len(r.backends))
	errs := make([]error, len(r.backends))
	var wg sync.WaitGroup
	for i, b := range r.backends {
		if ds[i] = b.disc.get(r.now()); ds[i] != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := r.fetchDiscover(ctx, b, hdr, false)
			if err != nil {
				r.log.Warn("upstream server/discover failed", "upstream", b.name, "error", err.Error())
				errs[i] = err
				return
			}
			b.disc.store(d, r.now())
			ds[i] = d
		}()
	}
	wg.Wait()
	return ds, errs
}

// fetchDiscover calls server/discover on b.
func (r *Registry) fetchDiscover(ctx context.Context, b *backend, hdr http.Header, probe bool) (*discovered, error) {
	if d, handled, err := r.legacyDiscover(ctx, b, probe); handled {
		return d, err // the era probe answered, or a legacy backend's InitializeResult did
	}
	m, err := r.roundTrip(ctx, b, &outgoing{method: MethodDiscover, pass: hdr, body: []byte(discoverRequest), probe: probe})
	if err != nil {
		return nil, err
	}
	if probe && r.relearnModern(b, m) {
		d, _, err := r.legacyDiscover(ctx, b, probe)
		return d, err
	}
	if m.Error != nil {
		err := fmt.Errorf("%w: %s: server/discover answered error %d", ErrBadResponse, b.name, m.Error.Code)
		b.health.down(r.now(), err)
		return nil, err
	}
	return parseDiscover(b, m.Result)
}

// parseDiscover reads a DiscoverResult.
func parseDiscover(b *backend, result json.RawMessage) (*discovered, error) {
	var w struct {
		Capabilities capSet `json:"capabilities"`
		Instructions string `json:"instructions"`
		TTLMs        int64  `json:"ttlMs"`
	}
	if err := json.Unmarshal(result, &w); err != nil {
		return nil, fmt.Errorf("%w: %s: server/discover result: %v", ErrBadResponse, b.name, err)
	}
	ttl := min(time.Duration(max(w.TTLMs, 0))*time.Millisecond, MaxDiscoverTTL)
	return &discovered{caps: w.Capabilities, instructions: w.Instructions, ttl: ttl}, nil
}

func mergeCaps(dst, src *capSet) {
	if src.Tools != nil {
		dst.Tools = &listChangedCap{ListChanged: src.Tools.ListChanged || (dst.Tools != nil && dst.Tools.ListChanged)}
	}
	if src.Prompts != nil {
		dst.Prompts = &listChangedCap{ListChanged: src.Prompts.ListChanged || (dst.Prompts != nil && dst.Prompts.ListChanged)}
	}
	if src.Resources != nil {
		merged := *src.Resources
		if dst.Resources != nil {
			merged.Subscribe = merged.Subscribe || dst.Resources.Subscribe
			merged.ListChanged = merged.ListChanged || dst.Resources.ListChanged
		}
		dst.Resources = &merged
	}
	if src.Completions != nil {
		dst.Completions = json.RawMessage("{}")
	}
	if src.Logging != nil {
		dst.Logging = json.RawMessage("{}")
	}
	dst.extensions.add(dst.relay.Extensions, src.Extensions)
	dst.experim.add(dst.relay.Experimental, src.Experimental)
}

// renderCaps writes the merged capabilities, naming only flags that are true.
func renderCaps(c *capSet) json.RawMessage {
	var parts []string
	flag := func(name string, on bool) string {
		if on {
			return `"` + name + `":true`
		}
		return ""
	}
	obj := func(flags ...string) string {
		var set []string
		for _, f := range flags {
			if f != "" {
				set = append(set, f)
			}
		}
		return "{" + strings.Join(set, ",") + "}"
	}
	if c.Tools != nil {
		parts = append(parts, `"tools":`+obj(flag("listChanged", c.Tools.ListChanged)))
	}
	if c.Prompts != nil {
		parts = append(parts, `"prompts":`+obj(flag("listChanged", c.Prompts.ListChanged)))
	}
	if c.Resources != nil {
		parts = append(parts, `"resources":`+obj(flag("subscribe", c.Resources.Subscribe),
			flag("listChanged", c.Resources.ListChanged)))
	}
	if c.Completions != nil {
		parts = append(parts, `"completions":{}`)
	}
	if c.Logging != nil {
		parts = append(parts, `"logging":{}`)
	}
	for _, p := range []string{c.extensions.render("extensions"), c.experim.render("experimental")} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return json.RawMessage("{" + strings.Join(parts, ",") + "}")
}
