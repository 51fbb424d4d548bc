package gateway

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestAccessLogBoundsClientText: the access line of a request refused before authentication
// carries the client's method and protocol version; a client could write up to a JSON token's
// limit (1 MiB) of text of its choosing into the log with each request, with no token at all.
// Like the request id, each is written as sent only when it is a short token of visible ASCII,
// else as "_other" (as metrics and spans fold unknown methods); a real one is written as is.
func TestAccessLogBoundsClientText(t *testing.T) {
	iss := newIssuer(t)
	gw, logs, stop := startLoggedGateway(t, func(c *Config) { trustIssuers(c, iss); c.MRTR.Keys = testKeys }, mcptest.StartServer(t, "alpha"))
	chosen := "ATTACKER-TEXT" + strings.Repeat("Z", 300000)
	mismatched := modernHeaders("tools/list", "")
	mismatched.Set("MCP-Protocol-Version", "2026-07-28")
	for _, c := range []struct {
		h    http.Header
		body string
	}{
		{modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"` + chosen + `","params":{` + testMeta + `}}`},
		{modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","method":"` + chosen + `","params":{` + testMeta + `}}`},
		{modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"bad method\u0000","params":{` + testMeta + `}}`},
		{mismatched, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` +
			chosen + `","io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + testMeta + `}}`},
	} {
		if status, _, body := post(t, "http://"+gw.MCP+"/mcp", c.h, c.body); status < 400 && status != http.StatusAccepted {
			t.Fatalf("status %d: %s", status, body)
		}
	}
	stop()
	var access []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "ATTACKER-TEXT") || strings.Contains(line, "bad method") || len(line) > 4096 {
			t.Errorf("a log line carries the client's text (%d bytes): %.200s", len(line), line)
		}
		if strings.Contains(line, `"msg":"request"`) {
			access = append(access, line)
		}
	}
	if len(access) != 5 {
		t.Fatalf("%d access lines, want one per request:\n%s", len(access), strings.Join(access, "\n"))
	}
	for i, want := range []string{`"method":"_other"`, `"method":"_other"`, `"method":"_other"`, `"pv":"_other"`, `"method":"tools/list"`} {
		if !strings.Contains(access[i], want) {
			t.Errorf("access line %d lacks %s: %.300s", i, want, access[i])
		}
	}
}

// TestLogLinesShowNoLineControls: a name a pre-2026 client calls is written in the access line
// as it was sent (up to its length bound), and may hold characters JSON leaves unescaped that a
// reader acts on: U+0085 (NEL), a line break to readers that split lines as Unicode does, which
// would start a forged line; a C1 escape; a right-to-left override, which makes a terminal show
// the fields after it reordered. Each is written as U+FFFD, and the line is otherwise as it was.
func TestLogLinesShowNoLineControls(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw, logs, stop := startLoggedGateway(t, func(c *Config) { c.Auth.Disabled = true }, alpha)
	url := "http://" + gw.MCP + "/mcp"
	raw := &legacyclient.Raw{}
	sid := raw.Initialize(t, url)
	forged := `{"level":"INFO","msg":"request","subject":"admin"}`
	for _, name := range []string{"alpha__a\u202eb", "alpha__\u2067x\u2069", "alpha__n\u0085" + forged, "alpha__\u009b31m"} {
		if r := raw.Post(t, url, sid, raw.CallArgs(name, `{}`)); !strings.Contains(r.Body, `"jsonrpc"`) {
			t.Fatalf("call %q: %s", name, r)
		}
	}
	stop()
	var names []string
	for _, l := range logLines(t, logs.String()) {
		if l.str("msg") == "request" && l.str("method") == "tools/call" {
			names = append(names, l.str("name"))
		}
	}
	want := []string{"alpha__a\ufffdb", "alpha__\ufffdx\ufffd", "alpha__n\ufffd" + forged, "alpha__\ufffd31m"}
	if !slices.Equal(names, want) {
		t.Errorf("the access lines name %+q, want %+q", names, want)
	}
	if i := strings.IndexAny(logs.String(), "\u202e\u2067\u2069\u0085\u009b"); i >= 0 {
		t.Errorf("a control reached the log: %+q", logs.String()[max(0, i-100):i+10])
	}
}
