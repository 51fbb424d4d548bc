package pre2026

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyClassification: the era of each kind of POST (docs/protocol.md §9.1).
func TestLegacyClassification(t *testing.T) {
	served := DefaultLegacyVersions()
	modernMeta := &jsonrpc.Meta{HasVersion: true, ProtocolVersion: mcphttp.ProtocolVersion}
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		method string
		meta   *jsonrpc.Meta
		header http.Header
		want   class
	}{
		{"modern _meta", "tools/list", modernMeta, h("MCP-Protocol-Version", mcphttp.ProtocolVersion), classModern},
		{"modern _meta ignores the session id", "tools/list", modernMeta, h("Mcp-Session-Id", "s1.x"), classModern},
		{"modern _meta on initialize", "initialize", modernMeta, h(), classModern},
		{"2026 header without _meta", "tools/list", &jsonrpc.Meta{}, h("MCP-Protocol-Version", mcphttp.ProtocolVersion), classModern},
		{"a later header", "tools/list", nil, h("MCP-Protocol-Version", "2027-01-01"), classModern},
		{"initialize without header", "initialize", &jsonrpc.Meta{}, h(), classInitialize},
		{"initialize with a legacy header", "initialize", nil, h("MCP-Protocol-Version", "2025-06-18"), classInitialize},
		{"initialize with a session", "initialize", nil, h("Mcp-Session-Id", "s1.x"), classInitialize},
		{"session", "tools/list", nil, h("Mcp-Session-Id", "s1.x"), classSession},
		{"session and header", "tools/call", nil, h("Mcp-Session-Id", "s1.x", "MCP-Protocol-Version", "2025-11-25"), classSession},
		{"posted answer with a session", "", nil, h("Mcp-Session-Id", "s1.x"), classSession},
		{"session-less 2025-11-25", "tools/list", nil, h("MCP-Protocol-Version", "2025-11-25"), classSessionless},
		{"session-less 2025-06-18", "ping", nil, h("MCP-Protocol-Version", "2025-06-18"), classSessionless},
		{"unserved legacy header", "tools/list", nil, h("MCP-Protocol-Version", "2024-11-05"), classModern},
		{"header twice", "tools/list", nil, h("MCP-Protocol-Version", "2025-11-25", "MCP-Protocol-Version", "2025-11-25"), classModern},
		{"nothing", "tools/list", nil, h(), classNoVersion},
		{"nothing, posted answer", "", nil, h(), classNoVersion},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.method, tt.meta, tt.header, served); got != tt.want {
				t.Fatalf("class %d, want %d", got, tt.want)
			}
		})
	}
}

