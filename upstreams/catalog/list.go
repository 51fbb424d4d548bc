package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// maxListPages bounds how many pages the gateway follows per backend and list.
const maxListPages = 100

// maxBackendCursorBytes bounds a backend's nextCursor, as the JSON string it wrote (quotes and
// escapes counted), which the gateway keeps until it asks for the next page and then sends
// back. Cursors are opaque (https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination),
// and real servers' are short: an offset or the last item's name, encoded. Without a bound one
// could be as large as a whole response, copied and sent again, counted against nothing. A
// longer one fails the backend's list as a bad response that names the bound; it is never cut,
// since a cut cursor is another cursor.
const maxBackendCursorBytes = 4096

// maxListTTLMs caps the ttlMs a backend gives its list (a day): the list is cached and reported
// to clients for at most that long. Without a cap a ttlMs past about 9.2e12 wrapped the cache's
// expiry into the past (the list was never cached) and was passed on to clients as it was.
const maxListTTLMs = 24 * 60 * 60 * 1000

// pageTailRoom is what a page needs besides its items: the nextCursor (a sealed token of a
// hundred-odd characters), ttlMs, cacheScope and resultType. An estimate for sizing the buffer
// once; append grows it if a sealer's tokens are longer.
const pageTailRoom = 384

// listSpec says where a list method keeps its items and their names.
type listSpec struct {
	index  byte   // stable small number, stored in cursors
	method string // e.g. tools/list
	key    string // result member holding the array
	field  string // item member holding the name or URI
	kind   names.Kind
}

// listSpecFor returns the spec of a list method (docs/protocol.md §5.1: the four arrays).
func listSpecFor(method string) (listSpec, bool) {
	switch method {
	case wire.MethodToolsList:
		return listSpec{1, method, "tools", "name", names.KindTool}, true
	case wire.MethodPromptsList:
		return listSpec{2, method, "prompts", "name", names.KindPrompt}, true
	case wire.MethodResourcesList:
		return listSpec{3, method, "resources", "uri", names.KindResource}, true
	case wire.MethodResourceTemplates:
		return listSpec{4, method, "resourceTemplates", "uriTemplate", names.KindResource}, true
	}
	return listSpec{}, false
}

// ListRequest is one client list request.
type ListRequest struct {
	// Method is tools/list, prompts/list, resources/list or resources/templates/list.
	Method string
	// Params are the client's raw params: its _meta goes to every backend, its cursor (a
	// gateway cursor) selects the page.
	Params json.RawMessage
	// Visible filters items by their backend-side identity; nil shows everything.
	Visible func(names.Kind, names.Target) bool
	// Discoverable, when set, lists the items Visible leaves out for which it returns scopes
	// (the caller could call them with more scopes, and policy opts in to saying so), each
	// with those scopes under RequiredScopesMeta in its _meta. Nil, or no scopes: left out.
	Discoverable func(names.Kind, names.Target) []string
	// Private forces cacheScope "private": set it when Visible or Discoverable depends on
	// the caller.
	Private bool
	// Header holds pass-through headers (trace context, X-Request-Id).
	Header http.Header
	// CacheKey identifies the caller's authorization context: its caller key (callerkey.Of).
	// Backend lists marked private are cached only under it; empty: private lists are not
	// cached at all. Public lists are shared whatever it is. A token-exchange backend reads
	// the issuer from it (auth.subjectIssuers): without one, it lists nothing to the caller.
	CacheKey string
	// SubjectToken is the caller's verified bearer token. Fill it only when a backend is
	// configured for token exchange: it is exchanged, never sent to a backend itself.
	SubjectToken string
	// SubjectKey is backend.SubjectKey(SubjectToken) when the caller computed it once for its
	// request; "" has it computed where needed.
	SubjectKey string
	// View names the endpoint (a tool set's path) the list is served on, "" for the default
	// one. It is bound into the cursor's digest, so a cursor cut on one endpoint is refused on
	// another even when both show the same items.
	View string
	// Reaches, when set, says which backends the caller may see anything of (the endpoint's
	// set, the caller's policy): a backend that acts as each caller (per-user OAuth with the
	// caller's own account, token exchange with the caller's token) is not asked for a caller
	// it is false for, so no token of that caller is looked up, exchanged, refreshed, sent
	// there or kept in use by lists of items the caller would not be shown. Nil asks every
	// backend.
	Reaches func(upstream string) bool
}

