package gateway

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
)

// TestCompletionArgumentVariants: a completion/complete of a resource template is filtered by
// the resource each value names, the template expanded with the variable completed
// (params.argument.name) and the client's other values (params.context.arguments). A backend
// that decodes with encoding/json reads "Argument", {"NAME":…} or "Context" as those members,
// while the gateway would read none of them and judge every value as another resource than the
// one the backend completes: here the name of a shelf the caller may not read. So a spelling
// variant of argument, its name, context or its arguments is refused with 400/-32602 and the
// backend receives nothing, behind a 2026-07-28 backend and a bridged 2025-11-25 one; the
// benign spellings reach it and are filtered.
func TestCompletionArgumentVariants(t *testing.T) {
	iss := newIssuer(t)
	modern, legacy := startStructBackend(t, "m", false), startStructBackend(t, "l", true)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Upstreams = []UpstreamConfig{modern.upstream(), legacy.upstream()}
		c.HealthInterval = time.Hour
		for _, up := range []string{"m", "l"} {
			c.Auth.Policy.Rules = append(c.Auth.Policy.Rules,
				authz.RuleConfig{ID: "no-private-" + up, Upstream: up, Resources: []string{"mem://shelves/private/**"}, Effect: authz.EffectDeny},
				authz.RuleConfig{ID: "shelves-" + up, Upstream: up, Resources: []string{"mem://shelves/**"}, AnyScope: []string{"tools:use"}})
		}
	})
	url := "http://" + gw.MCP + "/mcp"
	tok := mintFor(t, iss, "alice")
	for _, sb := range []*structBackend{modern, legacy} {
		complete := func(t *testing.T, params string) (int, string) {
			t.Helper()
			h := modernHeaders("completion/complete", "")
			h.Set("Authorization", "Bearer "+tok)
			status, _, body := post(t, url, h, `{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{`+structMeta+
				`,"ref":{"type":"ref/resource","uri":"`+sb.name+`+`+structShelves+`"},`+params+`}}`)
			return status, body
		}
		t.Run(sb.name+"/benign", func(t *testing.T) {
			for _, tt := range []struct {
				params string
				want   []string
			}{
				{`"argument":{"name":"item","value":""},"context":{"arguments":{"shelf":"public"}}`, []string{"ledger", "payroll"}},
				{`"argument":{"name":"item","value":""},"context":{"arguments":{"shelf":"private"}}`, nil},
				{`"argument":{"name":"shelf","value":""},"context":{"arguments":{"item":"ledger"}}`, []string{"public"}},
			} {
				sb.reset()
				status, body := complete(t, tt.params)
				var resp struct {
					Result struct{ Completion struct{ Values []string } }
				}
				if err := json.Unmarshal([]byte(body), &resp); err != nil || status != http.StatusOK {
					t.Fatalf("%s: status %d body %s", tt.params, status, body)
				}
				if got := resp.Result.Completion.Values; !slices.Equal(got, tt.want) {
					t.Errorf("%s: values %q, want %q", tt.params, got, tt.want)
				}
				if got := sb.received(); len(got) != 1 {
					t.Errorf("%s: the backend received %+v", tt.params, got)
				}
			}
		})
		for _, tt := range []struct{ name, params string }{
			{"Argument", `"Argument":{"name":"shelf","value":""},"context":{"arguments":{"shelf":"public","item":"ledger"}}`},
			{"escaped ARGUMENT", `"\u0041RGUMENT":{"name":"shelf","value":""},"context":{"arguments":{"shelf":"public","item":"ledger"}}`},
			{"argument NAME", `"argument":{"NAME":"shelf","value":""},"context":{"arguments":{"shelf":"public","item":"ledger"}}`},
			{"argument Name", `"argument":{"Name":"shelf","value":""},"context":{"arguments":{"shelf":"public","item":"ledger"}}`},
			{"argument not an object", `"argument":"shelf","context":{"arguments":{"shelf":"public","item":"ledger"}}`},
			{"Context", `"argument":{"name":"item","value":""},"Context":{"arguments":{"shelf":"private"}}`},
			{"context ARGUMENTS", `"argument":{"name":"item","value":""},"context":{"ARGUMENTS":{"shelf":"private"}}`},
			{"context long s", `"argument":{"name":"item","value":""},"context":{"argument\u017f":{"shelf":"private"}}`},
		} {
			params := tt.params
			t.Run(sb.name+"/"+tt.name, func(t *testing.T) {
				sb.reset()
				status, body := complete(t, params)
				var resp struct {
					Error *struct{ Code int } `json:"error"`
				}
				_ = json.Unmarshal([]byte(body), &resp)
				if status != http.StatusBadRequest || resp.Error == nil || resp.Error.Code != -32602 {
					t.Errorf("%s: status %d body %s, want 400 and -32602", params, status, body)
				}
				if got := sb.received(); len(got) != 0 {
					t.Errorf("%s: the backend acted on %+v", params, got)
				}
			})
		}
	}
}
