package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestControlCharactersInMcpName: one rule for control characters in Mcp-Name, Unicode's Cc
// (C0, DEL and C1 alike): a name holding one never passes the header check, whichever way it
// is spelt (the sentinel, raw UTF-8 where a header can carry it; the body's name raw or as a
// JSON \u escape), from a 2026-07-28 client and a 2025-11-25 one that sends the header. It is
// -32020 and the backend receives nothing. U+00A0, the first code point past C1, is no control:
// its header passes and the name is merely unknown.
func TestControlCharactersInMcpName(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, nil, alpha)
	url := "http://" + gw.MCP + "/mcp"
	raw := &legacyclient.Raw{}
	sid := raw.Initialize(t, url)
	type spelling struct{ header, body string }
	spellings := func(r rune) []spelling {
		name := "alpha__echo" + string(r)
		plain, _ := json.Marshal(name)
		escaped := `"alpha__echo\u` + fmt.Sprintf("%04x", r) + `"`
		out := []spelling{{mcpheader.Encode(name), string(plain)}, {mcpheader.Encode(name), escaped}}
		if r >= 0x80 { // a header carries non-ASCII bytes raw; net/http refuses C0 and DEL
			out = append(out, spelling{name, string(plain)}, spelling{name, escaped})
		}
		return out
	}
	send := func(t *testing.T, modern bool, id int, sp spelling) string {
		t.Helper()
		if modern {
			h := modernHeaders("tools/call", "")
			h[mcpheader.Name] = []string{sp.header}
			_, _, body := post(t, url, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s,"name":%s,"arguments":{"text":"hi"}}}`,
				id, testMeta, sp.body))
			return body
		}
		raw.Header = http.Header{mcpheader.Name: {sp.header}}
		return raw.Post(t, url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":{"text":"hi"}}}`,
			id, sp.body)).Body
	}
	for _, era := range []string{"2026-07-28", legacyclient.Version} {
		modern := era == "2026-07-28"
		for _, r := range []rune{0x01, 0x0a, 0x1f, 0x7f, 0x80, 0x85, 0x9b, 0x9f, 0xa0} {
			for i, sp := range spellings(r) {
				t.Run(fmt.Sprintf("%s/U+%04X/%d", era, r, i), func(t *testing.T) {
					alpha.Reset()
					body := send(t, modern, i+1, sp)
					want := "-32020"
					if r == 0xa0 {
						want = "unknown tool"
					}
					if !strings.Contains(body, want) {
						t.Errorf("Mcp-Name %q, body name %s: %.300s, want %s", sp.header, sp.body, body, want)
					}
					if n := toolCalls(alpha); n != 0 {
						t.Errorf("the backend received %d calls", n)
					}
				})
			}
		}
	}
}