// listQuery is what a backend list request carries from the client's ListRequest.
type listQuery struct {
	meta     json.RawMessage
	version  string
	hdr      http.Header
	cacheKey string
	// subject is the caller's token for the backends that exchange it; subjectKey its
	// backend.SubjectKey, or "" to have it computed.
	subject, subjectKey string
	// reaches is ListRequest.Reaches.
	reaches func(upstream string) bool
}

// unreached reports whether b is a backend acting as each caller that q's caller may see
// nothing of (ListRequest.Reaches): it is not asked for that caller.
func (q *listQuery) unreached(b *backend.Backend) bool {
	return q.reaches != nil && backend.AnswersAsCaller(b) && !q.reaches(b.Name())
}

// listItem is one item of a merged list, renamed to its namespaced form.
type listItem struct {
	target names.Target
	raw    []byte
	// sum is the start of raw's SHA-256, taken once when the backend's list is read, so that
	// the digest binding a cursor to a caller's view hashes 16 bytes per item, not the item.
	sum [itemSumLen]byte
	// shadows is set when pinning flagged the item as a near duplicate of another backend's
	// tool and the configured action still lists it (pins.go).
	shadows bool
	// app is what a tool's _meta.ui says (apps.go).
	app appTool
}

// itemSumLen is the length of listItem.sum.
const itemSumLen = 16

func newListItem(target names.Target, raw []byte) listItem {
	it := listItem{target: target, raw: raw}
	full := sha256.Sum256(raw)
	copy(it.sum[:], full[:])
	return it
}

// merged is the whole merged list before filtering and paging: each answering backend's items
// in configuration order, left in their (cached) parts rather than copied into one slice, which
// for 2,000 items cost more than the rest of a cached list request. It does not depend on the
// caller beyond the _meta sent to backends.
type merged struct {
	parts   [][]listItem
	ttlMs   int64
	private bool
	// modelOnly leaves out the tools whose visibility leaves out "model" (Options.Apps).
	modelOnly bool
}

// each calls fn with every item visible allows (nil: every item), in order.
func (m *merged) each(kind names.Kind, visible func(names.Kind, names.Target) bool, fn func(it *listItem)) {
	for _, items := range m.parts {
		for i := range items {
			if m.modelOnly && items[i].app.noModel {
				continue
			}
			if visible == nil || visible(kind, items[i].target) {
				fn(&items[i])
			}
		}
	}
}

// part is one backend's contribution to a list.
type part struct {
	items   []listItem
	ttlMs   int64
	private bool
	absent  bool // the backend does not implement the method (-32601)
	// pins are the pin verdicts of the items listed, by backend-side name (pins.go); nil when
	// the backend or list is not pinned. Blocked items are no longer in items.
	pins map[string]pins.Verdict
	// pinKind and pinDefs gather the definitions while the list is read, for checkPins.
	pinKind pins.Kind
	pinDefs []pins.Listed
	// shadowsOnly: the backend is not pinned, and its tools or prompts are judged for shadowing alone
	// (pins.Guard.JudgesShadows): served as listed, never reduced to what a pin covers.
	shadowsOnly bool
	// spellings are, for a resources or templates list, the URIs its backend listed under
	// each normal form that is not plain ASCII (spelling.go): one listed spelling, or
	// collidedSpelling. Nil when there is none.
	spellings map[string]string
	// templates are, for a templates list, each template its backend listed, in its normal
	// form and as listed (spelling.go); nil for any other list.
	templates []spelledTemplate
}

