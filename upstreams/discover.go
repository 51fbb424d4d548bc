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

	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// mergedCaps is the merge of the backends' capabilities, with the extensions and experimental
// capabilities RelayCapabilities names.
type mergedCaps struct {
	backend.Caps
	relay      RelayCapabilities
	extensions namedCaps
	experim    namedCaps
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
	merged := mergedCaps{relay: r.relay}
	var instr []string
	for i, b := range r.backends {
		d := ds[i]
		if d == nil {
			out.Failed = append(out.Failed, b.Name())
			out.TTL = 0
			continue
		}
		mergeCaps(&merged, &d.Caps)
		out.TTL = min(out.TTL, d.TTL)
		if s := strings.TrimSpace(r.catalog.Instructions(ctx, b.Name(), d.Instructions)); s != "" {
			instr = append(instr, b.Name()+": "+s)
			out.Each = append(out.Each, BackendInstructions{Upstream: b.Name(), Text: s})
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
func (r *Registry) discoverAll(ctx context.Context, hdr http.Header) ([]*backend.Discovered, []error) {
	ds := make([]*backend.Discovered, len(r.backends))
	errs := make([]error, len(r.backends))
	var wg sync.WaitGroup
	for i, b := range r.backends {
		// Cached answers are taken here; only backends to ask get a goroutine.
		if ds[i] = b.CachedDiscovery(); ds[i] != nil {
			continue
		}
		wg.Go(func() { ds[i], errs[i] = b.Discovery(ctx, hdr) })
	}
	wg.Wait()
	return ds, errs
}

func mergeCaps(dst *mergedCaps, src *backend.Caps) {
	if src.Tools != nil {
		dst.Tools = &backend.ListChangedCap{ListChanged: src.Tools.ListChanged || (dst.Tools != nil && dst.Tools.ListChanged)}
	}
	if src.Prompts != nil {
		dst.Prompts = &backend.ListChangedCap{ListChanged: src.Prompts.ListChanged || (dst.Prompts != nil && dst.Prompts.ListChanged)}
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
func renderCaps(c *mergedCaps) json.RawMessage {
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
