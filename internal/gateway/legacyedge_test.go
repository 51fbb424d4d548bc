package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp/pre2026"
)

// TestLegacySettingsCarried: every setting of the legacy: block reaches the MCP endpoint's
// configuration unchanged. The settings are enumerated by reflection, so a field added to
// pre2026.Config is covered without touching this test.
func TestLegacySettingsCarried(t *testing.T) {
	seed := 0
	var want pre2026.Config
	fillSettings(t, reflect.ValueOf(&want).Elem(), &seed)
	block := map[string]any{}
	addYAML(t, block, want)
	raw, err := yaml.Marshal(map[string]any{"legacy": block})
	if err != nil {
		t.Fatal(err)
	}
	c := newConfig()
	if err := decodeYAML(bytes.NewReader(raw), &c); err != nil {
		t.Fatalf("the legacy block with every setting does not load: %v\n%s", err, raw)
	}
	if got := c.Legacy; !reflect.DeepEqual(got, want) {
		t.Errorf("pre2026.Config differs from the file:\n got %+v\nwant %+v\nfile:\n%s", got, want, raw)
	}
}

// TestLegacyDefaults: pre-2026 clients are served by default, with the documented limits; the
// file can turn them off; check-config refuses a version the edge cannot translate.
func TestLegacyDefaults(t *testing.T) {
	load := func(doc string) (*Config, error) {
		c := newConfig()
		if err := decodeYAML(strings.NewReader(doc), &c); err != nil {
			t.Fatal(err)
		}
		c.Auth.Disabled, c.Server.Listen = true, "127.0.0.1:0"
		if err := addUpstream(&c, "be=http://127.0.0.1:9/mcp"); err != nil {
			t.Fatal(err)
		}
		c.applyDefaults()
		return &c, c.validate()
	}
	c, err := load("{}")
	if err != nil {
		t.Fatal(err)
	}
	want := pre2026.Config{Enabled: true, Versions: []string{"2025-11-25", "2025-06-18", "2025-03-26"}, SessionTTL: 24 * time.Hour,
		GetStream: true, AskTimeout: 10 * time.Minute, MaxRounds: 10, MaxPendingPerSession: 8, MaxPendingPerCaller: 32,
		MaxBatchMessages: 32, MaxBatchBytes: 1 << 20, BatchConcurrency: 4, BatchTimeout: time.Minute}
	if got := c.Legacy; !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	if note := c.legacyNote(); !strings.Contains(note, "2025-11-25, 2025-06-18, 2025-03-26") || !strings.Contains(note, "single replica") {
		t.Errorf("check-config note %q", note)
	}
	if c, err = load("legacy: {enabled: false}"); err != nil || c.Legacy.Enabled {
		t.Fatalf("enabled: false not honoured: %v", err)
	}
	if note := c.legacyNote(); !strings.Contains(note, "refused") {
		t.Errorf("check-config note %q", note)
	}
	if _, err = load(`legacy: {versions: ["2024-11-05"]}`); err == nil || !strings.Contains(err.Error(), "legacy.versions") {
		t.Fatalf("an unserved version passed check-config: %v", err)
	}
	// legacy.maxBatchMessages is at most 1,000 (docs/legacy-2025-03-26.md): each message of a
	// batch is served as a request of its own.
	if _, err = load(`legacy: {maxBatchMessages: 1000}`); err != nil {
		t.Fatalf("maxBatchMessages 1000: %v", err)
	}
	if _, err = load(`legacy: {maxBatchMessages: 1001, maxBatchBytes: -1, batchConcurrency: -1}`); err == nil ||
		!strings.Contains(err.Error(), "legacy.maxBatchMessages") || !strings.Contains(err.Error(), "legacy.maxBatchBytes") ||
		!strings.Contains(err.Error(), "legacy.batchConcurrency") {
		t.Fatalf("batch bounds out of range passed check-config: %v", err)
	}
}