// List fans the list out to every backend, follows each backend's pagination, renames and
// filters the items, merges them in configuration order, and returns one page of the merged list
// as the raw result object (items, nextCursor, ttlMs, cacheScope, resultType). A backend that
// fails is left out and the result gets ttlMs 0, unless it is Required: then List fails; one
// left out only because it is rate limiting (its 429 or the wait one asked for) caps the ttlMs at
// the wait it asked for instead. A cursor that does not open is ErrBadCursor.
func (c *Catalog) List(ctx context.Context, req *ListRequest) (json.RawMessage, error) {
	spec, ok := listSpecFor(req.Method)
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found")
	}
	p, err := jsonrpc.ParseParams(req.Params)
	if err != nil {
		return nil, err
	}
	meta, err := jsonrpc.ParseMeta(p.Meta)
	if err != nil {
		return nil, err
	}
	m, err := c.fetchList(ctx, spec, &listQuery{meta: p.Meta, version: meta.ProtocolVersion, hdr: req.Header,
		cacheKey: req.CacheKey, subject: req.SubjectToken, subjectKey: req.SubjectKey, reaches: req.Reaches})
	if err != nil {
		return nil, err
	}
	return c.page(spec, m, listFilter{req.Visible, req.Discoverable}, p, req.Private, req.View)
}

// page cuts one page out of the merged list as f filters it, in one pass that also computes
// the digest of the whole filtered list; a cursor's digest and offset are checked against it
// before the page is returned.
func (c *Catalog) page(spec listSpec, m *merged, f listFilter, p *jsonrpc.Params, private bool, view string) (json.RawMessage, error) {
	off, want := 0, []byte(nil)
	if p.HasCursor {
		var err error
		if off, want, err = c.openCursor(p.Cursor, spec); err != nil {
			return nil, err
		}
	}
	end := off + c.pageSize
	d := newListDigester(spec)
	d.bindView(view)
	pageItems := make([]*listItem, 0, c.pageSize)
	size, n := 0, 0
	f.each(m, spec.kind, func(it *listItem) {
		d.add(it)
		if n >= off && n < end {
			pageItems = append(pageItems, it)
			size += len(it.raw) + 1
		}
		n++
	})
	digest := d.sum()
	if p.HasCursor {
		if err := checkCursor(want, digest, off, n); err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, size+len(spec.key)+pageTailRoom)
	out = append(out, '{')
	out = jsonrpc.AppendString(out, spec.key)
	out = append(out, ":["...)
	for i, it := range pageItems {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it.raw...)
	}
	out = append(out, ']')
	if end < n {
		c, err := c.sealCursor(spec, end, digest)
		if err != nil {
			return nil, err
		}
		out = append(out, `,"nextCursor":`...)
		out = jsonrpc.AppendString(out, c)
	}
	scope := "public"
	if m.private || private {
		scope = "private"
	}
	out = append(out, `,"ttlMs":`...)
	out = strconv.AppendInt(out, m.ttlMs, 10)
	out = append(out, `,"cacheScope":"`+scope+`","resultType":"complete"}`...)
	return out, nil
}

// fetchList collects every backend's full list in parallel, each from the cache or the
// backend, and merges them in configuration order.
func (c *Catalog) fetchList(ctx context.Context, spec listSpec, q *listQuery) (*merged, error) {
	parts := make([]*part, len(c.backends))
	errs := make([]error, len(c.backends))
	var wg sync.WaitGroup
	for i, b := range c.backends {
		if q.unreached(b) {
			// Its items would be shown to nobody here: the caller's account is not used.
			parts[i] = &part{absent: true, private: true}
			continue
		}
		// Cached parts are taken here; only backends to ask get a goroutine, so a warm list
		// starts none.
		if parts[i] = c.cachedPart(b, spec, q); parts[i] != nil {
			continue
		}
		wg.Go(func() { parts[i], errs[i] = c.missedPart(ctx, b, spec, q) })
	}
	wg.Wait()
	m := &merged{ttlMs: -1, parts: make([][]listItem, 0, len(parts)), modelOnly: c.apps && spec.kind == names.KindTool}
	answered, failed, waitMs := 0, false, int64(-1)
	for i, b := range c.backends {
		if err := errs[i]; err != nil {
			if b.Required() || ctx.Err() != nil {
				return nil, err
			}
			if ms, ok := waitLeftMs(err); ok {
				// Out until the wait its 429 asked for passes, which the backend logged once;
				// the list may be kept as long, since asking again before then finds it out.
				waitMs = minTTL(waitMs, ms)
				continue
			}
			c.log.Warn("upstream left out of list", "upstream", b.Name(), "method", spec.method, "error", err.Error())
			failed = true // a list missing a part for any other reason must not be cached
			continue
		}
		answered++
		if parts[i].absent {
			continue
		}
		m.parts = append(m.parts, parts[i].items)
		m.private = m.private || parts[i].private
		m.ttlMs = minTTL(m.ttlMs, parts[i].ttlMs)
	}
	if answered == 0 {
		return nil, fmt.Errorf("%w: no upstream answered %s: %w", wire.ErrUnavailable, spec.method, errors.Join(errs...))
	}
	m.ttlMs = max(m.ttlMs, 0)
	switch {
	case failed:
		m.ttlMs = 0
	case waitMs >= 0:
		m.ttlMs = min(m.ttlMs, waitMs)
	}
	return m, nil
}

