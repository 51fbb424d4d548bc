package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// ToolCatalog is the whole merged tools list, unfiltered, as List would page it: every answering
// backend's tools in configuration order, renamed to their namespaced names. Tool search indexes
// it once per Version and filters the hits by each caller's view.
type ToolCatalog struct {
	m       *merged
	version [sha256.Size]byte
	n       int
	bytes   int
}

// CatalogTool is one tool of a ToolCatalog.
type CatalogTool struct {
	// Target is the tool's backend and backend-side name, which policy decides on.
	Target names.Target
	// Raw is the tool's definition as a client receives it (namespaced name). Shared with the
	// list cache: read only.
	Raw json.RawMessage
	// Shadows reports that pinning flagged the tool as a near duplicate of another backend's
	// tool (pins.ClassShadows) and the configured action still lists it: a search must not
	// rank it. With the default action (block) such a tool is not in the catalog at all.
	Shadows bool
}

// Tools fetches the merged tools list (from the cache or the backends, exactly as List does)
// for req, whose Method, Visible and Private are ignored (Reaches is not).
func (c *Catalog) Tools(ctx context.Context, req *ListRequest) (*ToolCatalog, error) {
	spec, _ := listSpecFor(wire.MethodToolsList)
	meta, err := jsonrpc.ParseMeta(metaOf(req.Params))
	if err != nil {
		return nil, err
	}
	m, err := c.fetchList(ctx, spec, &listQuery{meta: metaOf(req.Params), version: meta.ProtocolVersion,
		hdr: req.Header, cacheKey: req.CacheKey, subject: req.SubjectToken, subjectKey: req.SubjectKey, reaches: req.Reaches})
	if err != nil {
		return nil, err
	}
	tc := &ToolCatalog{m: m}
	h := sha256.New()
	// Each item's sum and its shadows flag: pinning can flag an unchanged definition once
	// another backend's tool is pinned, and search must then leave it out of its index.
	var rec [itemSumLen + 1]byte
	m.each(spec.kind, nil, func(it *listItem) {
		copy(rec[:], it.sum[:])
		rec[itemSumLen] = 0
		if it.shadows {
			rec[itemSumLen] = 1
		}
		h.Write(rec[:])
		tc.n++
		tc.bytes += len(it.raw) + 1
	})
	h.Sum(tc.version[:0])
	return tc, nil
}

// metaOf returns the _meta member of a request's params, nil when it has none or the params do
// not parse (the caller's own decode has refused those already).
func metaOf(params json.RawMessage) json.RawMessage {
	if len(params) == 0 {
		return nil
	}
	p, err := jsonrpc.ParseParams(params)
	if err != nil {
		return nil
	}
	return p.Meta
}

// Version identifies the catalog's content: two catalogs with the same tools, in the same order,
// with the same definitions and the same shadows flags have the same version, on every replica.
func (c *ToolCatalog) Version() [sha256.Size]byte { return c.version }

// Len is the number of tools in the catalog.
func (c *ToolCatalog) Len() int { return c.n }

// Private reports that a backend marked its list private: the catalog is this caller's.
func (c *ToolCatalog) Private() bool { return c.m.private }

// TTLMs is the catalog's freshness, as List reports it.
func (c *ToolCatalog) TTLMs() int64 { return c.m.ttlMs }

// Tools returns the catalog's tools in list order.
func (c *ToolCatalog) Tools() []CatalogTool {
	out := make([]CatalogTool, 0, c.n)
	c.m.each(names.KindTool, nil, func(it *listItem) {
		out = append(out, CatalogTool{Target: it.target, Raw: it.raw, Shadows: it.shadows})
	})
	return out
}

// Bytes is the size of the tools array a client would receive for the catalog's tools visible
// allows (nil: all), for measuring what a search saves against listing them.
func (c *ToolCatalog) Bytes(visible func(names.Kind, names.Target) bool) int {
	if visible == nil {
		return c.bytes + 1
	}
	n := 2
	c.m.each(names.KindTool, visible, func(it *listItem) { n += len(it.raw) + 1 })
	return n
}
