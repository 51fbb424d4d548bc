package mcphttp

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/internal/toolsearch"
	"github.com/mcp-gateway/gateway/upstreams"
)

// indexCache keeps the search indexes of the last few catalog versions on this replica: one per
// version, built by the first request that needs it, shared by every caller and endpoint. Each
// search ranks over its caller's view of it (toolsearch computes the statistics over the tools
// the caller may see), so no index is built per caller or per request.
type indexCache struct {
	log *slog.Logger
	mu  sync.Mutex
	// entries are the indexes by version, least recently used out first, at most indexVersions
	// of them and maxBytes of estimated memory (catalogIndex.size). An index built for a
	// caller's private catalog counts against that caller, who holds at most one of them and an
	// eighth of the bytes (sharelru.CallerShareDivisor, as the list cache), so one whose lists
	// keep changing (many scopes, many tokens) rebuilds only its own, never pushing out the
	// others'. An index larger than its share (the whole bound for a public one) serves the
	// searches that waited for its build and is not kept, as the list cache keeps no list
	// larger than its share.
	entries *sharelru.Cache[[sha256.Size]byte, *catalogIndex]
	// building holds, per version being built, the build in flight: at most maxIndexBuilds,
	// of them at most maxIndexBuilds-1 of private catalogs and one per caller (buildingBy), so
	// one caller's builds never take every slot and a public catalog's always finds one unless
	// another public build holds it (admitBuild).
	building   map[[sha256.Size]byte]*indexBuild
	buildingBy map[string]*indexBuild
	private    int // private catalogs' builds in flight
	// freed is closed, and replaced, each time a build ends: who waits for a slot tries again.
	freed chan struct{}
	// buildWait bounds how long a search waits for a build slot (indexBuildWait; tests shorten it).
	buildWait time.Duration
	// onBuild, if set, is called after each build (tests count rebuilds with it).
	onBuild func(n int)
	// onEvict, if set, counts the indexes dropped for room: own when the caller's share made
	// its other private index go. It is called with mu held and must not block.
	onEvict func(own bool)
	// buildFn, if set, builds in place of build (tests stall and fail builds with it).
	buildFn func(*upstreams.ToolCatalog) *catalogIndex
	// embed, if set, embeds each version's tools in the background as it is built.
	embed *embeddings.Embedder
	// maxBytes is the bytes bound (0: none); lexical holds, per version whose vectors made its
	// index too large to keep, until when its builds embed nothing (embedsFor).
	maxBytes int64
	lexical  *sharelru.Cache[[sha256.Size]byte, lexicalUntil]
	// now is the clock (time.Now; tests move it).
	now func() time.Time
}

// indexBuild is one build in flight: done is closed when it ends, ix then set to the index it
// built (nil when it panicked), kept or not.
type indexBuild struct {
	done chan struct{}
	ix   *catalogIndex
}

// catalogIndex is the index of one catalog version.
type catalogIndex struct {
	version [sha256.Size]byte
	tools   []upstreams.CatalogTool
	names   []string // each tool's namespaced name
	// reserved marks the tools whose namespaced name is or reads as a meta-tool's
	// (readsAsMetaToolName): a backend's own tool of such a name (possible with
	// namespace.noPrefix) is never found nor listed beside the meta-tools, which answer to
	// that name on a search endpoint. So is a definition search
	// cannot read as every client reads it (toolsearch.ParseTool): its name and text are not
	// known for sure.
	reserved []bool
	// shadows marks the tools pinning flagged as near duplicates of another backend's pinned
	// tool that the operator's action still lists (docs/pinning.md): search never ranks them,
	// names them among similar tools, nor lets them take an original's slot.
	shadows []bool
	ranker  *toolsearch.BM25
	// vectors are the tools' embeddings (nil: embeddings are off), filled in the background.
	vectors *embeddings.Vectors
	// size estimates the memory the index keeps (catalogIndex.bytes), computed when it is built,
	// plus its vectors as they arrive (indexCache.vectorsAdded): what the index cache bounds.
	// c.mu guards it once the index is built.
	size int64
}

// ranks reports whether search may rank tool i at all: neither a backend's tool named like a
// meta-tool nor one pinning flagged as shadowing another's.
func (e *catalogIndex) ranks(i int) bool { return !e.reserved[i] && !e.shadows[i] }

