package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unique"
	"unsafe"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// A tool may mirror arguments into Mcp-Param-* headers by annotating a property of its input
// schema with "x-mcp-header" (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports,
// SEP-2243), so that intermediaries can route or limit on them without parsing the body. The
// gateway checks every mirrored value against the body before forwarding; to do that it needs
// each tool's bindings, which it reads from the backend's own tools/list, as the caller would see
// it. This file keeps an index of them per backend list.

// HeaderBinding is one argument a tool mirrors into a header.
type HeaderBinding struct {
	// Header is the canonical header name: "Mcp-Param-" and the x-mcp-header value.
	Header string
	// Path is the chain of property names from the arguments object to the argument.
	Path []string
}

// ToolHeaders holds the header bindings of one tool. A tool absent from its backend's list has
// none: it may receive no Mcp-Param-* header.
type ToolHeaders struct {
	Bindings []HeaderBinding
	// Invalid says why the tool's x-mcp-header declarations break the rules (clients must drop
	// such a tool from their lists); "" when they are valid. Calls to it are refused.
	Invalid string
	// Schemas are the tool's schemas as its backend lists them, when the catalog keeps them
	// (Options.KeepSchemas); nil otherwise, and for a tool the list does not show.
	Schemas *ToolSchemas
	// Destructive says the tool's annotations, as this caller's list shows them, declare
	// destructiveHint true, or hold the hint or themselves in a form that cannot be read as false
	// (destructiveOf). A tool listed twice is destructive if either listing says so.
	Destructive bool
}

// ToolSchemas are a listed tool's inputSchema and outputSchema, interned: a schema listed to
// many callers, in many protocol versions, is held once, and not as a part of any list.
type ToolSchemas struct {
	Input, Output       unique.Handle[string]
	HasInput, HasOutput bool
	// memo holds what a consumer derived from the input schema [0] and the output schema [1]
	// (the guardrails' compiled schema), so that a call finds it with the tool's entry instead
	// of looking the schema's text up again.
	memo [2]atomic.Value
}

// Memo returns what SetMemo stored for the input schema (output false) or the output schema,
// nil when nothing was.
func (t *ToolSchemas) Memo(output bool) any { return t.memo[memoIndex(output)].Load() }

// SetMemo stores v for the input schema (output false) or the output schema: always a value of
// the same type.
func (t *ToolSchemas) SetMemo(output bool, v any) { t.memo[memoIndex(output)].Store(v) }

func memoIndex(output bool) int {
	if output {
		return 1
	}
	return 0
}

// ToolHeaderQuery is what fetching a backend's tools/list for a caller takes, as in ListRequest.
type ToolHeaderQuery struct {
	// ProtocolVersion is sent as MCP-Protocol-Version; empty means backend.ProtocolVersion.
	ProtocolVersion string
	// Header holds pass-through headers (trace context, X-Request-Id).
	Header http.Header
	// CacheKey identifies the caller's authorization context, as ListRequest.CacheKey.
	CacheKey string
	// SubjectToken is the caller's token for a backend that exchanges it, and SubjectKey its
	// key, as in ListRequest.
	SubjectToken, SubjectKey string
	// Fetch asks the backend for its list when no copy is at hand; without it ToolHeaders
	// returns nil for a backend whose list it does not hold.
	Fetch bool
}

// minHeaderIndexTTL is how long an index built from a fetched list is used when the list cache
// holds no copy (caching off, or a backend that marks its list stale at once), so that a call
// does not cost a list request each time. A list_changed from the backend ends it early.
const minHeaderIndexTTL = 30 * time.Second

// toolsListIndex is tools/list's listSpec.index: the indexes of prompts lists hold names only.
const toolsListIndex = 1

// headerMeta is the _meta of the gateway's own tools/list for an index: no capabilities, as
// for any list the gateway makes for itself. With Options.Apps it declares the MCP Apps extension
// (appsHeaderMeta): a backend that offers its UI tools only to hosts that support apps (as the
// specification says servers SHOULD) must show them to the index that routes the apps' calls.
var headerMeta = []byte(`{"io.modelcontextprotocol/protocolVersion":"` + backend.ProtocolVersion +
	`","io.modelcontextprotocol/clientCapabilities":{}}`)

