package legacyclient

import "github.com/modelcontextprotocol/go-sdk/mcp"

// What a scenario adapts to a target whose tools are not the test backends' (such as the
// demo's), and what it reads of the gateway's own marks.

// args returns the arguments of step's tool call: the scenario's, or def.
func (sc Scenario) args(step string, def map[string]any) map[string]any {
	if a, ok := sc.Arguments[step]; ok {
		return a
	}
	return def
}

// requiredScopesMeta is the _meta key the gateway marks a listed tool with when a call needs
// scopes the caller lacks (upstreams.RequiredScopesMeta, repeated: test support does not
// import the gateway's packages).
const requiredScopesMeta = "io.mcp-gateway/requiredScopes"

// requiredScopes reads the gateway's mark from a tool's _meta; nil when unmarked.
func requiredScopes(meta mcp.Meta) []string {
	raw, _ := meta[requiredScopesMeta].([]any)
	var out []string
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