// indexVersions is how many catalog versions are kept indexed: the current one, and a few a
// private list or a change in flight may still ask for. Of them, one caller's private catalogs
// hold at most one (indexCache.entries: an eighth of four, rounded up to one).
const indexVersions = 4

// newIndexCache returns an empty cache of indexes, at most maxBytes of them (the list cache's
// bound, upstreams.Registry.ListCacheBytes; 0: bounded in number only).
func newIndexCache(log *slog.Logger, maxBytes int64) *indexCache {
	c := &indexCache{log: log, building: map[[sha256.Size]byte]*indexBuild{}, buildingBy: map[string]*indexBuild{},
		freed: make(chan struct{}), buildWait: indexBuildWait, maxBytes: maxBytes, now: time.Now}
	c.lexical = sharelru.New[[sha256.Size]byte, lexicalUntil](sharelru.Config{MaxEntries: lexicalVersions,
		ShareDivisor: sharelru.CallerShareDivisor})
	c.entries = sharelru.New[[sha256.Size]byte, *catalogIndex](sharelru.Config{MaxEntries: indexVersions,
		MaxBytes: maxBytes, ShareDivisor: sharelru.CallerShareDivisor, OnEvict: c.evicted})
	return c
}

// maxIndexBuilds bounds the index builds in flight on a replica: each holds what it indexes and
// the index it makes, up to the size of the catalog however large (an index too large to keep is
// built all the same). Builds take CPU only (about 20 ms for 330 tools), so a few at once keep
// searches going while catalogs change.
const maxIndexBuilds = 4

// indexBuildWait bounds how long a search waits for a build slot before it is refused as
// overload (errIndexBuildsBusy); a build of a catalog of thousands of tools takes well under it.
const indexBuildWait = 5 * time.Second

// errIndexBuildsBusy refuses a search that found no build slot for its catalog's index within
// indexBuildWait: the replica's own overload, or the caller's own other private build still
// running; retry, here or on another replica.
var errIndexBuildsBusy = &Error{Status: http.StatusServiceUnavailable, Outcome: outcomeRateLimited,
	RPC:    jsonrpc.NewError(jsonrpc.CodeUnavailable, "Too many search indexes being built; retry later"),
	Header: http.Header{"Retry-After": {"1"}}}

// indexBytes is the bytes bound of the indexes of backends' catalogs: their list cache's
// (cache.maxBytes). Without backends there is no catalog to index.
func indexBytes(backends *upstreams.Registry) int64 {
	if backends == nil {
		return 0
	}
	return backends.ListCacheBytes()
}

