package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// Backend defaults and caps.
const (
	DefaultBackendName     = "fast"
	DefaultBackendPath     = "/mcp"
	DefaultBackendProgress = 3
	DefaultBackendTTLMs    = 60_000
	DefaultBackendScope    = "public"
	// MaxBackendTools bounds tools/list, which is returned as one page.
	MaxBackendTools = 10_000
	// MaxProgressSteps bounds the notifications one progress call sends.
	MaxProgressSteps = 10_000
	// backendMaxBody is the largest request body the backend reads (413 above).
	backendMaxBody = 4 << 20
)

// BackendConfig configures the fast benchmark backend.
type BackendConfig struct {
	// Name is the serverInfo name. Default DefaultBackendName.
	Name string
	// Path is the MCP endpoint path. Default DefaultBackendPath.
	Path string
	// Tools is how many tools tools/list returns: the real ones (echo, progress, confirm, slow,
	// blob) first, then fillers tool_0006… that answer "ok". Default (and minimum) the real ones;
	// at most MaxBackendTools.
	Tools int
	// Progress is how many notifications the progress tool sends when its arguments give no
	// steps. Default DefaultBackendProgress; at most MaxProgressSteps.
	Progress int
	// TTLMs is the ttlMs of server/discover and tools/list results (docs/protocol.md §5.1). Default
	// DefaultBackendTTLMs; negative means 0.
	TTLMs int
	// CacheScope is their cacheScope, "public" or "private". Default DefaultBackendScope.
	CacheScope string
}

func (c BackendConfig) withDefaults() BackendConfig {
	if c.Name == "" {
		c.Name = DefaultBackendName
	}
	if c.Path == "" {
		c.Path = DefaultBackendPath
	}
	c.Tools = max(c.Tools, len(realTools))
	if c.Progress == 0 {
		c.Progress = DefaultBackendProgress
	}
	if c.TTLMs == 0 {
		c.TTLMs = DefaultBackendTTLMs
	}
	c.TTLMs = max(c.TTLMs, 0)
	if c.CacheScope == "" {
		c.CacheScope = DefaultBackendScope
	}
	return c
}

// Validate reports every problem with c; it changes nothing.
func (c BackendConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Tools > MaxBackendTools {
		errs = append(errs, fmt.Errorf("tools %d exceeds %d", c.Tools, MaxBackendTools))
	}
	if c.Progress < 0 || c.Progress > MaxProgressSteps {
		errs = append(errs, fmt.Errorf("progress %d must be in [0, %d]", c.Progress, MaxProgressSteps))
	}
	if c.CacheScope != "public" && c.CacheScope != "private" {
		errs = append(errs, fmt.Errorf("cache scope %q must be public or private", c.CacheScope))
	}
	if !strings.HasPrefix(c.Path, "/") {
		errs = append(errs, fmt.Errorf("path %q must start with /", c.Path))
	}
	return errors.Join(errs...)
}

// Backend is a minimal, strict MCP 2026-07-28 server for benchmarks: it checks what a real
// server checks (mirrored headers, required _meta, version) and answers from pre-rendered bytes,
// so a comparison measures the hop in front of it rather than the backend.
type Backend struct {
	cfg      BackendConfig
	meta     string // ,"_meta":{serverInfo} for every result
	discover []byte
	list     []byte
	done     chan struct{}
	once     sync.Once
	// blobMu guards blobs, the blob tool's rendered results by size.
	blobMu sync.Mutex
	blobs  map[int][]byte
}

// NewBackend validates cfg and pre-renders the discover and tools/list results.
func NewBackend(cfg BackendConfig) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	info, _ := json.Marshal(map[string]string{"name": cfg.Name, "version": "1"})
	b := &Backend{cfg: cfg, meta: `,"_meta":{"` + jsonrpc.MetaServerInfo + `":` + string(info) + `}`,
		done: make(chan struct{})}
	cache := fmt.Sprintf(`,"ttlMs":%d,"cacheScope":"%s"`, cfg.TTLMs, cfg.CacheScope)
	b.discover = []byte(`{"resultType":"complete","supportedVersions":["` + ProtocolVersion +
		`"],"capabilities":{"tools":{"listChanged":true}}` + b.meta + cache + `}`)
	b.list = []byte(`{"resultType":"complete","tools":` + string(renderTools(cfg.Tools)) + b.meta + cache + `}`)
	return b, nil
}

