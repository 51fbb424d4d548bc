package mcphttp

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/toolsearch"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Search mode (docs/toolsets.md): tools/list shows two meta-tools instead of the catalog.
// find_tools ranks the catalog against a task and returns the best tools the caller may call,
// with their full definitions; call_tool runs one. Nothing is kept between requests: the index
// is a function of the catalog's content, built once per version on each replica, and a
// call_tool is rewritten into the inner tools/call before stage route, so routing, policy, step-up,
// confirmation, parameter headers, rate limits, metrics and logs all see the tool that runs.

// The meta-tools' names. Configuration refuses a backend name that, with the namespace
// separator, could make a namespaced tool of either name (backend "find" with separator "_");
// with namespace.noPrefix, a backend's own tool of either name is hidden on a search endpoint
// (searchindex.go) and stays callable on the others.
const (
	findToolsName = "find_tools"
	callToolName  = "call_tool"
)

// MetaToolNames are the names of the tools search mode lists instead of the catalog.
func MetaToolNames() []string { return []string{findToolsName, callToolName} }

// maxQueryBytes bounds a find_tools query.
const maxQueryBytes = 1024

// searchMode is an endpoint's compiled SearchConfig.
type searchMode struct {
	always []authz.Glob // namespaced tool-name globs listed besides the meta-tools
	max    int
}

// newSearchMode compiles c, with its defaults.
func newSearchMode(c SearchConfig) *searchMode {
	m := &searchMode{always: compileGlobs(c.AlwaysVisible), max: c.MaxResults}
	if m.max == 0 {
		m.max = DefaultSearchResults
	}
	return m
}

// alwaysVisible reports whether tools/list shows the tool of this namespaced name beside the
// meta-tools (still only if the set and the caller's policy show it).
func (m *searchMode) alwaysVisible(name string) bool {
	for _, p := range m.always {
		if p.Match(name) {
			return true
		}
	}
	return false
}

// findToolsDef and callToolDef are the meta-tools' definitions as tools/list shows them.
var findToolsDef = []byte(`{"name":"find_tools","title":"Find tools",` +
	`"description":"Search the tools available here for the ones that can do a task, and get their full definitions. ` +
	`Describe the task in a few words (for example \"create an issue in a repository\" or \"take a screenshot of the page\"). ` +
	`Call a tool it returns with call_tool, or directly by its name.",` +
	`"inputSchema":{"type":"object","properties":{` +
	`"query":{"type":"string","description":"The task to find tools for, in words."},` +
	`"limit":{"type":"integer","minimum":1,"description":"How many tools to return at most."}},` +
	`"required":["query"]},` +
	`"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`)

var callToolDef = []byte(`{"name":"call_tool","title":"Call a tool",` +
	`"description":"Call a tool that find_tools returned, by its name, with its arguments as its input schema describes them. ` +
	`The call is the tool's own: it may ask for confirmation, and it is refused if the tool is not available to you.",` +
	`"inputSchema":{"type":"object","properties":{` +
	`"name":{"type":"string","description":"The tool's name, exactly as find_tools returned it."},` +
	`"arguments":{"type":"object","description":"The tool's arguments."}},` +
	`"required":["name"]}}`)

// searchInstructions are server/discover's instructions on a search endpoint without its own.
const searchInstructions = "This server lists only find_tools and call_tool: call find_tools with a short " +
	"description of the task to get the tools that can do it, then call one with call_tool (or directly by its name)."

// searcher serves search mode: the meta-tools' list, find_tools over this replica's index of
// the catalog, and call_tool's rewrite into the inner call. It holds only what those need.
type searcher struct {
	backends *upstreams.Registry
	index    *indexCache
	metrics  *metrics.ToolsetRecorder
}

// endpoint is stage endpoint, search mode's part of a request, after the caller is admitted
// and before routing: tools/list of a search endpoint; find_tools answered here; call_tool
// rewritten into the inner tools/call that the later stages run. handled is true when the
// request has been answered.
func (sr *searcher) endpoint(x *request) (handled bool, err error) {
	if x.set == nil {
		return false, nil
	}
	switch x.in.req.Method {
	case upstreams.MethodToolsList:
		if x.set.search != nil {
			return true, sr.listSearch(x)
		}
	case upstreams.MethodToolsCall:
		if x.set.search == nil {
			return false, nil
		}
		switch x.in.params.Name {
		case findToolsName:
			// find_tools declares no x-mcp-header argument either.
			if err := refuseParamHeaders(x.hdr); err != nil {
				return true, err
			}
			return true, sr.findTools(x)
		case callToolName:
			return false, sr.unwrapCall(x)
		}
	}
	return false, nil
}

