package catalog

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Tool-definition pinning on the list path (docs/pinning.md). Each tools, prompts and resource
// templates list fetched from a backend is checked against the pins once, when it arrives:
// every item is fingerprinted and classified, blocked items are dropped from the list before it
// is cached, and the verdicts are kept with the list (and in a small index, as for the tools'
// header bindings) so that a call looks its item's verdict up in the list the caller was shown,
// or in a newer one: a list_changed or the list's expiry moves both on together.

// pinKinds maps a list (listSpec.index) to the kind its items are pinned as. Of resources/list
// only MCP Apps' UI resources (ui:// URIs, addPinDef) are pinned: the host builds an app's
// sandbox from their _meta.ui; other resources are data, not instructions.
var pinKinds = map[byte]pins.Kind{1: pins.KindTool, 2: pins.KindPrompt, 3: pins.KindUIResource, 4: pins.KindResourceTemplate}

// pinVerdictBytes estimates what one item's pin verdict retains in a cached list: its map
// entry and its current fingerprint (the pinned one is shared with the lock file).
const pinVerdictBytes = 160

// collectPins makes p gather its items' definitions for the pin check, when b is pinned, or
// when b's pinning is off and its tools and prompts are judged for shadowing alone
// (pins.Guard.JudgesShadows).
func (c *Catalog) collectPins(b *backend.Backend, spec listSpec, p *part) {
	kind, ok := pinKinds[spec.index]
	switch {
	case !ok:
	case c.pins.Enabled(b.Name()):
		p.pinKind = kind
	case pins.ShadowKind(kind) && c.pins.JudgesShadows(b.Name()):
		p.pinKind, p.shadowsOnly = kind, true
	}
}

// addPinDef fingerprints one listed item, as the backend sent it (elem), for the pin check.
func (p *part) addPinDef(name string, elem []byte) {
	if p.pinKind == "" || (p.pinKind == pins.KindUIResource && !names.IsUIResource(name)) {
		return
	}
	d, err := pins.FromJSON(p.pinKind, elem)
	p.pinDefs = append(p.pinDefs, pins.Listed{Key: name, Def: d, Err: err})
}

// served reduces a pinned item (raw, as renamed for the client) to the members its pin covers
// (pins.Served): whatever the pin does not cover never reaches a client. Items that are not
// pinned (those judged for shadowing alone included) are served as they are.
func (p *part) served(name string, raw []byte) ([]byte, error) {
	if p.pinKind == "" || p.shadowsOnly || (p.pinKind == pins.KindUIResource && !names.IsUIResource(name)) {
		return raw, nil
	}
	return pins.Served(p.pinKind, raw)
}

// unverifiedRetry is how long the verdicts of a list holding items whose pins could not be read
// (the store did not answer) are used before the list is fetched and judged again.
const unverifiedRetry = time.Second

// checkPins compares a complete list with the pins, drops the blocked items and records the
// verdicts on p and in the index the call path reads. Items whose pins cannot be read (a store
// that does not answer in tofu mode) are dropped like blocked ones, and the list is then not
// cached, so that they come back as soon as they can be verified; the other items are served.
func (c *Catalog) checkPins(ctx context.Context, b *backend.Backend, spec listSpec, q *listQuery, p *part, gen uint64) {
	if p.pinKind == "" {
		return
	}
	verdicts := c.pins.CheckList(ctx, b.Name(), p.pinKind, p.pinDefs)
	p.pinDefs = nil
	kept := p.items[:0]
	unverified := false
	for _, it := range p.items {
		v := verdicts[it.target.Name]
		unverified = unverified || v.Unverified()
		if !v.Blocked() {
			it.shadows = v.Classes.Has(pins.ClassShadows)
			kept = append(kept, it)
		}
	}
	clear(p.items[len(kept):])
	p.items = kept
	p.pins = verdicts
	key := partKey{upstream: b.Name(), list: spec.index, version: orVersion(q.version)}
	if p.private {
		key.caller = privateKey(b, q.cacheKey, q.subject, q.subjectKey)
	}
	now := c.now()
	expires := now.Add(max(time.Duration(p.ttlMs)*time.Millisecond, minHeaderIndexTTL))
	if unverified {
		p.ttlMs = 0
		expires = now.Add(unverifiedRetry)
	}
	c.pinViews.put(key, shareOf(key, q.cacheKey), &pinView{verdicts: verdicts, gen: gen, private: p.private, expires: expires})
}