// appsHeaderMeta is headerMeta declaring the MCP Apps extension with the one mimeType it defines
// (SEP-1865, "Client (Host) Capabilities").
var appsHeaderMeta = []byte(`{"io.modelcontextprotocol/protocolVersion":"` + backend.ProtocolVersion +
	`","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}`)

// toolHeaderIndexes holds the indexes, each tied to the cached list it was built from.
type toolHeaderIndexes struct {
	mu sync.Mutex
	// entries is bounded in number, each caller's private indexes by its share: a caller's
	// lists differ by token (a token-exchange backend) and protocol version, so one caller could
	// otherwise push out everyone's indexes.
	entries *sharelru.Cache[partKey, *headerIndex]
	// schemas: every listed tool is indexed, with its schemas (Options.KeepSchemas).
	schemas bool
}

// init bounds the indexes as the list cache is bounded (CacheConfig): maxEntries, one per
// backend, list, protocol version and, for private lists, caller, and maxBytes of their
// estimated memory (retainedBytes). One caller's private ones hold at most 1/ShareDivisor of
// each (share.go), and so do the pin verdicts and the remembered MCP Apps list failures, kept
// per list the same way.
func (t *toolHeaderIndexes) init(schemas bool, maxEntries int, maxBytes int64, onEvict func(sharelru.Cause)) {
	t.schemas = schemas
	t.entries = newShared[partKey, *headerIndex](maxEntries, maxBytes, onEvict)
}

// headerIndex is the bindings of one backend list's tools.
type headerIndex struct {
	tools map[string]*ToolHeaders // backend-side tool name → bindings; tools without none
	// from identifies the list it was built from by the sums of its items, not by a pointer
	// into it: a pointer would keep every item's JSON alive for as long as the index lives,
	// outside the list cache's byte bound.
	from    [sha256.Size]byte
	n       int    // and its length
	gen     uint64 // the list's invalidation count when it was fetched
	private bool
	expires time.Time
	// noCaller: the backend lists nothing to this caller because it cannot be called with the
	// caller's credentials at all (a per-user backend not connected, a token-exchange backend
	// that does not take the caller's issuer). Its calls are not refused as unknown names: they
	// fail as the list did, with that reason, and never reach the backend.
	noCaller bool
	// apps is what the list says of MCP Apps (apps.go), nil when no tool links a UI resource.
	apps *appIndex
	// spell is, for a resources or templates list, the spelling its backend listed for a
	// normal form, where that is not the normal form's URIForm (spelling.go).
	spell map[string]string
	// templates are, for a templates list, its templates when one respells a URI under it
	// (spelling.go), else nil.
	templates []spelledTemplate
}

// ToolHeaders returns the x-mcp-header bindings of target's tool, from its backend's tools/list:
// the index of the newest list fetched (for a client or for this), used as long as that list
// may be cached and at least minHeaderIndexTTL, and until a list_changed; else the cached list;
// else, with q.Fetch, a list fetched now; without q.Fetch it then returns nil (unknown). A
// backend that does not implement tools/list declares no bindings. A failed fetch is returned
// as the error. The result is shared: callers must not modify it.
func (c *Catalog) ToolHeaders(ctx context.Context, q *ToolHeaderQuery, target names.Target) (*ToolHeaders, error) {
	b, err := c.backend(target.Upstream)
	if err != nil {
		return nil, err
	}
	idx, err := c.toolIndex(ctx, q, b)
	if err != nil || idx == nil {
		return nil, err
	}
	if th := idx.tools[target.Name]; th != nil {
		return th, nil
	}
	if idx.noCaller {
		return noToolHeaders, nil // the call fails as the list did, before reaching the backend
	}
	// Not exactly a name the list shows: a backend that folds case, trims or normalises
	// names could still run one of its tools under it, which no rule keyed on the exact name
	// would have judged (names.ErrUnknownName, answered as an unknown tool).
	return nil, names.ErrUnknownName
}

