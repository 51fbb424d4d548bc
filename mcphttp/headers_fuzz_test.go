package mcphttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// FuzzHeaders drives the header stages of the pipeline (version, method, Mcp-Method, Mcp-Name
// with its base64 sentinel) over one decoded request. They never panic, refuse only with the
// statuses and codes of the table of docs/protocol.md §2.3, and let a request through only when every
// mirrored header says exactly what the body says (SEP-2243, docs/protocol.md §2.2): authorization reads
// the body's name, so a header that disagrees must never pass. The seed corpus lives in
// testdata/fuzz/FuzzHeaders.
func FuzzHeaders(f *testing.F) {
	for _, s := range []struct {
		method, name, hVersion, hMethod, hName string
		dup                                    uint8
	}{
		{"tools/call", "alpha__add", ProtocolVersion, "tools/call", "alpha__add", 0},
		{"tools/call", "alpha__add", ProtocolVersion, "tools/call", "=?base64?YWxwaGFfX2FkZA==?=", 0},
		{"tools/call", "naïve tool", ProtocolVersion, "tools/call", "=?base64?bmHDr3ZlIHRvb2w=?=", 0},
		{"tools/call", " padded ", ProtocolVersion, "tools/call", "=?base64?IHBhZGRlZCA=?=", 0},
		{"tools/call", "alpha__slow", ProtocolVersion, "tools/call", "alpha__add", 0},
		{"tools/call", "alpha__add", ProtocolVersion, "tools/call", "=?base64?!!?=", 0},
		{"tools/call", "alpha__add", ProtocolVersion, "tools/call", "alpha__add", 2},
		{"resources/read", "fs+file:///a b", ProtocolVersion, "resources/read", "fs+file:///a b", 0},
		{"prompts/get", "=?base64?eA==?=", ProtocolVersion, "prompts/get", "=?base64?PT9iYXNlNjQ/ZUE9PT89?=", 0},
		{"tools/list", "", ProtocolVersion, "tools/list", "", 0},
		{"tools/call", "x", "2025-11-25", "tools/call", "x", 0},
		{"initialize", "", "", "", "", 0},
		{"tools/call", "a\r\nb", ProtocolVersion, "tools/call\r\nMcp-Name: a", "a\r\nb", 1},
	} {
		f.Add(s.method, s.name, s.hVersion, s.hMethod, s.hName, s.dup)
	}
	s := &Server{handlers: newHandlers()}
	f.Fuzz(func(t *testing.T, method, name, hVersion, hMethod, hName string, dup uint8) {
		x := fuzzRequest(t, s, method, name, hVersion, hMethod, hName, dup)
		err := s.decode(x)
		if err == nil {
			err = checkVersion(x.hdr, x.in.meta, x.in.req)
		}
		if err == nil {
			x.in.h, err = lookupMethod(s.handlers, x.in.req.Method)
		}
		if err == nil {
			err = checkHeaders(x.hdr, x.in.h, x.in.req.Method, x.in.params)
		}
		if err != nil {
			checkRefusal(t, err)
			return
		}
		checkAgreement(t, x, hVersion, hMethod, hName, dup)
	})
}

// fuzzRequest builds the request for one input: a body with method and name (as both name
// and uri, so every handler finds its member) and the three headers, each sent twice when its
// bit of dup is set.
func fuzzRequest(t *testing.T, s *Server, method, name, hVersion, hMethod, hName string, dup uint8) *request {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": method,
		"params": map[string]any{
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": ProtocolVersion,
				"io.modelcontextprotocol/clientCapabilities": map[string]any{}},
			"name": name, "uri": name,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for i, kv := range [][2]string{{mcpheader.ProtocolVersion, hVersion}, {mcpheader.Method, hMethod}, {mcpheader.Name, hName}} {
		if kv[1] == "" {
			continue
		}
		h.Add(kv[0], kv[1])
		if dup&(1<<i) != 0 {
			h.Add(kv[0], kv[1])
		}
	}
	r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header = h
	return &request{shared: shared{s: s, r: r, hdr: r.Header}, in: decoded{body: body}, client: &ClientSink{srv: s}}
}