// FuzzLegacyClassify holds classification to its rules for any body and headers: a request with
// the modern _meta, or a 2026-07-28 (or later) header, is always modern; initialize without them
// is always the handshake; and a request that does not decode is never taken for a legacy
// request unless it is a JSON-RPC response.
func FuzzLegacyClassify(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`), "", "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`), "2026-07-28", "s1.x")
	f.Add([]byte(`{"jsonrpc":"2.0","id":"g1.a.b","result":{}}`), "2025-11-25", "s1.x")
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "", "s1.y")
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`), "2025-06-18", "")
	served := DefaultLegacyVersions()
	f.Fuzz(func(t *testing.T, body []byte, version, session string) {
		h := http.Header{}
		if version != "" {
			h.Set("MCP-Protocol-Version", version)
		}
		if session != "" {
			h.Set("Mcp-Session-Id", session)
		}
		method, meta := "", (*jsonrpc.Meta)(nil)
		req, err := jsonrpc.Decode(body, jsonrpc.Limits{})
		if err == nil {
			method = req.Method
			if p, perr := jsonrpc.ParseParams(req.Params); perr == nil {
				meta, _ = jsonrpc.ParseMeta(p.Meta)
			}
		} else if m, merr := jsonrpc.DecodeMessage(body, jsonrpc.Limits{}); merr != nil || !m.IsResponse() {
			return // the modern path's decode error stands, whatever the class
		}
		got := classify(method, meta, h, served)
		switch {
		case meta != nil && meta.HasVersion && got != classModern:
			t.Fatalf("modern _meta classified %d", got)
		case version >= mcphttp.ProtocolVersion && got != classModern:
			t.Fatalf("header %q classified %d", version, got)
		case method == "initialize" && (meta == nil || !meta.HasVersion) && version < mcphttp.ProtocolVersion && got != classInitialize:
			t.Fatalf("initialize classified %d", got)
		case got == classSessionless && session != "":
			t.Fatal("a request with a session id taken for session-less")
		}
	})
}

// TestLegacyInitialize: initialize is answered by the gateway from its merged discover data, with
// the negotiated version, the capabilities it serves, a session id carrying the client's
// normalised capabilities, and no backend request once the discover data is cached (the backend
// says for how long, as for server/discover).
func TestLegacyInitialize(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithCacheHints(60_000, "public"), mcptest.WithInstructions("be notes"))
	gw, s := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	_, _ = legacyInit(t, gw.URL, "2025-11-25", `{}`) // warms the discover cache
	be.Reset()
	for _, tt := range []struct{ requested, want, caps, wantCaps string }{
		{"2025-11-25", "2025-11-25", `{"elicitation":{},"roots":{"listChanged":true},"experimental":{"x":{}}}`, `{"elicitation":{"form":{}},"roots":{}}`},
		// Before 2025-11-25 sampling had no context flag: includeContext came with sampling.
		{"2025-06-18", "2025-06-18", `{"sampling":{}}`, `{"sampling":{"context":{}}}`},
		// 2025-03-26 has no elicitation: a session never declares it, whatever the client sent.
		{"2025-03-26", "2025-03-26", `{"elicitation":{},"sampling":{},"roots":{"listChanged":true}}`, `{"roots":{},"sampling":{"context":{}}}`},
		// Older than every served version: the nearest served one (era.NegotiateVersion).
		{"2024-11-05", "2025-03-26", `{}`, `{}`},
		{"2099-01-01", "2025-11-25", `{}`, `{}`},
	} {
		t.Run(tt.requested, func(t *testing.T) {
			sid, r := legacyInit(t, gw.URL, tt.requested, tt.caps)
			var res struct {
				ID     json.RawMessage
				Result struct {
					ProtocolVersion string                     `json:"protocolVersion"`
					Capabilities    map[string]json.RawMessage `json:"capabilities"`
					ServerInfo      struct{ Name string }      `json:"serverInfo"`
					ResultType      *string                    `json:"resultType"`
				}
			}
			if err := json.Unmarshal(r.Body, &res); err != nil {
				t.Fatal(err)
			}
			if string(res.ID) != "0" || res.Result.ProtocolVersion != tt.want || res.Result.ResultType != nil {
				t.Fatalf("result %s, want version %s, id 0 and no resultType", r.Body, tt.want)
			}
			if !strings.Contains(string(r.Body), "be notes") {
				t.Errorf("the merged instructions are missing: %s", r.Body)
			}
			if _, ok := res.Result.Capabilities["tools"]; !ok {
				t.Errorf("capabilities %s lack tools", r.Body)
			}
			if string(res.Result.Capabilities["logging"]) != `{}` {
				t.Errorf("capabilities %s lack logging (the edge keeps the session's level)", r.Body)
			}
			if string(res.Result.Capabilities["resources"]) != `{"listChanged":true}` {
				t.Errorf("resources %s: subscribe advertised although no backend supports it", res.Result.Capabilities["resources"])
			}
			for _, never := range []string{"tasks", "experimental"} {
				if _, ok := res.Result.Capabilities[never]; ok {
					t.Errorf("capabilities advertise %s: %s", never, r.Body)
				}
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			for i := 0; i < len(sid); i++ {
				if sid[i] < 0x21 || sid[i] > 0x7e {
					t.Fatalf("session id has byte %#x", sid[i])
				}
			}
			sess, err := s.sessions.Open(sid, legacysession.Anonymous)
			if err != nil {
				t.Fatal(err)
			}
			if sess.Version != tt.want || string(sess.Caps) != tt.wantCaps {
				t.Errorf("session %s %s, want %s %s", sess.Version, sess.Caps, tt.want, tt.wantCaps)
			}
		})
	}
	if n := len(be.Requests()); n != 0 {
		t.Fatalf("initialize made %d backend requests", n)
	}
}

// TestLegacyLocalMethods: what the edge answers itself: ping, notifications, logging/setLevel,
// resources/subscribe, and in-band -32601 for what it does not serve; session-less requests with a version header;
// 400 without any version; 400 for a header that contradicts the session.
func TestLegacyLocalMethods(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	sess := legacyHeaders("2025-11-25", sid)
	req := func(id int, method, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	}
	be.Reset()
	for _, tt := range []struct {
		name   string
		header http.Header
		body   string
		status int
		code   int
		result string
	}{
		{"ping", sess, req(1, "ping", `{}`), 200, 0, `{}`},
		{"ping without the version header", legacyHeaders("", sid), req(1, "ping", `{}`), 200, 0, `{}`},
		{"logging/setLevel", sess, req(2, "logging/setLevel", `{"level":"info"}`), 200, 0, `{}`},
		{"notifications/initialized", sess, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, 0, ""},
		{"notifications/cancelled", sess, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, 202, 0, ""},
		{"logging/setLevel, bad level", sess, req(2, "logging/setLevel", `{"level":"verbose"}`), 200, -32602, ""},
		{"logging/setLevel, no level", sess, req(2, "logging/setLevel", `{}`), 200, -32602, ""},
		{"session-less logging/setLevel", legacyHeaders("2025-06-18", ""), req(2, "logging/setLevel", `{"level":"debug"}`), 200, 0, `{}`},
		{"resources/subscribe", sess, req(3, "resources/subscribe", `{"uri":"be+mem://readme"}`), 200, 0, `{}`},
		{"resources/subscribe, unknown", sess, req(3, "resources/subscribe", `{"uri":"mem://readme"}`), 200, -32002, ""},
		{"resources/unsubscribe, unknown", sess, req(3, "resources/unsubscribe", `{"uri":"nobody+mem://x"}`), 200, 0, `{}`},
		{"session-less resources/subscribe", legacyHeaders("2025-06-18", ""), req(3, "resources/subscribe", `{"uri":"be+mem://readme"}`), 200, -32600, ""},
		{"tasks/list", sess, req(4, "tasks/list", `{}`), 200, -32601, ""},
		{"unknown method", sess, req(5, "no/such", `{}`), 200, -32601, ""},
		{"server/discover is not legacy", sess, req(6, "server/discover", `{}`), 200, -32601, ""},
		{"session-less ping", legacyHeaders("2025-06-18", ""), req(7, "ping", `{}`), 200, 0, `{}`},
		// Neither a session nor a version header: a session-less 2025-03-26 request, as the
		// 2025-06-18 transport says to assume (docs/protocol.md §9.1).
		{"no version, no session", legacyHeaders("", ""), req(8, "ping", `{}`), 200, 0, `{}`},
		{"no version, no session, logging/setLevel", legacyHeaders("", ""), req(8, "logging/setLevel", `{"level":"info"}`), 200, 0, `{}`},
		{"header contradicts the session", legacyHeaders("2025-06-18", sid), req(9, "ping", `{}`), 400, -32600, ""},
		{"answer nobody waits for", sess, `{"jsonrpc":"2.0","id":"g1.x.y","result":{}}`, 400, -32600, ""},
		{"answer with folded duplicate keys", sess, `{"jsonrpc":"2.0","id":"g1.x.y","result":{"action":"accept","Action":"decline"}}`, 400, -32602, ""},
		{"notification without session or version", legacyHeaders("", ""), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, 0, ""},
		{"batch on a 2025-11-25 session", sess, "[" + req(10, "ping", `{}`) + "]", 400, -32600, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", gw.URL, tt.header, tt.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.status == 202 {
				return
			}
			mcptest.CheckRPC(t, r, tt.code)
			if tt.result != "" && string(r.RPC.Result) != tt.result {
				t.Fatalf("result %s, want %s", r.RPC.Result, tt.result)
			}
		})
	}
	// A subscription is recorded only for a resource a read finds: that read is the one request
	// the backend gets.
	for _, ex := range be.Forwarded() {
		if m := ex.Header.Get("Mcp-Method"); m != "resources/read" {
			t.Errorf("the backend got %s", m)
		}
	}
	if n := len(be.Forwarded()); n != 1 {
		t.Fatalf("the backend got %d requests, want the one resources/read of the subscription", n)
	}
}

// TestLegacyRequireSession: with legacy.requireSession, a session-less request is refused.
func TestLegacyRequireSession(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{Edge: Config{RequireSession: true}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	// With a version header, and with none (a session-less 2025-03-26 request, or its batch).
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, tc := range []struct {
		version, body string
	}{{"2025-11-25", list}, {"", list}, {"", batchOf(list)}} {
		r := do(t, "POST", gw.URL, legacyHeaders(tc.version, ""), tc.body)
		if r.Status != 400 {
			t.Fatalf("version %q, %s: status %d: %s", tc.version, tc.body, r.Status, r.Body)
		}
		mcptest.CheckRPC(t, r, -32600)
	}
	if len(be.Forwarded()) != 0 {
		t.Fatal("the backend was reached")
	}
}

// TestLegacySessionAttacks: a session id that does not open as this caller's (tampered,
// truncated, expired, another caller's, sealed with a key no longer in the ring, garbage) is
// answered 404 with an id-less error that tells the client to initialize again, and nothing
// reaches a backend.
func TestLegacySessionAttacks(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	clock := mcptest.NewClock(time.Now())
	oldKey := seal.Key{ID: "old", Secret: bytes.Repeat([]byte("o"), 32)}
	newKey := seal.Key{ID: "new", Secret: bytes.Repeat([]byte("n"), 32)}
	var logs mcptest.LogBuffer
	reg := prometheus.NewRegistry()
	rec, err := metrics.New(reg, metrics.Options{Upstreams: []string{"be"}})
	if err != nil {
		t.Fatal(err)
	}
	gw, _ := startLegacyGateway(t, gwSpec{Edge: Config{SessionTTL: time.Hour},
		Deps:     mcphttp.Deps{Clock: clock.Now, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Metrics: rec},
		EdgeDeps: Deps{Keys: testKeyRing(t, newKey)}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	mint := func(ring *seal.KeyRing, principal string) string {
		id, _, err := legacysession.New(ring, time.Hour, clock.Now).Mint("2025-11-25", json.RawMessage(`{}`), "x@1", principal)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	expired := mint(testKeyRing(t, newKey), legacysession.Anonymous)
	tamper := []byte(sid)
	tamper[len(tamper)-5] ^= 1
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__echo","arguments":{"text":"x"}}}`
	clock.Advance(30 * time.Minute)
	if r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid), call); r.Status != 200 || r.RPC.Error != nil {
		t.Fatalf("the valid session was refused: %d %s", r.Status, r.Body)
	}
	clock.Advance(31 * time.Minute) // expired and sid are past their hour now
	fresh, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	other := mint(testKeyRing(t, newKey), legacysession.Bind("https://idp.example", "mallory"))
	removed := mint(testKeyRing(t, oldKey), legacysession.Anonymous)
	be.Reset()
	for _, tt := range []struct{ name, id string }{
		{"expired", sid},
		{"expired, minted elsewhere", expired},
		{"tampered", string(tamper)},
		{"truncated", fresh[:len(fresh)-10]},
		{"another caller's", other},
		{"key removed from the ring", removed},
		{"garbage", "not-a-session"},
		{"empty token", "s1."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", tt.id), call)
			if r.Status != http.StatusNotFound {
				t.Fatalf("status %d, want 404: %s", r.Status, r.Body)
			}
			if string(r.RPC.ID) != "null" || r.RPC.Error == nil || r.RPC.Error.Code != -32600 ||
				r.RPC.Error.Message != "Session not found; re-initialize" {
				t.Fatalf("body %s, want the id-less session error", r.Body)
			}
		})
	}
	if n := len(be.Requests()); n != 0 {
		t.Fatalf("the backend got %d requests for refused sessions", n)
	}
	if strings.Contains(logs.String(), fresh) || strings.Contains(logs.String(), sid) {
		t.Fatal("a session id reached the log")
	}
	want := map[string]float64{"initialized": 2, "opened": 1, "expired": 2, "rejected": 6}
	if got := legacySessionCounts(t, reg); !maps.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", metrics.NameLegacySessions, got, want)
	}
}

