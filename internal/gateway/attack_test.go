package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// The hostile-input table (issue 10). TestAttackTable in auth_test.go holds the token rows of
// the authorization table; this table adds every other attack on the same kind of gateway:
// authentication on (a real issuer), MRTR keys set, a policy that allows a cheap tool, requires
// confirmation for another and step-up for an expensive one. Each row asserts the exact status,
// JSON-RPC code and challenge, and that no backend received anything.

// attackMaxHeaderBytes is small so that an oversized header is cheap to send. net/http allows
// 4 KiB of slack above http.Server.MaxHeaderBytes.
const attackMaxHeaderBytes = 8 << 10

// pagedTools is the number of tools of the "gamma" backend: more than one gateway page
// (upstreams.DefaultPageSize), so tools/list hands out a cursor.
const pagedTools = 105

type attackFixture struct {
	authGateway
	ring     *seal.KeyRing // the gateway's own keys, to forge tokens of the wrong purpose
	backends []*mcptest.Server
	tok      string // scope tools:use: add, echo (confirmed), readme, greet, gamma's tools
	sre      string // tools:use and groups ∋ sre: also sees every beta tool
	cursor   string // a genuine tools/list cursor of tok's view
	state    string // a genuine, not yet used confirmation state for echo {"text":"pay"}
	spent    string // a confirmation state already approved once
}

func startAttackGateway(t *testing.T) *attackFixture {
	t.Helper()
	f := &attackFixture{authGateway: authGateway{iss: newIssuer(t)}}
	var gammaOpts []mcptest.Option
	for i := range pagedTools {
		tool := &mcp.Tool{Name: fmt.Sprintf("t%03d", i), InputSchema: map[string]any{"type": "object"}}
		gammaOpts = append(gammaOpts, mcptest.WithTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}))
	}
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	gamma := mcptest.StartServer(t, "gamma", append(gammaOpts, mcptest.WithoutDefaults())...)
	f.backends = []*mcptest.Server{alpha, beta, gamma}
	f.gw = startTestGateway(t, func(c *Config) {
		trustIssuers(c, f.iss)
		c.Server.MaxHeaderBytes = attackMaxHeaderBytes
		c.HealthInterval = time.Hour // no background probe may pollute the backends' records
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "cheap", Upstream: "alpha", Tools: []string{"add"}, AnyScope: []string{"tools:use"}},
			{ID: "expensive", Upstream: "alpha", Tools: []string{"slow"}, AllScopes: []string{"tools:admin"}},
			{ID: "readme", Upstream: "alpha", Resources: []string{mcptest.ResourceReadme}, Prompts: []string{"greet"}, AnyScope: []string{"tools:use"}},
			{ID: "paged", Upstream: "gamma", Tools: []string{"t*"}, AnyScope: []string{"tools:use"}},
			{ID: "sre", Upstream: "beta", Tools: []string{"*"}, Claims: map[string][]string{"groups": {"sre"}}},
		}
	}, f.backends...)
	ring, _, err := (MRTRConfig{Keys: testKeys}).keyRing(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.ring = ring
	f.tok = f.token(t, devissuer.Claims{"sub": "mallory", "scope": "tools:use"})
	f.sre = f.token(t, devissuer.Claims{"sub": "sre", "scope": "tools:use", "groups": []string{"sre"}})
	f.waitHealthy(t)
	f.cursor = f.listCursor(t, f.tok)
	f.state = f.confirmState(t)
	f.spent = f.confirmState(t)
	if _, r := rawCall(t, f.gw, f.tok, "alpha__echo", `{"text":"pay"}`, approve(f.spent)); r.Error != nil || r.Result.IsError {
		t.Fatalf("approving the state to replay: %+v", r)
	}
	return f
}