// catalog fetches the merged tool catalog as list() would for this caller. As for a list, the
// body's buffer goes to the garbage collector rather than the pool: a backend fetch this request
// starts is shared, may outlive it, and sends the client's _meta, a slice of the body.
func (sr *searcher) catalog(x *request) (*upstreams.ToolCatalog, error) {
	x.in.bodyBuf.Detach()
	params, err := x.withTrace(x.in.req.Params)
	if err != nil {
		return nil, err
	}
	return sr.backends.ToolCatalog(x.ctx, &upstreams.ListRequest{
		Method:       upstreams.MethodToolsList,
		Params:       params,
		Header:       x.passHeaders(),
		CacheKey:     x.subject(),
		SubjectToken: x.listSubjectToken(),
		SubjectKey:   x.caller.keyOf(x.listSubjectToken()),
		Reaches:      reachesFor(x.set, x.s.auth, x.caller.principal),
	})
}

// indexOwner is the caller a private catalog's index (and its tools' texts to embed) counts
// against, "" for a public one: the key of every other per-caller bound, the client address's
// without authentication, so that a private catalog is never taken for everyone's.
func indexOwner(x *request, cat *upstreams.ToolCatalog) string {
	if !cat.Private() {
		return ""
	}
	return x.bound()
}

// listSearch is tools/list in search mode: the meta-tools, then the always-visible tools the
// caller may see, in one page. A cursor is refused: this list has one page.
func (sr *searcher) listSearch(x *request) error {
	if x.in.params.HasCursor {
		return invalidParams("Invalid params: invalid cursor")
	}
	cat, err := sr.catalog(x)
	if err != nil {
		return err
	}
	visible, private := x.visibility()
	out := make([]byte, 0, 2048)
	out = append(out, `{"tools":[`...)
	out = append(out, findToolsDef...)
	out = append(out, ',')
	out = append(out, callToolDef...)
	if len(x.set.search.always) > 0 {
		ix, err := sr.index.get(x.ctx, cat, indexOwner(x, cat))
		if err != nil {
			return err
		}
		view := newListView(x)
		for i, t := range ix.tools {
			if !ix.reserved[i] && x.set.search.alwaysVisible(ix.names[i]) && view.shows(t.Target) {
				out = append(out, ',')
				out = view.appendItem(out, t)
			}
		}
	}
	out = append(out, ']')
	scope := "public"
	if private || cat.Private() {
		scope = "private"
	}
	out = append(out, `,"ttlMs":`...)
	out = strconv.AppendInt(out, cat.TTLMs(), 10)
	out = append(out, `,"cacheScope":"`+scope+`","resultType":"complete"}`...)
	sr.metrics.ContextBytes(x.set.name, cat.Bytes(visible), len(out))
	_ = x.answer(out, outcomeOK)
	return nil
}

// findTools answers find_tools: the best matches among the tools this caller may call on this
// endpoint, full definitions, as structured content and as text. The ranking is computed over
// exactly those tools (the catalog a tools/list of this caller reads, filtered by its view), so
// a tool the caller may not see, that pinning blocked or flagged as shadowing another backend's,
// neither appears nor weighs.
func (sr *searcher) findTools(x *request) error {
	x.route.name = findToolsName // the access log names the meta-tool
	query, limit, err := sr.searchArgs(x)
	if err != nil {
		return err
	}
	cat, err := sr.catalog(x)
	if err != nil {
		return err
	}
	ix, err := sr.index.get(x.ctx, cat, indexOwner(x, cat))
	if err != nil {
		return err
	}
	view := newListView(x)
	allow := func(i int) bool { return ix.ranks(i) && view.shows(ix.tools[i].Target) }
	var hits []toolsearch.Hit
	if d, ok := sr.dense(x, ix, query); ok {
		hits = ix.ranker.SearchFused(query, limit, allow, d)
	} else {
		hits = ix.ranker.Search(query, limit, allow)
	}
	list := sr.appendFound(x, make([]byte, 0, 4096), ix, hits, view)
	out := make([]byte, 0, 2*len(list)+128)
	out = append(out, `{"content":[{"type":"text","text":`...)
	out = jsonrpc.AppendString(out, string(list))
	out = append(out, `}],"structuredContent":`...)
	out = append(out, list...)
	out = append(out, `,"isError":false}`...)
	sr.metrics.Search(x.set.name, len(hits))
	_ = x.answer(out, outcomeOK)
	return nil
}