// minTTL is the lesser of two ttls in milliseconds, a negative one meaning none yet.
func minTTL(a, b int64) int64 {
	if a < 0 || (b >= 0 && b < a) {
		return b
	}
	return a
}

// waitLeftMs is, for a backend's part left out of a list because the backend is rate limiting
// (its 429, or the wait one asked for, backend.ErrRateLimitWait), how long in milliseconds the
// backend asked to wait: the list may be kept that long.
func waitLeftMs(err error) (int64, bool) {
	var rl *wire.RateLimitError
	if !errors.As(err, &rl) {
		return 0, false
	}
	return rl.RetryAfter.Milliseconds(), true
}

// listBudget is what b's list for q is charged to while it is read, and the function that lets
// it go once the list's charge is returned: the share of q's caller of the result budget when
// the list can only be that caller's (a per-user backend answers with the caller's account, a
// token-exchange backend as the caller), so that one caller's lists, as its results, cannot take
// every caller's room; else the replica's budget, for a list any caller may be answered with.
// A function, not a method: Catalog's methods are its own state's.
func listBudget(c *Catalog, b *backend.Backend, q *listQuery) (*bodyread.Budget, func()) {
	key := q.cacheKey
	if c.callers == nil || !backend.AnswersAsCaller(b) {
		return c.results, func() {}
	}
	return c.callers.Take(key), func() { c.callers.Give(key) }
}

