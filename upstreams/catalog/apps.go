package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// MCP Apps (SEP-1865, ext-apps specification 2026-01-26). A tool links to its UI resource
// through _meta.ui.resourceUri (names/ui.go rewrites the link) and says who may call it through
// _meta.ui.visibility: "model" (the agent's tool list), "app" (the app of the same server), both
// by default. The gateway reads both from each backend's tools/list as it arrives:
//
//   - with Options.Apps, a tool whose visibility leaves out "model" is kept out of every list a
//     model reads (tools/list, tool search, tool sets), and a call that names it by its
//     namespaced name is refused (AppTool): the model path never reaches it;
//   - a call from inside an app names the backend's own tool, the name the app's HTML was
//     written with. No member of the request says a call comes from an app, or from which
//     backend's app (the host forwards the app's tools/call as the app wrote it), so
//     ResolveAppName takes the one reading that is safe: the name of a tool that an app may
//     call ("app" in its visibility) on a backend that serves apps (lists at least one tool
//     with a UI resource), when exactly one backend has it.

// appTool is what a listed tool's _meta.ui says.
type appTool struct {
	ui       bool // links a UI resource (_meta.ui.resourceUri or the flat ui/resourceUri)
	noModel  bool // visibility is present and leaves out "model"
	noApp    bool // visibility is present and leaves out "app"
	declared bool // _meta.ui (or the flat key) is present at all
}

// Member names readAppTool reads, compared with jsonrpc.FoldEqual.
var (
	keyMeta        = []byte("_meta")
	keyUI          = []byte("ui")
	keyFlatURI     = []byte("ui/resourceUri")
	keyResourceURI = []byte("resourceUri")
	keyVisibility  = []byte("visibility")
)

// readAppTool reads a tool definition's _meta.ui (names compared with their escapes decoded).
// Member names are compared as the widest client decoder reads them (jsonrpc.FoldEqual): a host
// that decodes into a Go struct with encoding/json reads "_META", "UI" or "Visibility" as the
// member of that name, and the last of several, where a case-sensitive host reads only the exact
// spelling. Every member that some decoder reads as _meta, ui, visibility or a resourceUri is
// read, and the tool is held to the strictest of those readings: a visibility that any of them
// leaves "model" or "app" out of leaves it out, so no host is shown, or lets an app call, a tool
// that another reading of the same definition withholds. A link read in any spelling makes the
// tool an app's (names.RewriteUIMeta namespaces every such spelling).
func readAppTool(tool []byte) appTool {
	var a appTool
	if !names.MayHaveUI(tool) {
		return a // most tools: no parsing
	}
	_ = jsonrpc.Members(tool, func(k, meta []byte) error {
		if !jsonrpc.FoldEqual(k, keyMeta) || meta[0] != '{' {
			return nil
		}
		return jsonrpc.Members(meta, func(k, v []byte) error {
			switch {
			case jsonrpc.FoldEqual(k, keyFlatURI):
				a.declared = true
				_, isString := wire.JSONString(v)
				a.ui = a.ui || isString
			case jsonrpc.FoldEqual(k, keyUI) && v[0] == '{':
				a.declared = true
				a.readUI(v)
			}
			return nil
		})
	})
	return a
}

// readUI reads a _meta.ui object of a tool, into what earlier readings of the tool found.
func (a *appTool) readUI(ui []byte) {
	_ = jsonrpc.Members(ui, func(k, v []byte) error {
		switch {
		case jsonrpc.FoldEqual(k, keyResourceURI):
			_, isString := wire.JSONString(v)
			a.ui = a.ui || isString
		case jsonrpc.FoldEqual(k, keyVisibility):
			// Absent means ["model","app"]. Present, only the values it names: a value that is
			// not an array of strings names neither, the reading that shows the tool to nobody.
			model, app := false, false
			if v[0] == '[' {
				_ = wire.ForEachElem(v, func(e []byte, _ int) error {
					s, _ := wire.JSONString(e)
					model, app = model || s == "model", app || s == "app"
					return nil
				})
			}
			a.noModel, a.noApp = a.noModel || !model, a.noApp || !app
		}
		return nil
	})
}