// get returns the index of cat's version, building it once when no request has yet; owner is
// the caller when cat is private, else "" (an index found by version is shared whoever built
// it: the same tools make the same index). The requests that waited for a build use the index
// it built, kept or not. A request
// waiting for another's build stops waiting when its own context ends (the error is its cause);
// a build that panics wakes its waiters, and the next of them builds again, so a failed build
// never leaves a version's searches waiting. A build waits for a slot (admitBuild) at most
// buildWait, then the search is refused with errIndexBuildsBusy.
func (c *indexCache) get(ctx context.Context, cat *upstreams.ToolCatalog, owner string) (*catalogIndex, error) {
	v := cat.Version()
	var timeout <-chan time.Time
	for {
		c.mu.Lock()
		if e, ok := c.entries.Get(v); ok {
			if owner == "" {
				// A public catalog uses it: it leaves its caller's share, so that caller's
				// churn cannot push out what every caller searches, and so do its tools'
				// texts still to embed.
				c.entries.Publish(v)
				if e.vectors != nil {
					e.vectors.Public()
				}
			}
			c.mu.Unlock()
			return e, nil
		}
		if b, ok := c.building[v]; ok {
			c.mu.Unlock()
			select {
			case <-b.done:
				if b.ix != nil {
					return b.ix, nil
				}
				continue
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		if wait := c.admitBuild(owner); wait != nil {
			c.mu.Unlock()
			if timeout == nil {
				t := time.NewTimer(c.buildWait)
				defer t.Stop()
				timeout = t.C
			}
			select {
			case <-wait:
				continue
			case <-timeout:
				return nil, errIndexBuildsBusy
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		b := &indexBuild{done: make(chan struct{})}
		c.building[v] = b
		if owner != "" {
			c.buildingBy[owner] = b
			c.private++
		}
		c.mu.Unlock()
		return c.buildAndKeep(cat, v, owner, b), nil
	}
}

// admitBuild is nil when a build for owner's private catalog ("" a public one) may start now, or
// a channel closed when one ends and it may try again: a caller has one private build in flight
// at a time, private builds take at most maxIndexBuilds-1 slots, all builds maxIndexBuilds.
// c.mu is held.
func (c *indexCache) admitBuild(owner string) <-chan struct{} {
	if b := c.buildingBy[owner]; owner != "" && b != nil {
		return b.done
	}
	if len(c.building) >= maxIndexBuilds || owner != "" && c.private >= maxIndexBuilds-1 {
		return c.freed
	}
	return nil
}

// buildAndKeep builds the index of version v, keeps it among the entries when it fits and
// closes b.done, also when the build panics (the panic goes on to the request that built).
func (c *indexCache) buildAndKeep(cat *upstreams.ToolCatalog, v [sha256.Size]byte, owner string, b *indexBuild) *catalogIndex {
	var e *catalogIndex
	defer func() {
		c.mu.Lock()
		if e != nil {
			c.keep(e, owner)
		}
		delete(c.building, v)
		if owner != "" {
			delete(c.buildingBy, owner)
			c.private--
		}
		close(c.freed)
		c.freed = make(chan struct{})
		onBuild := c.onBuild
		c.mu.Unlock()
		b.ix = e
		close(b.done)
		if e != nil && e.vectors != nil {
			// The vectors arrive after the build: each batch is counted as it comes.
			c.vectorsAdded(e, owner, e.vectors.OnAdd(func(n int64) { c.vectorsAdded(e, owner, n) }))
		}
		if e != nil && onBuild != nil {
			onBuild(len(e.tools))
		}
	}()
	if c.buildFn != nil {
		e = c.buildFn(cat)
	} else {
		e = c.build(cat, owner)
	}
	return e
}

// keep puts e first among the entries, built for owner's private catalog ("" a public one):
// owner's other private index goes (its share is one, and an eighth of the bytes), then the
// least recently used beyond the cache's bounds. An index larger than its share (the whole
// bound when public) is not kept: keeping it would push out the others. c.mu is held.
func (c *indexCache) keep(e *catalogIndex, owner string) {
	c.entries.Put(e.version, e, owner, e.size)
}

// evicted counts one index dropped for room; c.mu is held.
func (c *indexCache) evicted(cause sharelru.Cause) {
	if c.onEvict != nil {
		c.onEvict(cause == sharelru.Share)
	}
}

// build indexes one catalog version, and logs each backend tool it hides because its name is a
// meta-tool's (backend names are checked against the meta-tools' names at start, tool names
// cannot be) or because its definition cannot be read as every client reads it.
func (c *indexCache) build(cat *upstreams.ToolCatalog, owner string) *catalogIndex {
	tools := cat.Tools()
	e := &catalogIndex{version: cat.Version(), tools: tools, names: make([]string, len(tools)),
		reserved: make([]bool, len(tools)), shadows: make([]bool, len(tools))}
	docs := make([]toolsearch.Tool, len(tools))
	for i, t := range tools {
		d, err := toolsearch.ParseTool(t.Raw)
		if err != nil {
			d = toolsearch.Tool{}
			e.reserved[i] = true
			c.log.Warn("backend tool left out of search: its definition reads differently to different clients",
				"upstream", t.Target.Upstream, "tool", t.Target.Name, "error", err.Error())
		}
		d.Backend = t.Target.Upstream
		docs[i], e.names[i], e.shadows[i] = d, d.Name, t.Shadows
		if readsAsMetaToolName(d.Name) || readsAsMetaToolTitle(d.Title) || readsAsMetaToolTitle(d.AnnotationsTitle) {
			e.reserved[i] = true
			c.log.Warn("backend tool hidden on search endpoints: its name or title is or reads as a meta-tool's",
				"upstream", t.Target.Upstream, "tool", t.Target.Name)
		}
	}
	e.ranker = toolsearch.NewBM25(docs)
	var texts []string
	if c.embed != nil {
		texts = make([]string, len(docs))
		for i, d := range docs {
			if e.ranks(i) {
				texts[i] = toolsearch.EmbedText(d)
			}
		}
	}
	e.size = e.bytes(texts)
	if texts != nil && c.embedsFor(e, owner) {
		e.vectors = c.embed.Catalog(texts, owner)
	}
	return e
}

// Estimated bookkeeping of an index beyond what bytes counts item by item: the structs, the
// entry in the cache and its list elements.
const indexOverhead = 512

// bytes estimates the memory e keeps: the tools' definitions and targets (shared with the list
// cache while it holds their list, but kept alive by the index when it does not), the names
// and flags, the ranker's postings and texts (toolsearch.BM25.Bytes), and the texts sent to
// embed with one slot per tool for its vector. The vectors themselves are counted as they
// arrive (indexCache.vectorsAdded): shared with the embeddings cache while it holds them, but
// kept alive by the index when it does not. Its cost is linear in the tools, not in their text.
func (e *catalogIndex) bytes(texts []string) int64 {
	n := int64(indexOverhead)
	n += int64(cap(e.tools)) * int64(unsafe.Sizeof(upstreams.CatalogTool{}))
	for _, t := range e.tools {
		n += int64(cap(t.Raw) + len(t.Target.Upstream) + len(t.Target.Name))
	}
	n += int64(cap(e.names))*int64(unsafe.Sizeof("")) + int64(cap(e.reserved)+cap(e.shadows))
	if e.ranker != nil {
		n += e.ranker.Bytes()
	}
	if texts != nil {
		n += int64(cap(texts)) * int64(unsafe.Sizeof("")+unsafe.Sizeof([]float32(nil)))
		for _, t := range texts {
			n += int64(len(t))
		}
	}
	return n
}

// readsAsMetaToolName reports whether a reader takes name for one of the meta-tools' names: it
// is one, or spells the same words in another case, with other separators or none, in
// look-alike letters of another script or full-width forms, or with invisible characters
// (pins.NameWords). Such a tool beside the meta-tools, or among find_tools' answers, could be
// taken for one and sent the client's tasks.
func readsAsMetaToolName(name string) bool {
	if name == findToolsName || name == callToolName {
		return true
	}
	switch strings.Join(pins.NameWords(name), "") {
	case "findtools", "calltool":
		return true
	}
	return false
}

// readsAsMetaToolTitle reports whether a reader takes title, a name a host shows a tool by
// (its title, else its annotations' title; a host that reads no title shows the latter), for one of the meta-tools' titles or names ("Find
// tools", "Call a tool", find_tools, call_tool), spelled as readsAsMetaToolName reads names: in
// a host's list, or the confirmation of a call, such a tool is taken for the meta-tool.
func readsAsMetaToolTitle(title string) bool {
	switch strings.Join(pins.NameWords(title), "") {
	case "findtools", "calltool", "callatool":
		return true
	}
	return false
}

// listView is what this caller's tools/list on this endpoint shows: the tools visible allows as
// they are, and those only discoverable (a policy rule lists them without the scopes a call
// needs) marked with those scopes. Search ranks and answers over exactly this view.
type listView struct {
	visible      func(upstreams.Kind, upstreams.Target) bool
	discoverable func(upstreams.Kind, upstreams.Target) []string
}

func newListView(x *request) listView {
	visible, _ := x.visibility()
	return listView{visible: visible, discoverable: x.discoverable()}
}

// shows reports whether the list shows the tool.
func (v listView) shows(t upstreams.Target) bool {
	return v.visible == nil || v.visible(upstreams.KindTool, t) ||
		v.discoverable != nil && len(v.discoverable(upstreams.KindTool, t)) > 0
}

// appendItem appends the tool's definition as the list shows it.
func (v listView) appendItem(out []byte, t upstreams.CatalogTool) []byte {
	if v.visible == nil || v.visible(upstreams.KindTool, t.Target) || v.discoverable == nil {
		return append(out, t.Raw...)
	}
	marked, err := upstreams.MarkRequiredScopes(t.Raw, v.discoverable(upstreams.KindTool, t.Target))
	if err != nil {
		return append(out, t.Raw...) // cannot happen: the catalog holds objects only; a call is refused all the same
	}
	return append(out, marked...)
}