// listBackend follows one backend's pagination to the end.
func (c *Catalog) listBackend(ctx context.Context, b *backend.Backend, spec listSpec, q *listQuery) (*part, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, b.Timeout(), wire.ErrCallTimeout)
	defer cancel()
	// A per-user backend answers each caller with that caller's own token: its lists are
	// that caller's, never shared with another.
	p := &part{ttlMs: -1, private: b.PerUser()}
	c.collectPins(b, spec, p)
	gen := c.cache.generation(partKey{upstream: b.Name(), list: spec.index})
	// The list is held, page after page, until it is complete: it is charged to the replica's
	// budget for the responses being relayed, as one response is while it is read, so that
	// neither a backend's hundred pages of its largest response nor many callers' private
	// lists at once hold more than that budget. The charge is returned once the list is
	// complete: the cache bounds what it keeps (CacheConfig.MaxBytes), and a list too large
	// for it is served and let go.
	results, give := listBudget(c, b, q)
	defer give()
	var held int64
	defer func() { results.Return(held) }()
	var cursor []byte
	for range maxListPages {
		body := appendListRequest(nil, spec.method, q.meta, cursor)
		msg, err := b.RoundTrip(ctx, &backend.Request{Method: spec.method, Version: q.version, Header: q.hdr, Body: body,
			Subject: b.SubjectFor(q.subject), SubjectKey: q.subjectKey, Caller: q.cacheKey, FromCaller: true, Results: results})
		if errors.Is(err, backend.ErrUserTokenNeeded) || errors.Is(err, backend.ErrIssuerNotExchanged) {
			// A per-user backend lists nothing to a caller who has not connected it, nor a
			// token-exchange backend to a caller of an issuer it does not take.
			return &part{absent: true, private: true}, nil
		}
		if err != nil {
			return nil, err
		}
		if msg.Error != nil {
			if msg.Error.Code == jsonrpc.CodeMethodNotFound {
				return &part{absent: true}, nil
			}
			return nil, fmt.Errorf("%w: %s: %s answered error %d", wire.ErrBadResponse, b.Name(), spec.method, msg.Error.Code)
		}
		had := len(p.items)
		next, more, err := c.addPage(p, b, spec, msg.Result)
		if err != nil {
			return nil, err
		}
		grown := p.itemBytes(had)
		if err := results.Charge(grown); err != nil {
			return nil, fmt.Errorf("%w (limit %d bytes): %s: %s is larger than the replica holds for responses in flight: %w",
				backend.ErrResultBudget, results.Max(), b.Name(), spec.method, err)
		}
		held += grown
		if !more {
			p.ttlMs = max(p.ttlMs, 0)
			c.leaveOutRepeated(b, spec, p)
			c.checkPins(ctx, b, spec, q, p, gen)
			c.reportTools(b, spec, p)
			c.learnToolHeaders(b, spec, q, p, gen)
			return p, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("%w: %s: %s has more than %d pages", wire.ErrBadResponse, b.Name(), spec.method, maxListPages)
}

// appendListRequest appends a list request; cursor, when not nil, is the backend's own
// nextCursor literal, sent back as the backend wrote it.
func appendListRequest(dst []byte, method string, meta json.RawMessage, cursor []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":1,"method":`...)
	dst = jsonrpc.AppendString(dst, method)
	dst = append(dst, `,"params":{`...)
	sep := ""
	if meta != nil {
		dst = append(dst, `"_meta":`...)
		dst = append(dst, meta...)
		sep = ","
	}
	if cursor != nil {
		dst = append(dst, sep+`"cursor":`...)
		dst = append(dst, cursor...)
	}
	return append(dst, "}}"...)
}

// addPage appends one page's renamed items to p and returns the backend's next cursor, as
// the literal it wrote.
func (c *Catalog) addPage(p *part, b *backend.Backend, spec listSpec, res []byte) (next []byte, more bool, err error) {
	ttl, hasTTL := int64(0), false
	err = jsonrpc.Members(res, func(key, val []byte) error {
		switch string(key) {
		case spec.key:
			return c.addItems(p, b, spec, val)
		case "nextCursor":
			var err error
			if next, more, err = nextCursor(val); err != nil {
				return err
			}
		case "ttlMs":
			n, perr := strconv.ParseInt(string(val), 10, 64)
			ttl, hasTTL = min(n, maxListTTLMs), perr == nil
		case "resultType":
			if string(val) != `"complete"` {
				// An input_required list cannot be merged, and must never be cached.
				return errors.New("resultType is not complete")
			}
		case "cacheScope":
			// Anything but "public" is treated as private: the safe reading of a bad value.
			p.private = p.private || string(val) != `"public"`
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %s result: %v", wire.ErrBadResponse, b.Name(), spec.method, err)
	}
	if !hasTTL || ttl < 0 {
		ttl = 0 // docs/protocol.md §5.1: absent or negative means stale
	}
	if p.ttlMs < 0 || ttl < p.ttlMs {
		p.ttlMs = ttl
	}
	return next, more, nil
}

// nextCursor reads a page's nextCursor (val, nil when absent) as the SDKs' clients read it: a
// string other than "" is the next page's cursor, the literal the backend wrote, kept to send
// back; absent, null or "" ends the list (Go's and TypeScript's clients stop at an empty cursor,
// which read as a cursor would have the gateway ask for the first page again, and again); any
// other value is refused, as their decoders refuse it, rather than read as the end of the list,
// and so is a string longer than maxBackendCursorBytes.
func nextCursor(val []byte) (next []byte, more bool, err error) {
	switch string(val) {
	case "", "null", `""`:
		return nil, false, nil
	}
	if len(val) > maxBackendCursorBytes {
		return nil, false, fmt.Errorf("nextCursor is %d bytes, more than the %d the gateway sends back", len(val), maxBackendCursorBytes)
	}
	if next, more = wire.StringLiteral(val); !more {
		return nil, false, errors.New("nextCursor is not a string")
	}
	return next, true, nil
}

func (c *Catalog) addItems(p *part, b *backend.Backend, spec listSpec, arr []byte) error {
	return wire.ForEachElem(arr, func(elem []byte, _ int) error {
		if elem[0] != '{' {
			return nil
		}
		var target names.Target
		raw, err := wire.EditObject(make([]byte, 0, len(elem)+len(b.Name())+4), elem, func(k, v []byte) ([]byte, bool) {
			if string(k) != spec.field {
				return nil, false
			}
			name, ok := wire.JSONString(v)
			if !ok || name == "" {
				return nil, false
			}
			listed := name
			if name, ok = names.Listed(spec.kind, name); !ok {
				return nil, false // a URI the gateway would refuse: not listed
			}
			if spec.kind == names.KindResource {
				p.addSpelling(name, listed)
				if spec.index == templatesListIndex {
					p.templates = append(p.templates, spelledTemplate{normal: name, listed: listed})
				}
			}
			target = names.Target{Upstream: b.Name(), Name: name}
			return jsonrpc.AppendString(nil, string(c.ns.Name(spec.kind, target))), true
		})
		if err != nil {
			return err
		}
		if target.Name == "" {
			return nil // an item without a name cannot be addressed: skipped
		}
		var app appTool
		if spec.kind == names.KindTool {
			// An MCP App tool: its UI resource link namespaced, its visibility read (apps.go).
			if raw, err = c.ns.RewriteUIMeta(make([]byte, 0, len(raw)+len(b.Name())+8), raw, b.Name()); err != nil {
				return err
			}
			app = readAppTool(elem)
		}
		if raw, err = p.served(target.Name, raw); err != nil {
			return err
		}
		it := newListItem(target, raw)
		it.app = app
		p.items = append(p.items, it)
		p.addPinDef(target.Name, elem)
		return nil
	})
}

// leaveOutRepeated keeps one item of each name b's complete list p holds more than once alike
// (a page repeated, as an offset-paged list may be while it changes), and leaves out every item
// of a name it holds with two different definitions, logging it: the gateway presents one
// server, whose names are unique, and which of the definitions a call of that name reaches is
// the backend's choice. Served both, a client would hold one name twice (a model's API refuses
// such a list whole), and the gateway would check a call against one of them (its schemas and
// header bindings) while the client called by the other. Pinning judges the listings as they
// were sent (pinDefs): a pinned name listed twice is blocked, alike or not.
func (c *Catalog) leaveOutRepeated(b *backend.Backend, spec listSpec, p *part) {
	if len(p.items) < 2 {
		return
	}
	first := make(map[string]int, len(p.items))
	var differ map[string]bool
	kept := p.items[:0]
	for _, it := range p.items {
		j, seen := first[it.target.Name]
		switch {
		case !seen:
			first[it.target.Name] = len(kept)
			kept = append(kept, it)
		case !bytes.Equal(kept[j].raw, it.raw):
			if differ == nil {
				differ = map[string]bool{}
			}
			differ[it.target.Name] = true
		}
	}
	if differ != nil {
		all := kept
		kept = all[:0]
		for _, it := range all {
			if !differ[it.target.Name] {
				kept = append(kept, it)
			}
		}
		for name := range differ {
			if _, spelt := p.spellings[name]; spelt {
				// The items of this normal form are gone, so buildSpellIndex can no longer count
				// them: the one spelling recorded must not be taken for the only one listed.
				// Neither is chosen, as for any normal form listed under two spellings.
				p.spellings[name] = collidedSpelling
			}
			c.log.Warn("upstream list item left out: its backend lists its name more than once, with different definitions",
				"upstream", b.Name(), "method", spec.method, "name", name)
		}
	}
	clear(p.items[len(kept):])
	p.items = kept
}

// reportTools hands a backend's complete tool list (backend-side names) to Options.OnTools, so
// metrics can label tool calls with names the backends themselves published.
func (c *Catalog) reportTools(b *backend.Backend, spec listSpec, p *part) {
	if c.onTools == nil || spec.kind != names.KindTool {
		return
	}
	names := make([]string, 0, len(p.items))
	for _, it := range p.items {
		names = append(names, it.target.Name)
	}
	c.onTools(b.Name(), names)
}