// TestLegacyClientsAuthenticated: with authentication on, a legacy client's initialize gets the
// same 401 challenge as any request (which starts its OAuth discovery); with a token it gets a
// session bound to its issuer and subject, which survives a token refresh and is 404 for anyone
// else, whose request reaches no backend. A go-sdk client pinned to 2025-11-25 then works under
// the same policy as a 2026-07-28 one.
func TestLegacyClientsAuthenticated(t *testing.T) {
	f := startAuthGateway(t)
	post := func(h http.Header, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, f.url(), strings.NewReader(body))
		req.Header = h
		res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = res.Body.Close() })
		return res
	}
	legacy := func(token, session string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		if session != "" {
			h.Set("Mcp-Session-Id", session)
			h.Set("MCP-Protocol-Version", "2025-11-25")
		}
		return h
	}
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"hi"}}}`

	anon := post(legacy("", ""), initialize)
	modern := post(mcptest.RequestHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if anon.StatusCode != 401 || anon.Header.Get("WWW-Authenticate") == "" ||
		anon.Header.Get("WWW-Authenticate") != modern.Header.Get("WWW-Authenticate") {
		t.Fatalf("legacy initialize without a token: %d %q; modern: %d %q", anon.StatusCode,
			anon.Header.Get("WWW-Authenticate"), modern.StatusCode, modern.Header.Get("WWW-Authenticate"))
	}

	alice := f.token(t, devissuer.Claims{"sub": "alice", "scope": "tools:read"})
	res := post(legacy(alice, ""), initialize)
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize with a token: %d", res.StatusCode)
	}
	refreshed := f.token(t, devissuer.Claims{"sub": "alice", "scope": "tools:read", "jti": "refreshed"})
	if res := post(legacy(refreshed, sid), call); res.StatusCode != 200 {
		t.Fatalf("alice's refreshed token with her session: %d", res.StatusCode)
	}
	f.alpha.Reset()
	bob := f.token(t, devissuer.Claims{"sub": "bob", "scope": "tools:read"})
	res = post(legacy(bob, sid), call)
	var body struct {
		ID    json.RawMessage
		Error struct{ Code int }
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	if res.StatusCode != 404 || body.Error.Code != -32600 || string(body.ID) != "null" {
		t.Fatalf("bob with alice's session: %d %+v", res.StatusCode, body)
	}
	if res := post(legacy("", sid), call); res.StatusCode != 401 {
		t.Fatalf("alice's session without a token: %d, want the 401 challenge", res.StatusCode)
	}
	if n := len(f.alpha.Requests()); n != 0 {
		t.Fatalf("the backend got %d requests from refused callers", n)
	}

	cs := mcptest.Connect(t, f.url(), mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithBearer(alice))
	got := toolNames(t, cs)
	if !contains(got, "alpha__echo") || contains(got, "alpha__progress") || contains(got, "beta__echo") {
		t.Fatalf("a legacy reader sees %v", got)
	}
	out, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || out.IsError || mcptest.ResultText(out) != "hi" {
		t.Fatalf("allowed call: %v %+v", err, out)
	}
	out, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__progress", Arguments: map[string]any{"steps": 1}})
	if err == nil && !out.IsError {
		t.Fatalf("a call the policy denies succeeded: %+v", out)
	}
}

// TestLegacyDisabledRefusal: with legacy.enabled false the gateway refuses a legacy client's
// initialize as before, naming the versions it speaks and the one asked for.
func TestLegacyDisabledRefusal(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startTestGateway(t, func(c *Config) { c.Legacy.Enabled = false }, be)
	_, err := mcptest.Dial(t.Context(), "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"))
	if err == nil || !strings.Contains(err.Error(), "Bad Request") {
		t.Fatalf("a legacy client connected to a gateway that does not serve it: %v", err)
	}
	// The refusal the README's status table describes: -32022 with supported and requested
	// (the initialize's protocolVersion), and a message naming both.
	h := modernHeaders("initialize", "")
	h.Del("MCP-Protocol-Version")
	status, _, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	var r struct {
		Error struct {
			Code    int
			Message string
			Data    struct {
				Supported []string
				Requested string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%d %s: %v", status, body, err)
	}
	e := r.Error
	if status != 400 || e.Code != -32022 || !slices.Equal(e.Data.Supported, []string{"2026-07-28"}) ||
		e.Data.Requested != "2025-06-18" || !strings.Contains(e.Message, "2025-06-18") || !strings.Contains(e.Message, "2026-07-28") {
		t.Errorf("initialize with legacy.enabled false: %d %s", status, body)
	}
}

// TestLegacyRateLimited: a legacy caller over its rate limit gets the 429 with Retry-After that a
// 2026-07-28 caller gets, not an in-band error, so its client backs off.
func TestLegacyRateLimited(t *testing.T) {
	f := startAuthGatewayWith(t, func(c *Config) {
		c.RateLimit.PerCaller = "1/h burst 2"
	})
	alice := f.token(t, devissuer.Claims{"sub": "alice", "scope": "tools:read"})
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Authorization": {"Bearer " + alice}, "Mcp-Protocol-Version": {"2025-11-25"}}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"hi"}}}`
	var last *http.Response
	for range 3 {
		req, _ := http.NewRequest(http.MethodPost, f.url(), strings.NewReader(call))
		req.Header = h
		res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		last = res
	}
	if last.StatusCode != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
		t.Fatalf("the third call: %d, Retry-After %q", last.StatusCode, last.Header.Get("Retry-After"))
	}
}