// dense is the embeddings of the query and of the version's tools when the endpoint is on and
// answers within its timeout; otherwise ok is false and the search ranks lexically.
func (sr *searcher) dense(x *request, ix *catalogIndex, query string) (d toolsearch.Dense, ok bool) {
	if ix.vectors == nil {
		return d, false
	}
	q, tools, ok := sr.index.embed.Dense(x.ctx, ix.vectors, x.bound(), query)
	if !ok {
		return d, false
	}
	method, weight, k := sr.index.embed.Fusion()
	return toolsearch.Dense{Query: q, Tools: tools, Method: toolsearch.ParseFusion(method), Weight: weight, K: k}, true
}

// appendFound appends find_tools' answer: {"tools": the definitions shown, best first,
// "backends": the backend of every tool the answer names, "similar": for a tool shown, the
// near-duplicates from other backends that share its slot}. Naming the backend lets the caller
// tell a tool from a copy of it served by another backend.
func (sr *searcher) appendFound(x *request, out []byte, ix *catalogIndex, hits []toolsearch.Hit, view listView) []byte {
	out = append(out, `{"tools":[`...)
	for i, h := range hits {
		if i > 0 {
			out = append(out, ',')
		}
		out = view.appendItem(out, ix.tools[h.Index])
	}
	out = append(out, `],"backends":{`...)
	n := 0
	for _, h := range hits {
		for _, j := range append([]int{h.Index}, h.Similar...) {
			if n > 0 {
				out = append(out, ',')
			}
			n++
			out = jsonrpc.AppendString(out, ix.names[j])
			out = append(out, ':')
			out = jsonrpc.AppendString(out, ix.tools[j].Target.Upstream)
		}
	}
	out = append(out, '}')
	first := true
	for _, h := range hits {
		if len(h.Similar) == 0 {
			continue
		}
		if first {
			out = append(out, `,"similar":{`...)
		} else {
			out = append(out, ',')
		}
		first = false
		out = jsonrpc.AppendString(out, ix.names[h.Index])
		out = append(out, ":["...)
		for k, j := range h.Similar {
			if k > 0 {
				out = append(out, ',')
			}
			out = jsonrpc.AppendString(out, ix.names[j])
		}
		out = append(out, ']')
	}
	if !first {
		out = append(out, '}')
	}
	return append(out, '}')
}

// searchArgs reads find_tools' arguments: query (a non-empty string) and limit (a whole number
// however written, bounded by the endpoint's maximum).
func (sr *searcher) searchArgs(x *request) (string, int, error) {
	if x.in.params.Arguments == nil {
		return "", 0, invalidParams("Invalid params: find_tools needs arguments {query, limit}")
	}
	query, limit, hasQuery := "", DefaultSearchResults, false
	err := jsonrpc.Members(x.in.params.Arguments, func(key, val []byte) error {
		switch string(key) {
		case "query":
			hasQuery = json.Unmarshal(val, &query) == nil
		case "limit":
			// Any literal of a whole number, as the schema's "integer" takes it (2, 2.0, 2e0),
			// within the integers every client's decoder holds exactly.
			n, ok := safeInteger(string(val))
			if !ok || n < 1 {
				return invalidParams("Invalid params: limit must be a positive integer")
			}
			limit = int(min(n, int64(x.set.search.max)))
		default:
			return invalidParams("Invalid params: find_tools takes only query and limit")
		}
		return nil
	})
	switch {
	case err != nil:
		return "", 0, err
	case !hasQuery || strings.TrimSpace(query) == "":
		return "", 0, invalidParams("Invalid params: query must be a non-empty string")
	case len(query) > maxQueryBytes || !utf8.ValidString(query):
		return "", 0, invalidParams("Invalid params: query is too long")
	}
	return query, min(limit, x.set.search.max), nil
}