// uiResourcePinVerdict judges a read of the UI resource uri on its pin: the verdict of the
// resources list's entry (as PinVerdict judges a tool), or removed when it is pinned and no
// longer listed. judged is false for a UI resource neither listed nor pinned: a server may leave
// UI-only resources out of resources/list (SEP-1865), and such a read is judged on the resource
// templates, as any other.
func (c *Catalog) uiResourcePinVerdict(ctx context.Context, q *PinQuery, b *backend.Backend, uri string) (v pins.Verdict, judged bool, err error) {
	spec, _ := listSpecFor(wire.MethodResourcesList)
	verdicts, err := c.pinVerdicts(ctx, q, b, spec)
	if err != nil {
		return pins.Verdict{}, true, err
	}
	if v, ok := verdicts[uri]; ok {
		return v, true, nil
	}
	if c.pins.Pinned(b.Name(), pins.KindUIResource, uri) == nil {
		return pins.Verdict{}, false, nil
	}
	return c.pins.Unlisted(b.Name(), pins.KindUIResource, uri), true, nil
}

func orVersion(v string) string {
	if v == "" {
		return backend.ProtocolVersion
	}
	return v
}

// PinQuery is what looking up a call's pin verdict takes, as in ListRequest.
type PinQuery struct {
	// ProtocolVersion is sent as MCP-Protocol-Version; empty means backend.ProtocolVersion.
	ProtocolVersion string
	// Header holds pass-through headers (trace context, X-Request-Id).
	Header http.Header
	// CacheKey identifies the caller's authorization context, as ListRequest.CacheKey.
	CacheKey string
	// SubjectToken is the caller's token for a backend that exchanges it, and SubjectKey its
	// key, as in ListRequest.
	SubjectToken, SubjectKey string
}

// PinsEnabled reports whether upstream's definitions are pinned.
func (c *Catalog) PinsEnabled(upstream string) bool { return c.pins.Enabled(upstream) }

// UIReadPin returns what the content items of a read of upstream's UI resource uri (backend-side)
// are held to: the _meta.ui it is pinned with; nil when it is not pinned with one.
func (c *Catalog) UIReadPin(upstream, uri string) *pins.UIReadPin {
	if !names.IsUIResource(uri) {
		return nil
	}
	return c.pins.UIReadPin(upstream, uri)
}

// PinVerdict returns the pin verdict of the item a tools/call or prompts/get (method) names,
// or of the templates a resources/read's URI could come from (TemplatePinVerdict):
// from the newest list of its backend this replica fetched for the caller (invalidated by
// list_changed, at most the list's ttlMs or minHeaderIndexTTL old), else from a list fetched
// now. An item the list does not show is an unknown name (names.ErrUnknownName); only when no
// list could be judged (the backend lists nothing to this caller) is it judged as unlisted:
// removed when pinned, new when not. Other methods, and backends that are not pinned, get the zero verdict.
func (c *Catalog) PinVerdict(ctx context.Context, q *PinQuery, method string, target names.Target) (pins.Verdict, error) {
	shadowsOnly := !c.pins.Enabled(target.Upstream)
	if shadowsOnly && ((method != wire.MethodToolsCall && method != wire.MethodPromptsGet) || !c.pins.JudgesShadows(target.Upstream)) {
		return pins.Verdict{}, nil
	}
	var listMethod string
	switch method {
	case wire.MethodToolsCall:
		listMethod = wire.MethodToolsList
	case wire.MethodPromptsGet:
		listMethod = wire.MethodPromptsList
	case wire.MethodResourcesRead:
		v, _, err := c.TemplatePinVerdict(ctx, q, target)
		return v, err
	default:
		return pins.Verdict{}, nil
	}
	b, err := c.backend(target.Upstream)
	if err != nil {
		return pins.Verdict{}, err
	}
	spec, _ := listSpecFor(listMethod)
	verdicts, err := c.pinVerdicts(ctx, q, b, spec)
	if err != nil {
		return pins.Verdict{}, err
	}
	if v, ok := verdicts[target.Name]; ok {
		return v, nil
	}
	if verdicts != nil {
		// A list was judged and does not show the name: an unknown name, as it is with pinning
		// off (the gateway forwards only listed names), not drift.
		return pins.Verdict{}, names.ErrUnknownName
	}
	if shadowsOnly {
		return pins.Verdict{}, nil // nothing listed to judge, and nothing of this backend pinned
	}
	return c.pins.Unlisted(b.Name(), pinKinds[spec.index], target.Name), nil
}