// Close ends every held subscriptions/listen stream with its closing result (docs/protocol.md §5.5).
func (b *Backend) Close() { b.once.Do(func() { close(b.done) }) }

// exchange is one decoded request.
type exchange struct {
	id     json.RawMessage
	method string
	raw    json.RawMessage // the params object
	params *jsonrpc.Params
	meta   *jsonrpc.Meta
}

// ServeHTTP answers one POST (docs/protocol.md §2.1).
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != b.cfg.Path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	x, status, err := b.decode(w, r)
	switch {
	case err != nil:
		writeError(w, status, x.id, err)
	case x.id == nil:
		w.WriteHeader(http.StatusAccepted)
	default:
		b.dispatch(w, r, x)
	}
}

// decode reads, parses and checks a request in the order docs/protocol.md §8 describes: body, headers
// against body (§2.2–§2.3, mismatch before version), then the required _meta (§1).
func (b *Backend) decode(w http.ResponseWriter, r *http.Request) (*exchange, int, error) {
	x := &exchange{}
	accept := r.Header.Get("Accept")
	if !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
		return x, http.StatusBadRequest, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Accept must list application/json and text/event-stream")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, backendMaxBody))
	if err != nil {
		return x, http.StatusRequestEntityTooLarge, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "body too large")
	}
	req, err := jsonrpc.Decode(body, jsonrpc.Limits{})
	if err != nil {
		x.id = jsonrpc.IDOf(body)
		return x, http.StatusBadRequest, err
	}
	x.id, x.method, x.raw = req.ID, req.Method, req.Params
	if x.params, err = jsonrpc.ParseParams(req.Params); err != nil {
		return x, http.StatusBadRequest, err
	}
	if x.meta, err = jsonrpc.ParseMeta(x.params.Meta); err != nil {
		return x, http.StatusBadRequest, err
	}
	if x.id == nil {
		return x, 0, nil
	}
	return x, http.StatusBadRequest, checkHeaders(r.Header, x)
}

func checkHeaders(h http.Header, x *exchange) error {
	mismatch := func(name string) error {
		return jsonrpc.NewError(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+name+" header does not match the body")
	}
	if h.Get(mcpheader.ProtocolVersion) != x.meta.ProtocolVersion || !x.meta.HasVersion {
		if !x.meta.HasVersion || x.meta.ClientCapabilities == nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: missing required _meta")
		}
		return mismatch(mcpheader.ProtocolVersion)
	}
	if h.Get(mcpheader.Method) != x.method {
		return mismatch(mcpheader.Method)
	}
	if x.method == "tools/call" {
		name, err := mcpheader.Decode(h.Get(mcpheader.Name))
		if err != nil || name != x.params.Name || !x.params.HasName {
			return mismatch(mcpheader.Name)
		}
	}
	if x.meta.ClientCapabilities == nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: missing required _meta "+jsonrpc.MetaClientCapabilities)
	}
	if x.meta.ProtocolVersion != ProtocolVersion {
		return jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version").
			WithData(map[string]any{"supported": []string{ProtocolVersion}, "requested": x.meta.ProtocolVersion})
	}
	return nil
}

func (b *Backend) dispatch(w http.ResponseWriter, r *http.Request, x *exchange) {
	switch x.method {
	case "server/discover":
		writeResult(w, x.id, b.discover)
	case "tools/list":
		if x.params.HasCursor {
			// One page only, so no cursor was ever issued (docs/protocol.md §5.1: bad cursor → -32602).
			writeError(w, http.StatusBadRequest, x.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: unknown cursor"))
			return
		}
		writeResult(w, x.id, b.list)
	case "tools/call":
		b.call(w, r, x)
	case "subscriptions/listen":
		b.listen(w, r, x)
	default:
		writeError(w, http.StatusNotFound, x.id, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"))
	}
}

// writeResult writes a JSON response; the status of an error follows docs/protocol.md §2.3.
func writeResult(w http.ResponseWriter, id, result []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(jsonrpc.AppendResult(make([]byte, 0, len(result)+48), id, result))
}

func writeError(w http.ResponseWriter, status int, id json.RawMessage, err error) {
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		e = jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error")
	}
	if e.Code == jsonrpc.CodeMethodNotFound {
		status = http.StatusNotFound
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.AppendError(nil, id, e))
}