// appIndex is what one backend's tools list says of its apps: nil when no tool of it links a UI
// resource (the backend serves no app, so no app of it can call anything).
type appIndex struct {
	tools map[string]appTool // every listed tool, by backend-side name
}

// buildAppIndex indexes a tools list's _meta.ui, nil when no tool links a UI resource.
func buildAppIndex(items []listItem) *appIndex {
	serves := false
	for i := range items {
		serves = serves || items[i].app.ui
	}
	if !serves {
		return nil
	}
	ix := &appIndex{tools: make(map[string]appTool, len(items))}
	for i := range items {
		ix.tools[items[i].target.Name] = items[i].app
	}
	return ix
}

// ModelHidden reports whether target's tool leaves "model" out of its visibility, from the index
// of its backend's newest tools list held or, with q.Fetch, of one fetched now (as ToolHeaders).
// Without q.Fetch and no list held, false.
func (c *Catalog) ModelHidden(ctx context.Context, q *ToolHeaderQuery, target names.Target) (bool, error) {
	b, err := c.backend(target.Upstream)
	if err != nil {
		return false, err
	}
	idx, err := c.toolIndex(ctx, q, b)
	if err != nil || idx == nil || idx.apps == nil {
		return false, err
	}
	return idx.apps.tools[target.Name].noModel, nil
}

// ErrAmbiguousAppName: a tools/call named a backend's own tool (a call from inside an MCP App)
// that more than one backend serving apps has; the gateway cannot tell whose app called.
var ErrAmbiguousAppName = errors.New("upstreams: tool name is ambiguous between backends")

