package gateway

import (
	"net/http"
	"strings"
	"testing"
)

// TestParamHeadersOnlyBound: the only Mcp-Param-* headers a backend, and whatever sits in front
// of it, receives are those the gateway bound to a tools/call's arguments. A client's
// Mcp-Param-* header on a request that has no arguments to mirror (a prompt, a resource read, a
// completion, a list) is bound to nothing, so it is refused with 400/-32020 like a header a
// tool does not declare, and no backend receives the request; the same requests without it
// are served.
func TestParamHeadersOnlyBound(t *testing.T) {
	url, backends := startBothEras(t)
	for _, sb := range backends {
		b := sb.name
		for _, tt := range []struct{ method, name, params string }{
			{"prompts/get", b + "__greet", `"name":"` + b + `__greet","arguments":{"who":"a"}`},
			{"resources/read", b + "+mem://public", `"uri":"` + b + `+mem://public"`},
			{"completion/complete", "", `"ref":{"type":"ref/prompt","name":"` + b + `__greet"},"argument":{"name":"who","value":"a"}`},
			{"tools/list", "", ``},
		} {
			body := `{"jsonrpc":"2.0","id":3,"method":"` + tt.method + `","params":{` + structMeta
			if tt.params != "" {
				body += "," + tt.params
			}
			body += `}}`
			sb.reset()
			h := modernHeaders(tt.method, tt.name)
			h.Set("Mcp-Param-Tenant", "acme")
			status, _, resp := post(t, url, h, body)
			if status != http.StatusBadRequest || !strings.Contains(resp, `"code":-32020`) || !strings.Contains(resp, "Mcp-Param-Tenant header mirrors no argument") {
				t.Errorf("%s %s with Mcp-Param-Tenant: %d %s", b, tt.method, status, resp)
			}
			if got := sb.received(); len(got) != 0 {
				t.Errorf("%s %s: the backend received %+v", b, tt.method, got)
			}
			if status, _, resp := post(t, url, modernHeaders(tt.method, tt.name), body); status != http.StatusOK || strings.Contains(resp, `"error"`) {
				t.Errorf("%s %s without it: %d %s", b, tt.method, status, resp)
			}
		}
	}
}