// waitHealthy waits until the start-up probe has reached every backend, so that it cannot be
// mistaken for a request a row let through.
func (f *attackFixture) waitHealthy(t *testing.T) {
	t.Helper()
	for range 200 {
		var r struct{ Upstreams []struct{ Up bool } }
		if json.Unmarshal([]byte(get(t, "http://"+f.gw.Admin+"/readyz")), &r) == nil && len(r.Upstreams) == len(f.backends) {
			up := 0
			for _, u := range r.Upstreams {
				if u.Up {
					up++
				}
			}
			if up == len(f.backends) {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("backends never became healthy")
}

func (f *attackFixture) listCursor(t *testing.T, tok string) string {
	t.Helper()
	h := modernHeaders("tools/list", "")
	h.Set("Authorization", "Bearer "+tok)
	_, _, body := post(t, f.url(), h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
	var r struct{ Result struct{ NextCursor string } }
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Result.NextCursor == "" {
		t.Fatalf("tools/list gave no cursor: %s", body)
	}
	return r.Result.NextCursor
}

func (f *attackFixture) confirmState(t *testing.T) string {
	t.Helper()
	_, r := rawCall(t, f.gw, f.tok, "alpha__echo", `{"text":"pay"}`, "")
	if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("expected a confirmation: %+v", r)
	}
	return r.Result.RequestState
}

func (f *attackFixture) reset() {
	for _, b := range f.backends {
		b.Reset()
	}
}

// reply is what the gateway answered to one hostile request.
type reply struct {
	status int
	header http.Header
	body   string
}

// reqOpt changes a well-formed request into a hostile one.
type reqOpt func(*http.Request)

func setHdr(k, v string) reqOpt     { return func(r *http.Request) { r.Header.Set(k, v) } }
func addHdr(k, v string) reqOpt     { return func(r *http.Request) { r.Header.Add(k, v) } }
func delHdr(k string) reqOpt        { return func(r *http.Request) { r.Header.Del(k) } }
func withHost(h string) reqOpt      { return func(r *http.Request) { r.Host = h } }
func bigHdr(k string, n int) reqOpt { return setHdr(k, strings.Repeat("x", n)) }

// send posts body as a request for method (Mcp-Method) and name (Mcp-Name) with tok's bearer
// token, after opts.
func (f *attackFixture) send(method, name, body string, opts ...reqOpt) func(t *testing.T) reply {
	return func(t *testing.T) reply {
		req, err := http.NewRequest(http.MethodPost, f.url(), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = modernHeaders(method, name)
		req.Header.Set("Authorization", "Bearer "+f.tok)
		for _, o := range opts {
			o(req)
		}
		return do(t, req)
	}
}

// call sends a tools/call (or another named method) whose params are testMeta plus params.
func (f *attackFixture) call(method, name, params string, opts ...reqOpt) func(t *testing.T) reply {
	return f.send(method, name, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{`+testMeta+params+`}}`, opts...)
}

// add is the cheap, allowed call: every row that is not about the body sends it.
func (f *attackFixture) add(opts ...reqOpt) func(t *testing.T) reply {
	return f.call("tools/call", "alpha__add", `,"name":"alpha__add","arguments":{"a":1,"b":2}`, opts...)
}

func do(t *testing.T, req *http.Request) reply {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return reply{res.StatusCode, res.Header, string(b)}
}

// raw writes a request byte for byte over TCP, for what net/http refuses to send: CR, LF or NUL
// in values, folded lines, conflicting framing. extra is inserted among the headers of a
// well-formed alpha__add call; host "" means the gateway's own address.
func (f *attackFixture) raw(host, extra string) func(t *testing.T) reply {
	return func(t *testing.T) reply {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + testMeta + `,"name":"alpha__add","arguments":{"a":1,"b":2}}}`
		if host == "" {
			host = f.gw.MCP
		}
		req := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + f.tok +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n" + extra
		if !strings.Contains(extra, "Content-Length") && !strings.Contains(extra, "Transfer-Encoding") {
			req += fmt.Sprintf("Content-Length: %d\r\n", len(body))
		}
		return rawExchange(t, f.gw.MCP, req+"Connection: close\r\n\r\n"+body)
	}
}

func rawExchange(t *testing.T, addr, req string) reply {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return reply{res.StatusCode, res.Header, string(b)}
}

// attack is one row: a hostile request and exactly what the gateway must answer.
type attack struct {
	name      string
	send      func(t *testing.T) reply
	status    int
	code      int    // the JSON-RPC error code; 0 when the answer carries no JSON-RPC body
	challenge string // a substring of WWW-Authenticate; "" when there must be none
	// lists lets list requests reach the backends (a cursor can only be checked against the
	// merged list), provided none carries what the client sent as a cursor.
	lists bool
}

func TestHostileRequests(t *testing.T) {
	f := startAttackGateway(t)
	var rows []attack
	for _, part := range [][]attack{
		f.tokenAttacks(t), f.headerAttacks(), f.bodyAttacks(), f.stateAttacks(t),
		f.cursorAttacks(t), f.resourceAttacks(), f.originAttacks(),
	} {
		rows = append(rows, part...)
	}
	if len(rows) < 50 {
		t.Fatalf("the table has %d rows; issue 10 asks for at least 50", len(rows))
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			f.reset()
			got := tt.send(t)
			if got.status != tt.status {
				t.Fatalf("status = %d, want %d: %.300s", got.status, tt.status, got.body)
			}
			checkChallenge(t, got, tt.challenge)
			checkCode(t, got, tt.code)
			f.checkNothingForwarded(t, tt)
		})
	}
}

func checkChallenge(t *testing.T, got reply, want string) {
	t.Helper()
	ch := got.header.Get("WWW-Authenticate")
	if want == "" && ch != "" || !strings.Contains(ch, want) {
		t.Errorf("WWW-Authenticate = %q, want %q", ch, want)
	}
}

func checkCode(t *testing.T, got reply, want int) {
	t.Helper()
	var rpc struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	err := json.Unmarshal([]byte(got.body), &rpc)
	switch {
	case want == 0 && err == nil && rpc.Error != nil:
		t.Errorf("body = %.300s, want no JSON-RPC error", got.body)
	case want != 0 && (err != nil || rpc.JSONRPC != "2.0" || rpc.Error == nil || rpc.Error.Code != want):
		t.Errorf("body = %.300s, want JSON-RPC error %d", got.body, want)
	}
}

func (f *attackFixture) checkNothingForwarded(t *testing.T, tt attack) {
	t.Helper()
	for _, b := range f.backends {
		for _, ex := range b.Forwarded() {
			method := ex.Header.Get("Mcp-Method")
			if tt.lists && strings.HasSuffix(method, "/list") && !bytes.Contains(ex.Body, []byte(`"cursor"`)) {
				continue
			}
			t.Errorf("backend %s received %s %s", b.Name(), method, ex.Body)
		}
	}
}

// tokenAttacks adds to auth_test.go's TestAttackTable what it does not cover.
func (f *attackFixture) tokenAttacks(t *testing.T) []attack {
	foreign, err := f.iss.MintForeignKeyKnownKID(devissuer.Claims{"scope": "tools:use"})
	if err != nil {
		t.Fatal(err)
	}
	escalated, err := devissuer.TamperPayload(f.tok, devissuer.Claims{"scope": "tools:use tools:admin"})
	if err != nil {
		t.Fatal(err)
	}
	admin := f.token(t, devissuer.Claims{"scope": "tools:admin"})
	invalid := `error="invalid_token"`
	return []attack{
		{name: "token/foreign key under a known kid", send: f.add(setHdr("Authorization", "Bearer "+foreign)), status: 401, code: -32013, challenge: invalid},
		{name: "token/payload edited to add a scope", send: f.call("tools/call", "alpha__slow", `,"name":"alpha__slow","arguments":{"ms":1}`, setHdr("Authorization", "Bearer "+escalated)), status: 401, code: -32013, challenge: invalid},
		{name: "token/two Authorization headers", send: f.add(addHdr("Authorization", "Bearer "+admin)), status: 400, code: -32013, challenge: `error="invalid_request"`},
		{name: "token/in a cookie only", send: f.add(delHdr("Authorization"), setHdr("Cookie", "access_token="+f.tok)), status: 401, code: -32013, challenge: "resource_metadata="},
		{name: "token/trailing garbage", send: f.add(setHdr("Authorization", "Bearer "+f.tok+".x")), status: 401, code: -32013, challenge: invalid},
		{name: "token/two tokens", send: f.add(setHdr("Authorization", "Bearer "+f.tok+" "+admin)), status: 401, code: -32013, challenge: invalid},
		{name: "token/huge", send: f.add(setHdr("Authorization", "Bearer "+strings.Repeat("A", 6000))), status: 401, code: -32013, challenge: invalid},
		{name: "token/valid one for the cheap tool, expensive body", send: f.call("tools/call", "alpha__slow", `,"name":"alpha__slow","arguments":{"ms":1}`), status: 403, code: -32013, challenge: `scope="tools:admin"`},
	}
}

func (f *attackFixture) headerAttacks() []attack {
	addBody := `,"name":"alpha__add","arguments":{"a":1,"b":2}`
	return []attack{
		{name: "header/duplicate Mcp-Method", send: f.add(addHdr("Mcp-Method", "tools/call")), status: 400, code: -32020},
		{name: "header/duplicate Mcp-Method, conflicting", send: f.add(addHdr("Mcp-Method", "tools/list")), status: 400, code: -32020},
		{name: "header/duplicate Mcp-Name", send: f.add(addHdr("Mcp-Name", "alpha__slow")), status: 400, code: -32020},
		{name: "header/duplicate MCP-Protocol-Version", send: f.add(addHdr("MCP-Protocol-Version", "2026-07-28")), status: 400, code: -32020},
		{name: "header/Mcp-Method names a list", send: f.add(setHdr("Mcp-Method", "tools/list")), status: 400, code: -32020},
		{name: "header/cheap tool in the header, expensive in the body", send: f.call("tools/call", "alpha__add", `,"name":"alpha__slow","arguments":{"ms":1}`), status: 400, code: -32020},
		{name: "header/Mcp-Name of another backend", send: f.call("tools/call", "beta__add", addBody), status: 400, code: -32020},
		{name: "header/missing Mcp-Name", send: f.add(delHdr("Mcp-Name")), status: 400, code: -32020},
		{name: "header/invalid base64 sentinel", send: f.add(setHdr("Mcp-Name", "=?base64?!!notbase64!!?=")), status: 400, code: -32020},
		{name: "header/unpadded base64 sentinel", send: f.add(setHdr("Mcp-Name", "=?base64?YWxwaGFfX2FkZA?=")), status: 400, code: -32020},
		{name: "header/sentinel of the expensive tool", send: f.add(setHdr("Mcp-Name", "=?base64?YWxwaGFfX3Nsb3c=?=")), status: 400, code: -32020},
		{name: "header/sentinel with a control character", send: f.add(setHdr("Mcp-Name", "=?base64?YWxwaGFfX2FkZAo=?=")), status: 400, code: -32020},
		{name: "header/non-ASCII without a sentinel", send: f.add(setHdr("Mcp-Name", "alpha__add\u00e9")), status: 400, code: -32020},
		{name: "header/version mismatch", send: f.add(setHdr("MCP-Protocol-Version", "2025-11-25")), status: 400, code: -32020},
		{name: "header/bigger than maxHeaderBytes", send: f.add(bigHdr("X-Padding", 4*attackMaxHeaderBytes)), status: 431},
		{name: "header/many small headers", send: f.add(func(r *http.Request) {
			for i := range 2000 {
				r.Header.Set(fmt.Sprintf("X-H%d", i), "v")
			}
		}), status: 431},
		{name: "header/CR in Mcp-Name", send: f.raw("", "Mcp-Name: alpha__add\rMcp-Name: alpha__slow\r\n"), status: 400},
		{name: "header/bare LF smuggles a second Mcp-Name", send: f.raw("", "Mcp-Name: alpha__add\nMcp-Name: alpha__slow\r\n"), status: 400, code: -32020},
		{name: "header/NUL in Mcp-Name", send: f.raw("", "Mcp-Name: alpha__add\x00alpha__slow\r\n"), status: 400},
		{name: "header/obs-fold continuation", send: f.raw("", "Mcp-Name: alpha__add\r\n alpha__slow\r\n"), status: 400, code: -32020},
		{name: "header/space before the colon", send: f.raw("", "Mcp-Name : alpha__slow\r\nMcp-Name: alpha__add\r\n"), status: 400},
		{name: "header/conflicting Content-Length", send: f.raw("", "Mcp-Name: alpha__add\r\nContent-Length: 10\r\nContent-Length: 20\r\n"), status: 400},
		{name: "header/unknown Transfer-Encoding", send: f.raw("", "Mcp-Name: alpha__add\r\nTransfer-Encoding: gzip, chunked\r\n"), status: 501},
		{name: "header/text/plain body", send: f.add(setHdr("Content-Type", "text/plain")), status: 415, code: -32600},
		{name: "header/Accept without SSE", send: f.add(setHdr("Accept", "application/json, text/event-stream;q=0")), status: 400, code: -32600},
	}
}

// deep returns n nested arrays.
func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func (f *attackFixture) bodyAttacks() []attack {
	b := func(body string) func(t *testing.T) reply { return f.send("tools/call", "alpha__add", body) }
	head := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + testMeta + `,"name":"alpha__add","arguments":`
	ok := head + `{"a":1,"b":2}}}`
	return []attack{
		{name: "body/10000-deep arguments", send: b(head + `{"a":` + deep(10000) + `}}}`), status: 400, code: -32600},
		{name: "body/10000-deep top level", send: b(deep(10000)), status: 400, code: -32600},
		{name: "body/invalid UTF-8 in a value", send: b(head + "{\"a\":\"\xff\xfe\"}}}"), status: 400, code: -32700},
		{name: "body/invalid UTF-8 in a key", send: b(head + "{\"\xc3\x28\":1}}}"), status: 400, code: -32700},
		{name: "body/overlong UTF-8 encoding of /", send: b(head + "{\"a\":\"\xc0\xaf\"}}}"), status: 400, code: -32700},
		{name: "body/duplicate method", send: b(`{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"tools/call","params":{` + testMeta + `,"name":"alpha__add"}}`), status: 400, code: -32600},
		{name: "body/duplicate name", send: b(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + testMeta + `,"name":"alpha__add","name":"alpha__slow"}}`), status: 400, code: -32602},
		{name: "body/duplicate name, escaped", send: b(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + testMeta + `,"name":"alpha__add","n\u0061me":"alpha__slow"}}`), status: 400, code: -32602},
		{name: "body/duplicate argument", send: b(head + `{"a":1,"a":2,"b":2}}}`), status: 400, code: -32602},
		{name: "body/duplicate key deep in arguments", send: b(head + `{"a":[{"x":{"k":1,"k":2}}],"b":2}}}`), status: 400, code: -32602},
		{name: "body/duplicate _meta key", send: b(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}},"name":"alpha__add"}}`), status: 400, code: -32602},
		{name: "body/2 MiB number", send: b(head + `{"a":1` + strings.Repeat("0", 2<<20) + `,"b":2}}}`), status: 400, code: -32600},
		{name: "body/2 MiB string", send: b(head + `{"a":"` + strings.Repeat("x", 2<<20) + `","b":2}}}`), status: 400, code: -32600},
		{name: "body/fractional id", send: b(strings.Replace(ok, `"id":7`, `"id":1e400`, 1)), status: 400, code: -32600},
		{name: "body/larger than maxBodyBytes", send: b(head + `{"a":"` + strings.Repeat("x", 5<<20) + `"}}}`), status: 413, code: -32600},
		{name: "body/100 MB streamed without Content-Length", send: f.stream(100 << 20), status: 413, code: -32600},
		{name: "body/100 MB declared, 10 bytes sent", send: f.raw("", "Mcp-Name: alpha__add\r\nContent-Length: 104857600\r\n"), status: 413, code: -32600},
		{name: "body/trailing garbage", send: b(ok + "garbage"), status: 400, code: -32700},
		{name: "body/two messages", send: b(ok + ok), status: 400, code: -32700},
		{name: "body/empty", send: b(""), status: 400, code: -32700},
		{name: "body/byte-order mark", send: b("\xef\xbb\xbf" + ok), status: 400, code: -32700},
		{name: "body/batch", send: b("[" + ok + "]"), status: 400, code: -32600},
		{name: "body/a response", send: b(`{"jsonrpc":"2.0","id":7,"result":{}}`), status: 400, code: -32600},
		{name: "body/params an array", send: b(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["alpha__add"]}`), status: 400, code: -32602},
		{name: "body/Method in another case", send: b(`{"jsonrpc":"2.0","id":7,"Method":"tools/call","method":"tools/call","params":{` + testMeta + `,"name":"alpha__add"}}`), status: 400, code: -32600},
		{name: "body/NUL in the name", send: f.call("tools/call", "alpha__add", `,"name":"alpha__add\u0000","arguments":{}`), status: 400, code: -32020},
	}
}

// stream posts n bytes of a JSON string without Content-Length and reports how much the gateway
// read: it must answer 413 having read little more than maxBodyBytes, never the whole body.
func (f *attackFixture) stream(n int64) func(t *testing.T) reply {
	return func(t *testing.T) reply {
		var sent atomic.Int64
		body := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"`),
			&countingReader{n: n, sent: &sent})
		req, err := http.NewRequest(http.MethodPost, f.url(), body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = -1
		req.Header = modernHeaders("tools/call", "alpha__add")
		req.Header.Set("Authorization", "Bearer "+f.tok)
		got := do(t, req)
		if s := sent.Load(); s >= n/4 {
			t.Errorf("the gateway read %d of %d bytes before refusing the body", s, n)
		}
		return got
	}
}