// PromptListed reports, as names.ErrUnknownName, whether target's prompt is not exactly one
// its backend's prompts/list shows the caller: the list held for the caller as for ToolHeaders,
// else one fetched now (single-flight, as list requests are). A failed fetch is returned as the
// error: the name cannot be checked, and the caller fails closed.
func (c *Catalog) PromptListed(ctx context.Context, q *ToolHeaderQuery, target names.Target) error {
	b, err := c.backend(target.Upstream)
	if err != nil {
		return err
	}
	spec, _ := listSpecFor(wire.MethodPromptsList)
	idx, err := c.listIndex(ctx, q, b, spec)
	if err != nil {
		return err
	}
	if idx == nil || (idx.tools[target.Name] == nil && !idx.noCaller) {
		return names.ErrUnknownName
	}
	return nil
}

// noToolHeaders is the entry of a listed tool without bindings (and of every listed prompt);
// callers only read it.
var noToolHeaders = &ToolHeaders{}

// learnToolHeaders indexes a tools list just fetched from a backend, for whatever reason (a
// client's tools/list, most often), so that the calls that follow need not fetch it again.
// gen is the list's invalidation count from before it was requested.
func (c *Catalog) learnToolHeaders(b *backend.Backend, spec listSpec, q *listQuery, p *part, gen uint64) {
	if spec.kind != names.KindTool && spec.kind != names.KindPrompt && !spellsResources(spec.index) {
		return
	}
	version := q.version
	if version == "" {
		version = backend.ProtocolVersion
	}
	key := partKey{upstream: b.Name(), list: spec.index, version: version}
	if p.private {
		key.caller = privateKey(b, q.cacheKey, q.subject, q.subjectKey) // "" only without authentication, where every caller is one
	}
	c.toolHeaders.forPart(key, q.cacheKey, p, gen, c.now())
}

// recent returns an index built from a fetched list that is still young and whose list no
// list_changed has invalidated since, preferring the caller's own.
func (t *toolHeaderIndexes) recent(pub, own partKey, gen uint64, now time.Time) *headerIndex {
	t.mu.Lock()
	defer t.mu.Unlock()
	fresh := func(e *headerIndex) bool { return e != nil && e.gen == gen && now.Before(e.expires) }
	// A private list is indexed under its caller ("" only without authentication, where every
	// caller is the same one); a public one under no caller.
	if e, _ := t.entries.Get(own); fresh(e) && (e.private || own.caller == "") {
		return e
	}
	if e, _ := t.entries.Get(pub); fresh(e) && !e.private {
		return e
	}
	return nil
}

// forPart returns the index of p, building it unless the stored one was built from the same
// list. share is the caller whose share a private index counts against (its identity, whatever
// its token); it is ignored for key of no caller.
func (t *toolHeaderIndexes) forPart(key partKey, share string, p *part, gen uint64, now time.Time) *headerIndex {
	first := itemsIdentity(p.items)
	t.mu.Lock()
	e, _ := t.entries.Peek(key)
	t.mu.Unlock()
	if e != nil && e.from == first && e.n == len(p.items) && e.gen == gen {
		return e
	}
	if spellsResources(key.list) {
		return t.keep(key, share, buildSpellIndex(p, gen, now, first))
	}
	tools := key.list == toolsListIndex // else a prompts list
	e = &headerIndex{tools: make(map[string]*ToolHeaders, len(p.items)), from: first, n: len(p.items), gen: gen, private: p.private,
		expires: now.Add(max(time.Duration(p.ttlMs)*time.Millisecond, minHeaderIndexTTL)), noCaller: p.absent && p.private}
	if tools {
		e.apps = buildAppIndex(p.items)
	}
	// Every listed item has an entry, so that a call can tell a listed name from any other:
	// a tool with its bindings, any other item the shared empty entry.
	for i := range p.items {
		th := noToolHeaders
		if tools {
			if b := toolHeadersOf(p.items[i].raw, t.schemas); b != nil {
				th = b
			}
		}
		name := p.items[i].target.Name
		if prev := e.tools[name]; prev != nil && prev.Destructive && !th.Destructive {
			// Listed twice: destructive if either listing says so.
			c := *th
			c.Destructive = true
			th = &c
		}
		e.tools[name] = th
	}
	return t.keep(key, share, e)
}