// legacySessionCounts reads mcp_gateway_legacy_sessions_total by event.
func legacySessionCounts(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != metrics.NameLegacySessions {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestLegacyAccessLog: the access line of a legacy request names its era, version and the
// session's log key, never the session id.
func TestLegacyAccessLog(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	var logs mcptest.LogBuffer
	gw, s := startLegacyGateway(t, gwSpec{Deps: mcphttp.Deps{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-06-18", `{}`)
	r := do(t, "POST", gw.URL, legacyHeaders("2025-06-18", sid), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__echo","arguments":{"text":"x"}}}`)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	sess, err := s.sessions.Open(sid, legacysession.Anonymous)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil || l["msg"] != "request" || l["method"] != "tools/call" {
			continue
		}
		found = true
		if l["era"] != "legacy" || l["pv"] != "2025-06-18" || l["session"] != sess.LogKey() || l["upstream"] != "be" {
			t.Fatalf("access line %s", line)
		}
	}
	if !found {
		t.Fatalf("no access line for the call:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), sid) {
		t.Fatal("the session id reached the log")
	}
}

// TestLegacyParamHeaders: a legacy client knows nothing of Mcp-Param-*; the gateway synthesises
// the header of every x-mcp-header argument of the tool, so a 2026-07-28 backend that requires
// it gets it, and the pipeline's own checks pass.
func TestLegacyParamHeaders(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithRegionTool())
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__region","arguments":{"region":"eu-west","count":42}}}`)
	if r.Status != 200 || r.RPC.Error != nil {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(r.Body), "region=eu-west count=42") {
		t.Fatalf("the backend saw other headers: %s", r.Body)
	}
	calls := be.RequestsOf("tools/call")
	if len(calls) != 1 || calls[0].Header.Get("Mcp-Param-Region") == "" || calls[0].Header.Get("Mcp-Name") != "region" {
		t.Fatalf("backend headers %v", calls)
	}
}

// TestLegacyErrorStatuses: errors reach a legacy client in-band with 200 (an unknown tool, a
// missing name, a missing resource, the modern path's 404s), never as a 404 that would end its
// session.
func TestLegacyErrorStatuses(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	for _, tt := range []struct{ name, body string }{
		{"unknown backend", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zz__echo"}}`},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__nope"}}`},
		{"no name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`},
		{"bad cursor", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"nope"}}`},
		{"modern _meta smuggled", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"be__greet","_meta":{"io.modelcontextprotocol/clientCapabilities":[]}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid), tt.body)
			if r.Status != 200 || r.RPC.Error == nil || string(r.RPC.ID) != "1" {
				t.Fatalf("status %d body %s, want an in-band error with id 1", r.Status, r.Body)
			}
		})
	}
}

// TestLegacySmuggledMeta: the modern _meta keys a legacy client puts in its own params are
// dropped; the internal request declares what the session declared, and nothing more.
func TestLegacySmuggledMeta(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__echo","arguments":{"text":"x"},`+
			`"_meta":{"progressToken":"p","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"forged","version":"0"}}}}`)
	if r.Status != 200 || r.RPC.Error != nil {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	calls := be.RequestsOf("tools/call")
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	got := string(calls[0].Body)
	if strings.Contains(got, "forged") || strings.Contains(got, `"form"`) || !strings.Contains(got, `"progressToken":"p"`) ||
		!strings.Contains(got, `"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}`) {
		t.Fatalf("the backend got %s", got)
	}
}

// TestKeepLegacyStatus: the statuses a 2025 client acts on are kept; everything else goes
// in-band, and never a 404.
func TestKeepLegacyStatus(t *testing.T) {
	for _, tt := range []struct {
		status, code int
		keep         bool
	}{
		{401, -32013, true}, {403, -32600, true}, {408, -32600, true}, {413, -32600, true}, {415, -32600, true},
		{429, -32029, true}, {503, -32000, true},
		{400, -32700, true}, {400, -32600, true},
		{400, -32602, false}, {404, -32601, false}, {502, -32010, false}, {504, -32011, false}, {500, -32603, false},
	} {
		if got := keepStatus(tt.status, tt.code); got != tt.keep {
			t.Errorf("keepStatus(%d, %d) = %v, want %v", tt.status, tt.code, got, tt.keep)
		}
	}
}

// TestListenNotificationForLegacy: the GET stream drops the listen's acknowledgement and the
// subscription id, and keeps everything else of a notification.
func TestListenNotificationForLegacy(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`,
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`},
		{`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7,"k":1},"x":2}}`,
			`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"k":1},"x":2}}`},
		{`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`},
		// An update of a subscription the client wrote otherwise names it as the client did;
		// any other keeps its URI.
		{`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"uri":"be+mem://x/é"}}`,
			`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"be+mem://x/%C3%A9"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"be+mem://x/é/below"}}`,
			`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"be+mem://x/é/below"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"uri":"be+mem://x/é"}}`,
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"uri":"be+mem://x/é"}}`},
	} {
		m, err := jsonrpc.DecodeMessage([]byte(tt.in), jsonrpc.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		as := map[string]string{"be+mem://x/é": "be+mem://x/%C3%A9"}
		if got := string(listenNotification(m, []byte(tt.in), as)); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

// TestClientInfoLabel: a session keeps at most 64 bytes of name@version, cut on a character
// boundary, and gives the internal request a clientInfo object back.
func TestClientInfoLabel(t *testing.T) {
	long := clientInfoLabel(strings.Repeat("é", 40), "1.0")
	if len(long) > 64 || !utf8.ValidString(long) {
		t.Fatalf("label %q (%d bytes)", long, len(long))
	}
	if got := string(clientInfoJSON(clientInfoLabel("my@client", "2.1"))); got != `{"name":"my@client","version":"2.1"}` {
		t.Fatalf("clientInfo %s", got)
	}
	if clientInfoJSON("") != nil {
		t.Fatal("a session-less request declared a client")
	}
}

// TestLegacyBackendDown: a backend that cannot be reached is an in-band error for a legacy
// client, not the 502 a 2026-07-28 client gets.
func TestLegacyBackendDown(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithCacheHints(60_000, "public"))
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	be.Close()
	r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__echo","arguments":{"text":"x"}}}`)
	if r.Status != 200 || r.RPC.Error == nil || string(r.RPC.ID) != "1" {
		t.Fatalf("%d %s, want an in-band error", r.Status, r.Body)
	}
}