// countingReader yields n bytes of 'x', counting what was taken.
type countingReader struct {
	n    int64
	sent *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	left := c.n - c.sent.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	for i := range p {
		p[i] = 'x'
	}
	c.sent.Add(int64(len(p)))
	return len(p), nil
}

func (f *attackFixture) stateAttacks(t *testing.T) []attack {
	foreign := sealWith(t, seal.Key{ID: testKeys[0].ID, Secret: bytes.Repeat([]byte("f"), 32)}, seal.PurposeRequestState, "x")
	garbage := sealWith(t, seal.Key{ID: testKeys[0].ID, Secret: []byte(testKeys[0].Secret.Value)}, seal.PurposeRequestState, "{}")
	echo := func(tok, tool, args, retry string) func(t *testing.T) reply {
		return f.send("tools/call", tool, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+elicitMeta+
			`,"name":"`+tool+`","arguments":`+args+retry+`}}`, setHdr("Authorization", "Bearer "+tok))
	}
	mid := len(f.state) / 2
	tampered := f.state[:mid] + string(f.state[mid]^1) + f.state[mid+1:]
	bad := func(name, tok, tool, args, retry string) attack {
		return attack{name: "state/" + name, send: echo(tok, tool, args, retry), status: 400, code: -32602}
	}
	return []attack{
		bad("replayed", f.tok, "alpha__echo", `{"text":"pay"}`, approve(f.spent)),
		bad("tampered", f.tok, "alpha__echo", `{"text":"pay"}`, approve(tampered)),
		bad("truncated", f.tok, "alpha__echo", `{"text":"pay"}`, approve(f.state[:len(f.state)-7])),
		bad("oversized", f.tok, "alpha__echo", `{"text":"pay"}`, approve(strings.Repeat("A", 20<<10))),
		{name: "state/beyond the JSON token limit", send: echo(f.tok, "alpha__echo", `{"text":"pay"}`, approve(strings.Repeat("A", 1<<20+1))), status: 400, code: -32600},
		bad("foreign key with the same id", f.tok, "alpha__echo", `{"text":"pay"}`, approve(foreign)),
		bad("right key, garbage payload", f.tok, "alpha__echo", `{"text":"pay"}`, approve(garbage)),
		bad("a list cursor", f.tok, "alpha__echo", `{"text":"pay"}`, approve(f.cursor)),
		bad("another user", f.sre, "alpha__echo", `{"text":"pay"}`, approve(f.state)),
		bad("other arguments", f.tok, "alpha__echo", `{"text":"pay all"}`, approve(f.state)),
		bad("on a tool without confirmation", f.tok, "alpha__add", `{"a":1,"b":2}`, approve(f.state)),
		bad("not a string", f.tok, "alpha__echo", `{"text":"pay"}`, `,"inputResponses":{},"requestState":42`),
		{name: "state/approval without a state asks again", send: echo(f.tok, "alpha__echo", `{"text":"pay"}`,
			`,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":true}}}`), status: 200},
	}
}