// keep stores e under key, counted against share's part of the bound, and returns it.
func (t *toolHeaderIndexes) keep(key partKey, share string, e *headerIndex) *headerIndex {
	size := e.retainedBytes()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries.Put(key, e, shareOf(key, share), size) // one too large is used for this call, not kept
	return e
}

// Estimated memory of an index beyond its names: a map slot per listed item, and per tool of
// an MCP Apps index.
const (
	indexItemBytes = 64
	appToolBytes   = 48
)

// retainedBytes estimates the memory e keeps alive while kept: its names (which outlive the
// list they came from), bindings and schemas.
func (e *headerIndex) retainedBytes() int64 {
	n := int64(entryOverhead)
	for name, th := range e.tools {
		n += indexItemBytes + int64(len(name))
		if th != noToolHeaders {
			n += th.retainedBytes()
		}
	}
	if e.apps != nil {
		n += int64(len(e.apps.tools)) * appToolBytes
	}
	for k, v := range e.spell {
		n += indexItemBytes + int64(len(k)+len(v))
	}
	return n + templatesBytes(e.templates)
}

// retainedBytes estimates the memory th keeps alive, its schemas' text included (interned, so
// perhaps shared: counted in full all the same).
func (th *ToolHeaders) retainedBytes() int64 {
	n := int64(unsafe.Sizeof(*th)) + int64(len(th.Invalid))
	for _, b := range th.Bindings {
		n += int64(unsafe.Sizeof(b)) + int64(len(b.Header))
		for _, p := range b.Path {
			n += int64(unsafe.Sizeof(p)) + int64(len(p))
		}
	}
	if ts := th.Schemas; ts != nil {
		n += int64(unsafe.Sizeof(*ts))
		if ts.HasInput {
			n += int64(len(ts.Input.Value()))
		}
		if ts.HasOutput {
			n += int64(len(ts.Output.Value()))
		}
	}
	return n
}

// toolHeadersOf reads the bindings of one listed tool and whether it is destructive, nil when it
// declares neither; with schemas, also its schemas, and never nil. The item has passed the
// response scan.
func toolHeadersOf(tool []byte, schemas bool) *ToolHeaders {
	th := bindingsOf(tool)
	destructive := destructiveOf(tool)
	if !schemas && !destructive {
		return th
	}
	if th == nil {
		th = &ToolHeaders{}
	}
	th.Destructive = destructive
	if schemas {
		th.Schemas = toolSchemasOf(tool)
	}
	return th
}

// bindingsOf reads the x-mcp-header bindings of one listed tool, nil when it declares none.
func bindingsOf(tool []byte) *ToolHeaders {
	if !bytes.Contains(tool, []byte("x-mcp-header")) && !bytes.Contains(tool, []byte(`\u`)) {
		return nil // most tools: no parsing (an escape could spell the key, so those are parsed)
	}
	w := bindingWalker{seen: map[string]bool{}}
	_ = jsonrpc.Members(tool, func(k, v []byte) error {
		if string(k) == "inputSchema" && v[0] == '{' {
			w.schema(v, nil, true)
		}
		return nil
	})
	if w.invalid == "" && len(w.th.Bindings) == 0 {
		// Somewhere outside the input schema (a description, say): no binding.
		return nil
	}
	w.th.Invalid = w.invalid
	return &w.th
}

// destructiveOf reports whether a listed tool's annotations declare destructiveHint true, for
// server.confirmDestructiveTools. Members are matched by their exact (decoded) names, as clients
// read them: another spelling ("DestructiveHint": false beside "destructiveHint": true) changes
// nothing. Annotations or a hint that are there but not of their type (a string "true", which
// lax decoders read as true) count as true: what cannot be read as false is not known to be
// safe. A member given twice is destructive if either says so. Absent or null, they declare
// nothing.
func destructiveOf(tool []byte) bool {
	if !bytes.Contains(tool, []byte("destructiveHint")) && !bytes.Contains(tool, []byte(`\u`)) {
		return false // most tools: no parsing (an escape could spell the key, so those are parsed)
	}
	destructive := false
	_ = jsonrpc.Members(tool, func(k, ann []byte) error {
		if string(k) != "annotations" || string(ann) == "null" {
			return nil
		}
		if ann[0] != '{' {
			destructive = true
			return nil
		}
		return jsonrpc.Members(ann, func(k, hint []byte) error {
			if string(k) == "destructiveHint" && string(hint) != "null" && string(hint) != "false" {
				destructive = true
			}
			return nil
		})
	})
	return destructive
}