// TemplatePinVerdict returns the pin verdict that governs a resources/read of target (a
// backend-side URI in normal form), and the backend-side template it comes from ("" when
// none). The URI is judged against every resource template of the backend's list (as in
// PinVerdict: the one the caller was shown, or a newer one) that it could be an expansion of,
// reading each template expression as any text (resuri.MayExpand), blocked templates included:
// the strongest action among them wins, so a read is refused when any template that might
// serve the URI is blocked, and confirmed when any needs confirmation. A URI that no listed
// template could produce is a plain resource: not pinned, the zero verdict.
//
// Matching generously errs on the safe side: a backend's own matcher may pick one template
// where several match, and the gateway cannot know which; a plain resource whose URI a
// drifted template could also produce shares that template's verdict.
//
// A UI resource (ui://) of the backend's resources list is judged on its own pin first
// (uiResourcePinVerdict).
func (c *Catalog) TemplatePinVerdict(ctx context.Context, q *PinQuery, target names.Target) (pins.Verdict, string, error) {
	if !c.pins.Enabled(target.Upstream) {
		return pins.Verdict{}, "", nil
	}
	b, err := c.backend(target.Upstream)
	if err != nil {
		return pins.Verdict{}, "", err
	}
	if names.IsUIResource(target.Name) {
		v, judged, err := c.uiResourcePinVerdict(ctx, q, b, target.Name)
		if judged || err != nil {
			return v, "", err
		}
	}
	spec, _ := listSpecFor(wire.MethodResourceTemplates)
	verdicts, err := c.pinVerdicts(ctx, q, b, spec)
	if err != nil {
		return pins.Verdict{}, "", err
	}
	var out pins.Verdict
	var from string
	for tmpl, v := range verdicts {
		if v.Action == "" || !resuri.MayExpand(tmpl, target.Name) {
			continue
		}
		// The strongest action wins; between equals, the least template, so the answer
		// does not depend on map order.
		if from == "" || v.Action.Stronger(out.Action) || (v.Action == out.Action && tmpl < from) {
			out, from = v, tmpl
		}
	}
	return out, from, nil
}

// pinVerdicts returns the verdicts of the newest list spec of b this replica fetched for the
// caller (invalidated by list_changed, at most the list's ttlMs or minHeaderIndexTTL old), else
// of one fetched now.
func (c *Catalog) pinVerdicts(ctx context.Context, q *PinQuery, b *backend.Backend, spec listSpec) (map[string]pins.Verdict, error) {
	pub := partKey{upstream: b.Name(), list: spec.index, version: orVersion(q.ProtocolVersion)}
	own := pub
	own.caller = privateKey(b, q.CacheKey, q.SubjectToken, q.SubjectKey)
	gen := c.cache.generation(pub)
	if verdicts, found := c.pinViews.recent(pub, own, gen, c.now()); found {
		return verdicts, nil
	}
	p := c.cache.get(pub)
	if p == nil && q.CacheKey != "" {
		p = c.cache.get(own)
	}
	if p == nil {
		lq := &listQuery{meta: c.OwnListMeta(), version: pub.version, hdr: q.Header, cacheKey: q.CacheKey, subject: q.SubjectToken, subjectKey: q.SubjectKey}
		var err error
		if p, err = c.missedPart(ctx, b, spec, lq); err != nil {
			return nil, err
		}
	}
	return p.pins, nil
}

// pinViews holds the verdicts of the newest lists fetched, per backend list, protocol version
// and, for private lists, caller: bounded as the header-binding indexes are, in number and
// estimated bytes (pinVerdictBytes an item), each caller's private ones by its share (share.go).
type pinViews struct {
	mu      sync.Mutex
	entries *sharelru.Cache[partKey, *pinView]
}

func (v *pinViews) init(maxEntries int, maxBytes int64, onEvict func(sharelru.Cause)) {
	v.entries = newShared[partKey, *pinView](maxEntries, maxBytes, onEvict)
}

// pinView is the verdicts of one fetched list.
type pinView struct {
	verdicts map[string]pins.Verdict
	gen      uint64
	private  bool
	expires  time.Time
}

// put keeps e as k's verdicts, counted against share's caller ("" for a public list).
func (v *pinViews) put(k partKey, share string, e *pinView) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.entries.Put(k, e, share, int64(entryOverhead)+int64(len(e.verdicts))*pinVerdictBytes)
}

// recent returns the verdicts of a young list that no list_changed has invalidated since,
// preferring the caller's own, as toolHeaderIndexes.recent.
func (v *pinViews) recent(pub, own partKey, gen uint64, now time.Time) (map[string]pins.Verdict, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fresh := func(e *pinView) bool { return e != nil && e.gen == gen && now.Before(e.expires) }
	if e, _ := v.entries.Get(own); fresh(e) && (e.private || own.caller == "") {
		return e.verdicts, true
	}
	if e, _ := v.entries.Get(pub); fresh(e) && !e.private {
		return e.verdicts, true
	}
	return nil, false
}