func sealWith(t *testing.T, k seal.Key, purpose, payload string) string {
	t.Helper()
	ring, err := seal.New(seal.Config{Keys: []seal.Key{k}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ring.Sealer(purpose).Seal([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (f *attackFixture) cursorAttacks(t *testing.T) []attack {
	list := func(method, cursor string, tok string) func(t *testing.T) reply {
		return f.call(method, "", `,"cursor":`+cursor, setHdr("Authorization", "Bearer "+tok))
	}
	q := func(s string) string { return `"` + s + `"` }
	bad := func(name, method, cursor string) attack {
		return attack{name: "cursor/" + name, send: list(method, cursor, f.tok), status: 400, code: -32602, lists: true}
	}
	mid := len(f.cursor) / 2
	own := f.ring.Sealer(seal.PurposeCursor)
	garbage, err := own.Seal([]byte("not a cursor"))
	if err != nil {
		t.Fatal(err)
	}
	rows := []attack{
		bad("garbage", "tools/list", q("garbage")),
		bad("tampered", "tools/list", q(f.cursor[:mid]+string(f.cursor[mid]^1)+f.cursor[mid+1:])),
		bad("truncated", "tools/list", q(f.cursor[:len(f.cursor)-5])),
		bad("oversized", "tools/list", q(strings.Repeat("A", 20<<10))),
		{name: "cursor/beyond the JSON token limit", send: list("tools/list", q(strings.Repeat("A", 1<<20+1)), f.tok), status: 400, code: -32600},
		bad("of tools/list used for prompts/list", "prompts/list", q(f.cursor)),
		bad("of tools/list used for resources/list", "resources/list", q(f.cursor)),
		bad("a requestState", "tools/list", q(f.state)),
		bad("foreign key with the same id", "tools/list", q(sealWith(t, seal.Key{ID: testKeys[0].ID, Secret: bytes.Repeat([]byte("f"), 32)}, seal.PurposeCursor, "x"))),
		bad("right key, garbage payload", "tools/list", q(garbage)),
		bad("not a string", "tools/list", `{"offset":0}`),
	}
	other := f.listCursor(t, f.sre)
	return append(rows, attack{name: "cursor/of another caller's view", send: list("tools/list", q(other), f.tok), status: 400, code: -32602, lists: true})
}

func (f *attackFixture) resourceAttacks() []attack {
	read := func(uri string) attack {
		return attack{name: "resource/" + uri, send: f.call("resources/read", uri, `,"uri":"`+uri+`"`), status: 400, code: -32602}
	}
	rows := []attack{}
	for _, uri := range []string{
		"beta+mem://readme", "gamma+mem://readme", "delta+mem://readme", "mem://readme",
		"alpha+../beta+mem://readme", "alpha+mem://readme/../../beta+mem://readme", "alpha%2Bmem://readme",
		"ALPHA+mem://readme", "+alpha+mem://readme", "alpha+", "http://alpha+mem://readme",
		"alpha+mem://readme%2F..%2Fsecret", "alpha+file:///etc/passwd", "alpha+mem://readme#beta",
	} {
		rows = append(rows, read(uri))
	}
	return append(rows,
		attack{name: "resource/completion of another backend's template", send: f.call("completion/complete", "",
			`,"ref":{"type":"ref/resource","uri":"beta+mem://items/{id}"},"argument":{"name":"id","value":"a"}`), status: 400, code: -32602},
		attack{name: "resource/prompt of a hidden backend", send: f.call("prompts/get", "beta__greet", `,"name":"beta__greet","arguments":{"name":"x"}`), status: 400, code: -32602},
	)
}

func (f *attackFixture) originAttacks() []attack {
	forbidden := func(name string, opts ...reqOpt) attack {
		return attack{name: "origin/" + name, send: f.add(opts...), status: 403, code: -32600}
	}
	_, port, _ := net.SplitHostPort(f.gw.MCP)
	return []attack{
		forbidden("DNS rebinding: Host evil.example", withHost("evil.example")),
		forbidden("DNS rebinding: Host evil.example with the port", withHost("evil.example:"+port)),
		forbidden("DNS rebinding: Host 127.0.0.1.nip.io", withHost("127.0.0.1.nip.io:"+port)),
		forbidden("DNS rebinding: Host localhost.evil.example", withHost("localhost.evil.example")),
		forbidden("DNS rebinding: Host 0.0.0.0", withHost("0.0.0.0:"+port)),
		// Spellings only some parsers read as loopback (internal/loopback decides them all).
		forbidden("DNS rebinding: Host [localhost]", withHost("[localhost]:"+port)),
		forbidden("DNS rebinding: Host ::ffff:127.0.0.1", withHost("[::ffff:127.0.0.1]:"+port)),
		forbidden("DNS rebinding: Host localhost.", withHost("localhost.:"+port)),
		forbidden("DNS rebinding: Host sub.localhost", withHost("sub.localhost:"+port)),
		forbidden("DNS rebinding: Host 127.1", withHost("127.1:"+port)),
		// Unicode spellings IDNA maps to a loopback name or literal: only clients that apply
		// IDNA read them so. Sent raw (Go's client would convert them); net/http's server
		// answers a Host header that is not ASCII 400 before the gateway sees it, and
		// internal/loopback.HostPort would refuse it after (loopback's TestFamily).
		{name: "origin/DNS rebinding: Host ℓocalhost", send: f.raw("ℓocalhost:"+port, "Mcp-Name: alpha__add\r\n"), status: 400},
		{name: "origin/DNS rebinding: Host ⓛocalhost", send: f.raw("ⓛocalhost:"+port, "Mcp-Name: alpha__add\r\n"), status: 400},
		{name: "origin/DNS rebinding: Host ①②⑦.0.0.1", send: f.raw("①②⑦.0.0.1:"+port, "Mcp-Name: alpha__add\r\n"), status: 400},
		{name: "origin/DNS rebinding: Host fullwidth 127.0.0.1", send: f.raw("１２７.０.０.１:"+port, "Mcp-Name: alpha__add\r\n"), status: 400},
		forbidden("Origin ℓocalhost on a loopback listener", setHdr("Origin", "http://ℓocalhost:"+port)),
		forbidden("Origin ①②⑦.0.0.1 on a loopback listener", setHdr("Origin", "http://①②⑦.0.0.1:"+port)),
		forbidden("Origin ::ffff:127.0.0.1 on a loopback listener", setHdr("Origin", "http://[::ffff:127.0.0.1]:"+port)),
		forbidden("Origin null", setHdr("Origin", "null")),
		forbidden("Origin evil", setHdr("Origin", "http://evil.example")),
		forbidden("Origin a suffix of the public URL", setHdr("Origin", "https://mcp.test.invalid.evil.example")),
		forbidden("Origin with user info", setHdr("Origin", "https://mcp.test.invalid@evil.example")),
		forbidden("Origin with another scheme", setHdr("Origin", "http://mcp.test.invalid")),
		forbidden("two Origins, the second evil", setHdr("Origin", "https://mcp.test.invalid"), addHdr("Origin", "http://evil.example")),
		{name: "origin/Host with user info", send: f.raw("127.0.0.1:"+port+"@evil.example", "Mcp-Name: alpha__add\r\n"), status: 400},
		{name: "origin/no Host", send: func(t *testing.T) reply {
			return rawExchange(t, f.gw.MCP, "POST /mcp HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		}, status: 400},
	}
}
