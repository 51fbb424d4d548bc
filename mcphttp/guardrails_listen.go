package mcphttp

import (
	"encoding/json"
	"strconv"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/upstreams"
)

// checkListen runs the argument detectors over the resource URIs a subscriptions/listen
// subscribes to, each under the rule that covers reading it and as a read's uri is scanned
// (guardrails_uri.go): the backend that owns it receives the URI in its own listen, as it
// would in a read. A finding refuses the listen (-32602) before any backend is asked; the
// refusal names the place, never the text. Only a gateway with rules pays for the decode, and
// only on a listen.
func (g *railer) checkListen(x *request) error {
	var p struct {
		Notifications struct {
			ResourceSubscriptions []json.RawMessage `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if json.Unmarshal(x.in.req.Params, &p) != nil {
		return nil // malformed: the listen refuses it itself
	}
	for i, raw := range p.Notifications.ResourceSubscriptions {
		var uri string
		if json.Unmarshal(raw, &uri) != nil {
			continue
		}
		t, err := x.s.backends.Resolve(upstreams.KindResource, uri)
		if err != nil {
			continue // names no backend: no backend receives it
		}
		rule := g.engine.Rule(guardrails.KindResource, t.Upstream, t.Name)
		if rule == nil || !rule.ScansArguments() {
			continue
		}
		rep := &guardrails.Report{Rule: rule.ID(), Dir: guardrails.DirArguments}
		ps := paramsScan{rule: rule, rep: rep, method: upstreams.MethodResourcesRead, backendURI: t.Name,
			uriAt: "/notifications/resourceSubscriptions/" + strconv.Itoa(i), scanned: g.uriScanned}
		ps.resource(raw, []byte("uri"))
		g.record(x, rule, rep)
		if ps.blocked != nil {
			return invalidParams("Invalid params: " + refusalText(ps.blocked, "the request's params"))
		}
	}
	return nil
}