// unwrapCall rewrites call_tool({name, arguments}) into the tools/call of the named tool, as if
// the client had sent it: params keep every other member (_meta, requestState, inputResponses),
// and the request's headers are those a client would have sent for the inner call (Mcp-Name
// naming the inner tool, Mcp-Param-* mirroring its arguments as it declares them), checked again
// by stage headers as for any request. Every later stage then sees the inner tool only. A name that is
// a meta-tool is unknown: call_tool does not nest.
func (sr *searcher) unwrapCall(x *request) error {
	// call_tool declares no x-mcp-header argument: a Mcp-Param-* header on it is refused as on
	// any tool that does not declare it, never carried over to the inner call.
	if err := refuseParamHeaders(x.hdr); err != nil {
		return err
	}
	name, args, err := callArgs(x.in.params.Arguments)
	if err != nil {
		return err
	}
	if name == findToolsName || name == callToolName {
		return unknownNamed("tool", name, separator(x.s.backends))
	}
	raw, err := innerParams(x.in.req.Params, name, args)
	if err != nil {
		return err
	}
	params, err := jsonrpc.ParseParams(raw)
	if err != nil {
		return err
	}
	req := *x.in.req
	req.Params = raw
	x.in.req, x.in.params = &req, params
	x.viaCallTool = true
	if x.internal {
		// A request another edge built carries no Mcp-* headers of its client's: stage
		// bind-headers gives the backend those of the inner tool.
		return nil
	}
	if err := sr.innerHeaders(x, name); err != nil {
		return err
	}
	// Stage headers again, on the rewritten request: the same checks as a direct call.
	return checkHeaders(x.hdr, x.in.h, x.in.req.Method, x.in.params)
}

// callArgs reads call_tool's arguments: name (a non-empty string) and arguments (an object, or
// absent). Spelling variants of either are refused, as for the params of any request.
func callArgs(raw json.RawMessage) (string, json.RawMessage, error) {
	if raw == nil {
		return "", nil, invalidParams("Invalid params: call_tool needs arguments {name, arguments}")
	}
	p, err := jsonrpc.ParseParams(raw)
	if err != nil {
		return "", nil, err
	}
	err = jsonrpc.Members(raw, func(key, _ []byte) error {
		if k := string(key); k != "name" && k != "arguments" {
			return invalidParams("Invalid params: call_tool takes only name and arguments")
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if !p.HasName || p.Name == "" {
		return "", nil, invalidParams("Invalid params: call_tool needs the name of the tool to call")
	}
	return p.Name, p.Arguments, nil
}

// innerParams is outer with name and arguments replaced by the inner call's.
func innerParams(outer json.RawMessage, name string, args json.RawMessage) (json.RawMessage, error) {
	out := make([]byte, 0, len(outer)+len(name))
	out = append(out, '{')
	sep := false
	err := jsonrpc.Members(outer, func(key, val []byte) error {
		switch string(key) {
		case "name", "arguments":
			return nil
		}
		if sep {
			out = append(out, ',')
		}
		out = jsonrpc.AppendString(out, string(key))
		out = append(out, ':')
		out = append(out, val...)
		sep = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if sep {
		out = append(out, ',')
	}
	out = append(out, `"name":`...)
	out = jsonrpc.AppendString(out, name)
	if args != nil {
		out = append(out, `,"arguments":`...)
		out = append(out, args...)
	}
	return append(out, '}'), nil
}

// innerHeaders gives the request the headers of the inner call: the client's transport headers
// (Authorization, trace context, X-Request-Id), Mcp-Name naming the inner tool, and the
// Mcp-Param-* headers the inner tool declares, computed from its arguments as a client would.
// Stage bind-headers checks them against the arguments as for any call; an argument that
// cannot be mirrored is left without a header, and refused there.
func (sr *searcher) innerHeaders(x *request, name string) error {
	h := x.hdr.Clone()
	h.Del(mcpheader.Name)
	for k := range h {
		if strings.HasPrefix(k, mcpheader.ParamPrefix) {
			delete(h, k)
		}
	}
	h.Set(mcpheader.Name, mcpheader.Encode(name))
	// Only for a tool the caller may see: for any other, stage route or authorize answers "unknown tool",
	// and no error of fetching its bindings may tell it apart.
	visible, _ := x.visibility()
	if target, err := sr.backends.Resolve(upstreams.KindTool, name); err == nil &&
		(visible == nil || visible(upstreams.KindTool, target)) {
		q := listQuery(x, target, true)
		th, err := sr.backends.ToolHeaders(x.ctx, &q, target)
		if err != nil && !errors.Is(err, upstreams.ErrUnknownName) {
			return err
		}
		// An unlisted tool has no bindings; stage bind-headers refuses it as an unknown tool.
		if th != nil && th.Invalid == "" {
			for i := range th.Bindings {
				bd := &th.Bindings[i]
				val, err := argumentAt(x.in.params.Arguments, bd.Path)
				if err != nil || val == nil {
					continue
				}
				if want, ok := mirrored(val); ok {
					h.Set(bd.Header, mcpheader.Encode(want))
				}
			}
		}
	}
	x.hdr = h
	return nil
}