// toolSchemasOf reads a listed tool's schemas.
func toolSchemasOf(tool []byte) *ToolSchemas {
	ts := &ToolSchemas{}
	_ = jsonrpc.Members(tool, func(k, v []byte) error {
		switch string(k) {
		case "inputSchema":
			ts.Input, ts.HasInput = unique.Make(string(v)), true
		case "outputSchema":
			ts.Output, ts.HasOutput = unique.Make(string(v)), true
		}
		return nil
	})
	return ts
}

// bindingWalker collects the x-mcp-header annotations of an input schema and checks them
// against the rules: a non-empty token, unique without regard to case or to the punctuation
// between words, only on string, integer or boolean properties, and reached from the root
// through "properties" only.
type bindingWalker struct {
	th      ToolHeaders
	seen    map[string]bool // header names' mcpheader.ReadKey
	invalid string
}

func (w *bindingWalker) fail(why string) {
	if w.invalid == "" {
		w.invalid = why
	}
}

// schema walks a schema object at path; onPath says whether it is reached from the root through
// "properties" only.
func (w *bindingWalker) schema(obj []byte, path []string, onPath bool) {
	var header, typ string
	hasHeader := false
	_ = jsonrpc.Members(obj, func(k, v []byte) error {
		switch {
		case string(k) == "x-mcp-header":
			hasHeader = true
			if s, ok := wire.JSONString(v); ok {
				header = s
			}
		case string(k) == "type":
			typ, _ = wire.JSONString(v)
		case string(k) == "properties" && v[0] == '{':
			_ = jsonrpc.Members(v, func(name, sub []byte) error {
				if sub[0] == '{' {
					w.schema(sub, append(path[:len(path):len(path)], string(name)), onPath)
				}
				return nil
			})
		default:
			w.nested(v)
		}
		return nil
	})
	if !hasHeader {
		return
	}
	switch {
	case !onPath || len(path) == 0:
		w.fail("x-mcp-header outside a property reached through properties")
	case !validToken(header):
		w.fail("x-mcp-header is not a valid header name token")
	case typ != "string" && typ != "integer" && typ != "boolean":
		w.fail("x-mcp-header on a property that is not a string, integer or boolean")
	case w.seen[mcpheader.ReadKey(header)]:
		// Unique regardless of case, as SEP-2243 asks, and of the character between words:
		// servers that read headers as CGI variables (mcpheader.ReadsAs) read "Tenant_Id" and
		// "Tenant-Id" as one header, and so would take one argument's checked value for the
		// other's.
		w.fail("x-mcp-header names a header twice (ignoring case, and '_' or other punctuation for '-')")
	default:
		w.seen[mcpheader.ReadKey(header)] = true
		w.th.Bindings = append(w.th.Bindings, HeaderBinding{
			Header: http.CanonicalHeaderKey(mcpheader.ParamPrefix + header), Path: path})
	}
}

// nested walks a value that is not on a binding path (items, anyOf, $defs, …): any annotation
// found there makes the tool invalid.
func (w *bindingWalker) nested(v []byte) {
	switch v[0] {
	case '{':
		w.schema(v, nil, false)
	case '[':
		_ = wire.ForEachElem(v, func(elem []byte, _ int) error {
			w.nested(elem)
			return nil
		})
	}
}

// validToken reports whether s is an RFC 9110 token (§5.6.2).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// itemsIdentity is a digest of the items' sums (taken once when the list was read), which tells
// one list from another without holding on to either.
func itemsIdentity(items []listItem) [sha256.Size]byte {
	h := sha256.New()
	for i := range items {
		h.Write(items[i].sum[:])
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}
