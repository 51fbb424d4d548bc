// Package catalog is the lists the gateway serves from its backends: tools/list, prompts/list,
// resources/list and resources/templates/list fanned out to every backend, each backend's pages
// followed to the end, renamed to namespaced form and merged in configuration order, then paged
// with the gateway's own sealed cursors (cursor.go). Around them: the per-replica cache of each
// backend's list and its invalidation by list_changed (cache.go), the tool-definition pins
// checked once per list fetched (pins.go), the tools' x-mcp-header bindings (toolheaders.go),
// the marks of items a caller may discover but not call (listmark.go), and the whole merged
// tools list for tool search (tools.go).
//
// It sees the backends through package backend and the names through package names; it knows
// nothing of listens or of the protocol era a backend speaks.
package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Sealer seals and opens the gateway's list cursors. The gateway passes an AEAD sealer bound to
// the cursor purpose; a token that does not open must return an error.
type Sealer interface {
	// Seal returns an opaque token carrying plaintext.
	Seal(plaintext []byte) (string, error)
	// Open returns the plaintext of a token Seal produced, or an error.
	Open(token string) ([]byte, error)
}

// DefaultPageSize is the number of merged list items per page sent to the client.
const DefaultPageSize = 100

// Options are what a Catalog is built from.
type Options struct {
	// Cursors seals and opens merged-list cursors. Required.
	Cursors Sealer
	// PageSize is the number of items per page; zero means DefaultPageSize.
	PageSize int
	// Cache tunes the cache of backend lists.
	Cache CacheConfig
	// Log receives the backends left out of a list. Required.
	Log *slog.Logger
	// Now returns the current time. Required.
	Now func() time.Time
	// OnTools, when set, is called with a backend's complete tools/list (backend-side names)
	// each time one is fetched from the backend (not on cache hits).
	OnTools func(upstream string, tools []string)
	// CacheResult, when set, is called once per backend part of a list request: hit is true
	// when that backend's list came from the cache without a backend request.
	CacheResult func(hit bool)
	// CacheEvicted, when set, is called for each entry one of the catalog's caches (CacheList,
	// CacheHeaderIndex, CachePinVerdicts, CacheAppFailures) evicted to make room: own is true
	// when the caller's share of the cache made one of its own entries go (share.go), false
	// when the cache's total bound did. It is called with the cache locked and must not block.
	CacheEvicted func(cache string, own bool)
	// Pins, when set, checks every tools, prompts and resource templates list and the server
	// instructions against the tool-definition pins (pins.go). Nil: no pinning.
	Pins *pins.Guard
	// KeepSchemas indexes every listed tool's inputSchema and outputSchema with its header
	// bindings (ToolHeaders.Schemas), for the schema guardrail. Off, only bindings are kept.
	KeepSchemas bool
	// Apps keeps the tools whose MCP Apps visibility leaves out "model" out of every list and
	// catalog (apps.go).
	Apps bool
	// Results is the replica's budget for the backend responses being relayed (the backends'
	// Env.Results): a backend's list is charged to it, page after page, while it is read, as
	// one response is (listBackend). Nil bounds nothing.
	Results *bodyread.Budget
	// CallerResults are the callers' shares of Results (the backends' Env.CallerResults): a
	// list only one caller can be answered with (a per-user or token-exchange backend's) is
	// charged to its caller's share (listBudget). Nil: every list to Results alone.
	CallerResults *bodyread.Shares
}

// Catalog serves the merged lists of a set of backends. It is safe for concurrent use.
type Catalog struct {
	backends    []*backend.Backend
	byName      map[string]*backend.Backend
	ns          *names.Space
	log         *slog.Logger
	now         func() time.Time
	cursors     Sealer
	pageSize    int
	onTools     func(upstream string, tools []string)
	cache       *listCache
	toolHeaders toolHeaderIndexes // the tools' x-mcp-header bindings (toolheaders.go)
	pins        *pins.Guard       // nil without pinning (pins.go)
	pinViews    pinViews          // the pin verdicts of the newest lists (pins.go)
	apps        bool              // Options.Apps
	results     *bodyread.Budget  // Options.Results
	callers     *bodyread.Shares  // Options.CallerResults
	appFailures listFailures      // lists ResolveAppName or a URI's spelling could not have, for a while (apps.go, spelling.go)
}