func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		e = mapError(err)
	}
	if e.RPC == nil || (e.Status != http.StatusBadRequest && e.Status != http.StatusNotFound) {
		t.Fatalf("refused with %d %v", e.Status, err)
	}
	switch e.RPC.Code {
	case -32700, -32600, -32601, -32602, -32020, -32022:
	default:
		t.Fatalf("refused with code %d: %v", e.RPC.Code, err)
	}
}

func checkAgreement(t *testing.T, x *request, hVersion, hMethod, hName string, dup uint8) {
	t.Helper()
	if hVersion != ProtocolVersion || hMethod != x.in.req.Method || dup&3 != 0 {
		t.Fatalf("accepted version %q method %q for %q (dup %b)", hVersion, hMethod, x.in.req.Method, dup)
	}
	if x.in.h.nameParam == "" {
		return
	}
	want := x.in.params.Name
	if x.in.h.nameParam == "uri" {
		want = x.in.params.URI
	}
	got, err := mcpheader.Decode(hName)
	if err != nil || got != want || dup&4 != 0 {
		t.Fatalf("accepted Mcp-Name %q (decodes to %q, %v) for %q (dup %b)", hName, got, err, want, dup)
	}
}

// FuzzListCursor sends arbitrary cursors through the whole client-facing path (the real
// registry, sealer and a go-sdk backend over loopback): only a cursor the gateway sealed yields a
// page; anything else is 400 with -32602 (docs/protocol.md §5.1), never a 5xx nor a page. The
// seed corpus lives in testdata/fuzz/FuzzListCursor.
func FuzzListCursor(f *testing.F) {
	cursors := testCursors(f)
	backend := mcptest.StartServer(f, "alpha", mcptest.WithCacheHints(int(time.Hour/time.Millisecond), "public"))
	_, e := testServer(f, Config{}, upstreams.Config{PageSize: 2, Upstreams: []upstreams.UpstreamConfig{{Name: "alpha", URL: backend.URL()}}},
		upstreams.Options{Cursors: cursors}, Deps{})
	url := serveTest(f, e).URL + DefaultPath
	list := func(t testing.TB, cursor string) *response {
		c, _ := json.Marshal(cursor)
		return do(t, http.MethodPost, url, modern("tools/list", ""), body("tools/list", `,"cursor":`+string(c)))
	}
	var first struct{ NextCursor string }
	if r := do(f, http.MethodPost, url, modern("tools/list", ""), body("tools/list", "")); r.Status != http.StatusOK || json.Unmarshal(r.RPC.Result, &first) != nil || first.NextCursor == "" {
		f.Fatalf("tools/list gave no cursor: %d %s", r.Status, r.Body)
	}
	genuine := first.NextCursor
	f.Add(genuine)
	f.Add(genuine[:len(genuine)-1])
	f.Add(genuine + "A")
	f.Add("")
	f.Add("v1.t.AAAA")
	f.Fuzz(func(t *testing.T, cursor string) {
		r := list(t, cursor)
		// Sealing draws a fresh nonce, so the fuzzing workers' genuine cursors differ from this
		// process's; what must hold is that only cursors sealed under the gateway's key open.
		_, sealed := cursors.Open(cursor)
		switch {
		case r.Status == http.StatusOK && sealed != nil:
			t.Fatalf("cursor %q not sealed by the gateway gave a page", cursor)
		case r.Status == http.StatusOK:
		case cursor == genuine:
			t.Fatalf("the genuine cursor was refused: %d %s", r.Status, r.Body)
		case r.Status != http.StatusBadRequest || r.RPC.Error == nil || r.RPC.Error.Code != -32602:
			t.Fatalf("cursor %q: %d %s, want 400 -32602", cursor, r.Status, r.Body)
		}
	})
}