// TestLegacyModernUnchanged: with pre-2026 clients served, every 2026-07-28 request (valid or
// refused, Mcp-Session-Id or not) gets the very status and bytes it gets from a gateway that
// serves only 2026-07-28.
func TestLegacyModernUnchanged(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	off, _ := startLegacyGateway(t, gwSpec{Modern: true}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	on, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	list, call := mcptest.RequestHeaders("tools/list", ""), mcptest.RequestHeaders("tools/call", "be__echo")
	echo := mcptest.Body("tools/call", `,"name":"be__echo","arguments":{"text":"hi"}`)
	for _, tt := range []struct {
		name   string
		header http.Header
		body   string
	}{
		{"tools/list", list, mcptest.Body("tools/list", "")},
		{"tools/call", call, echo},
		{"tools/call with a session id", mcptest.With(call, "Mcp-Session-Id", "s1.whatever"), echo},
		{"no _meta", list, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`},
		{"no version header", mcptest.With(list, "MCP-Protocol-Version", ""), mcptest.Body("tools/list", "")},
		{"legacy version header with modern _meta", mcptest.With(list, "MCP-Protocol-Version", "2025-11-25"), mcptest.Body("tools/list", "")},
		{"initialize with modern _meta", mcptest.RequestHeaders("initialize", ""), mcptest.Body("initialize", "")},
		{"ping with modern _meta", mcptest.RequestHeaders("ping", ""), mcptest.Body("ping", "")},
		{"posted response", list, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"notification", list, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
		{"unsupported version", mcptest.With(list, "MCP-Protocol-Version", "v999"), strings.Replace(mcptest.Body("tools/list", ""), "2026-07-28", "v999", 1)},
		{"invalid JSON", list, `{"jsonrpc":`},
		{"unknown tool", mcptest.RequestHeaders("tools/call", "be__nope"), mcptest.Body("tools/call", `,"name":"be__nope"`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := do(t, "POST", off.URL, tt.header, tt.body), do(t, "POST", on.URL, tt.header, tt.body)
			if a.Status != b.Status || !bytes.Equal(a.Body, b.Body) {
				t.Fatalf("2026-only: %d %s\nwith legacy: %d %s", a.Status, a.Body, b.Status, b.Body)
			}
			if b.Header.Get("Mcp-Session-Id") != "" {
				t.Fatal("a modern response carries a session id")
			}
		})
	}
}

// TestLegacySessionVersionNoLongerServed: a session negotiated for a version the operator has
// since stopped serving (legacy.versions changed by a reload, or a replica of a rolling update
// already on the new configuration) does not open: it is 404 like any session gone, so its
// client initializes again and negotiates a version served now. It is never served at the old
// version (a 2025-03-26 session's batches included), and nothing reaches a backend.
func TestLegacySessionVersionNoLongerServed(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	up := upstreams.UpstreamConfig{Name: "be", URL: be.URL()}
	before, _ := startLegacyGateway(t, gwSpec{}, up)
	after, _ := startLegacyGateway(t, gwSpec{Edge: Config{Versions: []string{"2025-11-25"}}}, up)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__echo","arguments":{"text":"x"}}}`
	for _, v := range []string{"2025-06-18", "2025-03-26"} {
		sid, _ := legacyInit(t, before.URL, v, `{}`)
		if r := do(t, "POST", before.URL, legacyHeaders(v, sid), call); r.Status != 200 || r.RPC.Error != nil {
			t.Fatalf("%s: the session was refused where its version is served: %d %s", v, r.Status, r.Body)
		}
		be.Reset()
		for _, tt := range []struct{ name, header, body string }{
			{"call", v, call},
			{"call without a version header", "", call},
			{"batch", "", "[" + call + "]"},
		} {
			r := do(t, "POST", after.URL, legacyHeaders(tt.header, sid), tt.body)
			if r.Status != http.StatusNotFound {
				t.Errorf("%s %s: status %d, want 404: %s", v, tt.name, r.Status, r.Body)
			}
		}
		g := legacyHeaders("", sid)
		g.Set("Accept", "text/event-stream")
		if r := do(t, "GET", after.URL, g, ""); r.Status != http.StatusNotFound {
			t.Errorf("%s GET: status %d, want 404", v, r.Status)
		}
		if n := len(be.Requests()); n != 0 {
			t.Errorf("%s: %d requests reached the backend", v, n)
		}
	}
	// A session of a version still served opens on both.
	sid, _ := legacyInit(t, before.URL, "2025-11-25", `{}`)
	if r := do(t, "POST", after.URL, legacyHeaders("2025-11-25", sid), call); r.Status != 200 || r.RPC.Error != nil {
		t.Errorf("2025-11-25 session: %d %s", r.Status, r.Body)
	}
}
