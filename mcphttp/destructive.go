package mcphttp

import (
	"encoding/json"

	"github.com/mcp-gateway/gateway/upstreams"
)

// isDestructive reports whether a tools/call must be confirmed because its tool declares
// destructiveHint: true (server.confirmDestructiveTools, MCP annotations, docs/protocol.md §5.2).
// The hint is read from the tool's entry in its backend's tools/list as this caller sees it, the
// entry stage bind-headers found (x.route.toolHeaders): a backend that shows callers different
// lists (a token-exchange or per-user backend marking its list private) is judged on the list
// the caller was shown, never on another caller's. A call with no entry is confirmed: unknown is
// not safe (a tool no list shows is not called at all).
func (c *confirmer) isDestructive(x *request) bool {
	if !c.confirmDestructive {
		return false
	}
	th := x.route.toolHeaders
	return th == nil || th.Destructive
}

// eachToolsPage walks the merged tools/list as the gateway's own request on the caller's behalf
// (cached under the caller, the caller's token exchanged where a backend needs it), calling fn
// with each page until fn says done, fn fails, the list ends or maxPages pages were read.
func (c *confirmer) eachToolsPage(x *request, maxPages int, fn func(page json.RawMessage) (done bool, err error)) error {
	cursor := ""
	for page := 0; page < maxPages; page++ {
		params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + ProtocolVersion +
			`","io.modelcontextprotocol/clientCapabilities":{}}`
		if page > 0 {
			c, _ := json.Marshal(cursor)
			params += `,"cursor":` + string(c)
		}
		res, err := c.backends.List(x.ctx, &upstreams.ListRequest{Method: "tools/list", Params: json.RawMessage(params + "}"),
			CacheKey: x.subject(), SubjectToken: x.listSubjectToken(), SubjectKey: x.caller.keyOf(x.listSubjectToken())})
		if err != nil {
			return err
		}
		if done, err := fn(res); done || err != nil {
			return err
		}
		var next struct {
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &next); err != nil {
			return upstreams.ErrBadResponse
		}
		if next.NextCursor == nil || *next.NextCursor == "" {
			return nil
		}
		cursor = *next.NextCursor
	}
	return nil
}