// ResolveAppName resolves the backend's own name of a tool, as an MCP App calls it: the one
// backend serving apps (a tool of its list links a UI resource) whose list shows a tool of that
// name that an app may call ("app" in its visibility, the default), among the backends on which
// usable (nil: every one) says the caller could call a tool of that name. A backend usable
// leaves out is neither asked for its list nor counted: the caller could not call its tool, so
// it cannot make the name ambiguous, and whether it has one is not the caller's to learn. No such
// backend is names.ErrUnknownName; more than one is ErrAmbiguousAppName, naming them. Each
// backend's list is the one held or one fetched now; a backend whose list cannot be had makes
// the answer unknown, and its error is returned: a call must not reach one backend because
// another that may have the same tool did not answer.
func (c *Catalog) ResolveAppName(ctx context.Context, q *ToolHeaderQuery, name string, usable func(names.Target) bool) (names.Target, error) {
	idx := make([]*headerIndex, len(c.backends))
	errs := make([]error, len(c.backends))
	var wg sync.WaitGroup
	fq := *q
	fq.Fetch = true
	for i, b := range c.backends {
		if usable != nil && !usable(names.Target{Upstream: b.Name(), Name: name}) {
			continue
		}
		wg.Go(func() { idx[i], errs[i] = c.appToolIndex(ctx, &fq, b) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return names.Target{}, err
	}
	var found []string
	for i, b := range c.backends {
		if idx[i] == nil || idx[i].apps == nil {
			continue
		}
		if a, ok := idx[i].apps.tools[name]; ok && !a.noApp {
			found = append(found, b.Name())
		}
	}
	switch len(found) {
	case 0:
		return names.Target{}, fmt.Errorf("%w: no backend serving apps has this tool", names.ErrUnknownName)
	case 1:
		return names.Target{Upstream: found[0], Name: name}, nil
	}
	return names.Target{}, fmt.Errorf("%w: %d backends have it: %v", ErrAmbiguousAppName, len(found), found)
}

// appListRetry is how long a backend whose tools list could not be had for resolving an app's
// tool name is not asked for it again, for that caller and version: every such call consults
// every backend, so without it each call naming no namespaced tool would send a list request to
// every backend that is failing. The calls in between fail closed, with the error remembered; a
// list_changed from the backend ends the wait.
const appListRetry = 5 * time.Second

// listFailures remembers the tools lists that could not be had for ResolveAppName, bounded
// like the header-binding indexes, each caller's by its share (share.go): every entry is a
// caller's own (its token's, for a token-exchange backend), so without a share one caller
// failing through many tokens or versions would push out the failures that spare the backend
// everyone else's list requests.
type listFailures struct {
	mu      sync.Mutex
	entries *sharelru.Cache[partKey, listFailure]
}

func (f *listFailures) init(maxEntries int, onEvict func(sharelru.Cause)) {
	f.entries = newShared[partKey, listFailure](maxEntries, 0, onEvict)
}

// listFailure is one remembered failure: its error, the list's invalidation count when it was
// asked for, and until when it stands.
type listFailure struct {
	err   error
	gen   uint64
	until time.Time
}

// appToolIndex is toolIndex for ResolveAppName: a failure to have b's list within
// appListRetry is answered again without asking b.
func (c *Catalog) appToolIndex(ctx context.Context, q *ToolHeaderQuery, b *backend.Backend) (*headerIndex, error) {
	spec, _ := listSpecFor(wire.MethodToolsList)
	key := partKey{upstream: b.Name(), list: spec.index, version: orVersion(q.ProtocolVersion), caller: privateKey(b, q.CacheKey, q.SubjectToken, q.SubjectKey)}
	gen := c.cache.generation(partKey{upstream: key.upstream, list: key.list, version: key.version})
	if err := c.appFailures.get(key, gen, c.now()); err != nil {
		return nil, err
	}
	idx, err := c.toolIndex(ctx, q, b)
	if err != nil && !isContextErr(err) && ctx.Err() == nil {
		c.appFailures.put(key, q.CacheKey, listFailure{err: err, gen: gen, until: c.now().Add(appListRetry)})
	}
	return idx, err
}

func (f *listFailures) get(key partKey, gen uint64, now time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.entries.Get(key); ok && e.gen == gen && now.Before(e.until) {
		return e.err
	}
	return nil
}

// put remembers e for key, counted against share's caller (its identity; "" without
// authentication, where every caller is one).
func (f *listFailures) put(key partKey, share string, e listFailure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries.Put(key, e, share, 0)
}

// OwnListMeta is the _meta of the lists the gateway requests for itself (its indexes, pin
// verdicts, and RawList for operator tooling): the protocol version and no client capabilities
// (headerMeta), but the MCP Apps extension when apps are on (appsHeaderMeta), so that a backend
// offering UI tools only to hosts that support apps shows them to the routing and to pinning.
func (c *Catalog) OwnListMeta() json.RawMessage {
	if c.apps {
		return appsHeaderMeta
	}
	return headerMeta
}

// toolIndex returns the index of b's tools list for q's caller and version: the newest one
// built, else one built from the cached list, else, with q.Fetch, from a list fetched now; nil
// without q.Fetch when no list is held.
func (c *Catalog) toolIndex(ctx context.Context, q *ToolHeaderQuery, b *backend.Backend) (*headerIndex, error) {
	spec, _ := listSpecFor(wire.MethodToolsList)
	return c.listIndex(ctx, q, b, spec)
}

// listIndex is toolIndex for the list spec (tools or prompts).
func (c *Catalog) listIndex(ctx context.Context, q *ToolHeaderQuery, b *backend.Backend, spec listSpec) (*headerIndex, error) {
	version := orVersion(q.ProtocolVersion)
	pub := partKey{upstream: b.Name(), list: spec.index, version: version}
	own := pub
	own.caller = privateKey(b, q.CacheKey, q.SubjectToken, q.SubjectKey)
	gen := c.cache.generation(pub)
	now := c.now()
	// Every tools list fetched from the backend is indexed as it arrives (learnToolHeaders), so
	// the index is at least as new as the cached list: it is consulted first, which costs no
	// copy of the cache entry.
	if idx := c.toolHeaders.recent(pub, own, gen, now); idx != nil {
		return idx, nil
	}
	p := c.cache.get(pub)
	if p == nil && q.CacheKey != "" {
		p = c.cache.get(own)
	}
	if p == nil {
		if !q.Fetch {
			return nil, nil
		}
		lq := &listQuery{meta: c.OwnListMeta(), version: version, hdr: q.Header, cacheKey: q.CacheKey, subject: q.SubjectToken, subjectKey: q.SubjectKey}
		var err error
		if p, err = c.missedPart(ctx, b, spec, lq); err != nil {
			return nil, err
		}
	}
	key := pub
	if p.private {
		key = own
	}
	return c.toolHeaders.forPart(key, q.CacheKey, p, gen, now), nil
}
