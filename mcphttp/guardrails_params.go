package mcphttp

import (
	"strings"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The argument detectors read everything of a request's params that the backend receives from
// the client, not only its arguments: the client's _meta members (forwarded as they are), an
// MRTR retry's inputResponses (what a person typed into a form, for the backend) and any member
// the gateway does not know. Left out are the name and the uri, which authorization and routing
// read exactly and the backend needs as they are, and the requestState, which the gateway
// sealed itself.

// unscannedParams are the members of params the argument detectors leave alone.
var unscannedParams = [...]string{"name", "uri", "arguments", "requestState"}

// checkParams runs the argument detectors over the members of x's params other than
// unscannedParams. Their findings are added to rep (the arguments' report, so the request has
// one audit line and one check in the metrics), with their path from the params; a member with
// redactions is replaced in the params forwarded. It returns the members' own report when a
// finding blocks the request, for the refusal to name.
func (g *railer) checkParams(x *request, rule *guardrails.Rule, rep *guardrails.Report) (*guardrails.Report, error) {
	params := x.in.req.Params
	type change struct {
		key      string
		old, new []byte
	}
	var changes []change
	var blocked *guardrails.Report
	err := jsonrpc.Members(params, func(key, val []byte) error {
		for _, k := range unscannedParams {
			if string(key) == k {
				return nil
			}
		}
		sub := rule.ScanArguments(val)
		if sub.Clean() {
			return nil
		}
		prefix := "/" + pointerToken(string(key))
		for k := range sub.Findings {
			sub.Findings[k].Path = prefix + sub.Findings[k].Path
			f := &sub.Findings[k]
			rep.Add(f.Detector, f.Action, f.Path, "")
		}
		if sub.Err != nil && rep.Err == nil {
			rep.Err = sub.Err
		}
		if sub.Blocked() && blocked == nil {
			blocked = sub
		}
		if sub.Redacted() {
			changes = append(changes, change{string(key), val, sub.Rewrite(val)})
		}
		return nil
	})
	if err != nil || blocked != nil || len(changes) == 0 {
		return blocked, err
	}
	for _, c := range changes {
		if params, err = spliceMember(params, c.old, c.key, c.new); err != nil {
			return nil, err
		}
	}
	parsed, err := jsonrpc.ParseParams(params)
	if err != nil {
		return nil, err
	}
	x.in.replaceParams(params, parsed)
	return nil, nil
}

// pointerToken escapes a member name as one RFC 6901 reference token.
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