// New returns the Catalog of backends, whose names ns namespaces, in the order their items
// appear in merged lists.
func New(backends []*backend.Backend, ns *names.Space, o Options) *Catalog {
	c := &Catalog{backends: backends, byName: make(map[string]*backend.Backend, len(backends)), ns: ns, log: o.Log,
		now: o.Now, cursors: o.Cursors, pageSize: o.PageSize, onTools: o.OnTools, pins: o.Pins, apps: o.Apps,
		results: o.Results, callers: o.CallerResults}
	for _, b := range backends {
		c.byName[b.Name()] = b
	}
	if c.pageSize == 0 {
		c.pageSize = DefaultPageSize
	}
	c.cache = newListCache(o.Cache, c.now, o.CacheResult)
	c.cache.lists.OnEvict(evictHook(o.CacheEvicted, CacheList))
	// The views of lists hold one entry per list, as the list cache does, and each less than
	// its list: each is bounded as the list cache is. A failure is a few bytes: bounded in
	// number only.
	views, viewBytes := c.cache.maxEntries, c.cache.maxBytes
	c.toolHeaders.init(o.KeepSchemas, views, viewBytes, evictHook(o.CacheEvicted, CacheHeaderIndex))
	c.pinViews.init(views, viewBytes, evictHook(o.CacheEvicted, CachePinVerdicts))
	c.appFailures.init(views, evictHook(o.CacheEvicted, CacheAppFailures))
	return c
}

// backend returns the backend named upstream, or names.ErrUnknownName.
func (c *Catalog) backend(upstream string) (*backend.Backend, error) {
	b, ok := c.byName[upstream]
	if !ok {
		return nil, fmt.Errorf("%w: upstream %q is not configured", names.ErrUnknownName, upstream)
	}
	return b, nil
}

// Lists of listSpec.index that each list_changed notification makes stale.
var (
	toolLists     = []byte{1}
	promptLists   = []byte{2}
	resourceLists = []byte{3, 4} // resources/list and resources/templates/list
)

// Changed drops every cached list of the backend named upstream that a list_changed
// notification (method, for example notifications/tools/list_changed) makes stale
// (docs/protocol.md §5.1: the notification invalidates the entry), in every protocol version
// and for every caller. It returns how many cached lists it dropped; another method drops none.
func (c *Catalog) Changed(upstream, method string) int {
	var lists []byte
	switch method {
	case wire.NotifToolsListChanged:
		lists = toolLists
	case wire.NotifPromptsListChanged:
		lists = promptLists
	case wire.NotifResourcesListChanged:
		lists = resourceLists
	default:
		return 0
	}
	return c.cache.invalidate(upstream, lists)
}

// CacheBytes is the bytes bound of the list cache (CacheConfig.MaxBytes, or its default), which
// the views of lists share: tool search bounds its indexes by it too.
func (c *Catalog) CacheBytes() int64 { return c.cache.maxBytes }

// Guard returns the pins guard the lists are checked with (nil when pinning is off), for the
// admin endpoint.
func (c *Catalog) Guard() *pins.Guard { return c.pins }

// Instructions returns a backend's server instructions as server/discover may pass them on: ""
// when their drift blocks them or asks for confirmation, or their pin cannot be read.
func (c *Catalog) Instructions(ctx context.Context, upstream, instructions string) string {
	if !c.pins.Enabled(upstream) {
		return instructions
	}
	v := c.pins.CheckInstructions(ctx, upstream, instructions)
	if v.Blocked() || v.Confirm() {
		// Instructions are not called, so no call can be confirmed: text that needs a
		// user's approval is withheld like blocked text.
		return ""
	}
	return instructions
}
