package upstreams

import (
	"context"
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/upstreams/catalog"
)

// The merged lists and what hangs on them are package catalog's; these names and methods keep
// the Registry's callers to one import.

// ListRequest is one client list request (see catalog.ListRequest).
type ListRequest = catalog.ListRequest

// ToolCatalog is the whole merged tools list, unfiltered (see catalog.ToolCatalog).
type ToolCatalog = catalog.ToolCatalog

// CatalogTool is one tool of a ToolCatalog.
type CatalogTool = catalog.CatalogTool

// ToolHeaders holds the x-mcp-header bindings of one tool (see catalog.ToolHeaders).
type ToolHeaders = catalog.ToolHeaders

// ToolSchemas are a listed tool's schemas (see catalog.ToolSchemas).
type ToolSchemas = catalog.ToolSchemas

// HeaderBinding is one argument a tool mirrors into a header.
type HeaderBinding = catalog.HeaderBinding

// ToolHeaderQuery is what fetching a backend's tools/list for a caller takes.
type ToolHeaderQuery = catalog.ToolHeaderQuery

// PinQuery is what looking up a call's pin verdict takes.
type PinQuery = catalog.PinQuery

// CacheConfig tunes the per-replica cache of backend list results (see catalog.CacheConfig).
type CacheConfig = catalog.CacheConfig

// Bounds of CacheConfig, documented in package catalog.
const (
	DefaultCacheEntries = catalog.DefaultCacheEntries
	MaxCacheEntries     = catalog.MaxCacheEntries
	DefaultCacheBytes   = catalog.DefaultCacheBytes
	MaxCacheBytes       = catalog.MaxCacheBytes
)

// RequiredScopesMeta is the _meta key of a listed item the caller cannot use yet: the scopes a
// call needs (ListRequest.Discoverable).
const RequiredScopesMeta = catalog.RequiredScopesMeta

// MarkRequiredScopes returns a copy of the list item raw marked with the scopes a call of it
// needs, exactly as a list shows an item that is only discoverable.
func MarkRequiredScopes(raw []byte, scopes []string) ([]byte, error) {
	return catalog.MarkRequiredScopes(raw, scopes)
}

// List fans the list out to every backend and returns one page of the merged list as the raw
// result object; see catalog.Catalog.List.
func (r *Registry) List(ctx context.Context, req *ListRequest) (json.RawMessage, error) {
	return r.catalog.List(ctx, req)
}

// ToolCatalog fetches the merged tools list (from the cache or the backends, exactly as List
// does) for req, whose Method, Visible and Private are ignored.
func (r *Registry) ToolCatalog(ctx context.Context, req *ListRequest) (*ToolCatalog, error) {
	return r.catalog.Tools(ctx, req)
}

// ToolHeaders returns the x-mcp-header bindings of target's tool, from its backend's tools/list;
// see catalog.Catalog.ToolHeaders.
func (r *Registry) ToolHeaders(ctx context.Context, q *ToolHeaderQuery, target Target) (*ToolHeaders, error) {
	return r.catalog.ToolHeaders(ctx, q, target)
}

// PromptListed returns ErrUnknownName when target's prompt is not exactly one its backend's
// prompts/list shows the caller; see catalog.Catalog.PromptListed.
func (r *Registry) PromptListed(ctx context.Context, q *ToolHeaderQuery, target Target) error {
	return r.catalog.PromptListed(ctx, q, target)
}

// ResourceSpelling returns how target's resource URI (or template) is written toward its
// backend: the spelling its list shows for that normal form, else the URI form; see
// catalog.Catalog.ResourceSpelling.
func (r *Registry) ResourceSpelling(ctx context.Context, q *ToolHeaderQuery, target Target) string {
	return r.catalog.ResourceSpelling(ctx, q, target)
}

// AppsEnabled reports whether the gateway enforces MCP Apps' tool visibility and resolves the
// backends' own tool names an app calls (Config.Apps).
func (r *Registry) AppsEnabled() bool { return r.apps }

// ModelHidden reports whether target's tool leaves "model" out of its MCP Apps visibility, from
// its backend's tools/list; see catalog.Catalog.ModelHidden.
func (r *Registry) ModelHidden(ctx context.Context, q *ToolHeaderQuery, target Target) (bool, error) {
	return r.catalog.ModelHidden(ctx, q, target)
}

// ResolveAppName resolves a backend's own tool name as an MCP App calls it to the one backend
// serving apps that has it; see catalog.Catalog.ResolveAppName.
func (r *Registry) ResolveAppName(ctx context.Context, q *ToolHeaderQuery, name string, usable func(Target) bool) (Target, error) {
	return r.catalog.ResolveAppName(ctx, q, name, usable)
}

// PinsEnabled reports whether upstream's definitions are pinned.
func (r *Registry) PinsEnabled(upstream string) bool { return r.catalog.PinsEnabled(upstream) }

// UIReadPin returns what a read of upstream's pinned MCP App UI resource uri is held to; see
// catalog.Catalog.UIReadPin.
func (r *Registry) UIReadPin(upstream, uri string) *pins.UIReadPin {
	return r.catalog.UIReadPin(upstream, uri)
}

// ListCacheBytes is the bytes bound of the list cache (cache.maxBytes, or its default): tool
// search bounds the indexes it builds of the lists by it as well.
func (r *Registry) ListCacheBytes() int64 { return r.catalog.CacheBytes() }

// PinGuard returns the guard the lists are checked with (nil when pinning is off), for the
// admin endpoint.
func (r *Registry) PinGuard() *pins.Guard { return r.catalog.Guard() }

// PinVerdict returns the pin verdict of the item a tools/call or prompts/get (method) names,
// or of the templates a resources/read's URI could come from; see catalog.Catalog.PinVerdict.
func (r *Registry) PinVerdict(ctx context.Context, q *PinQuery, method string, target Target) (pins.Verdict, error) {
	return r.catalog.PinVerdict(ctx, q, method, target)
}

// TemplatePinVerdict returns the pin verdict that governs a resources/read of target and the
// backend-side template it comes from; see catalog.Catalog.TemplatePinVerdict.
func (r *Registry) TemplatePinVerdict(ctx context.Context, q *PinQuery, target Target) (pins.Verdict, string, error) {
	return r.catalog.TemplatePinVerdict(ctx, q, target)
}

// ListChanged drops every cached list that a list_changed notification (method, for example
// notifications/tools/list_changed) from upstream makes stale, in every protocol version and for
// every caller. Listen streams through this Registry call it on their own; call it for a
// notification another replica saw. It returns how many cached lists it dropped; an unknown
// upstream or method drops none.
func (r *Registry) ListChanged(upstream, method string) int {
	if _, ok := r.byName[upstream]; !ok {
		return 0
	}
	return r.catalog.Changed(upstream, method)
}
