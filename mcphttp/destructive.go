package mcphttp

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/upstreams"
)

// hintsTTL is how long this replica trusts what it learned of the backends' tool annotations.
const hintsTTL = time.Minute

// toolHints remembers which tools declare destructiveHint, learned from the backends' own
// tools/list (MCP annotations, docs/protocol.md §5.2), for server.confirmDestructiveTools.
type toolHints struct {
	mu          sync.Mutex
	destructive map[string]bool // namespaced tool name → destructiveHint
	fetched     time.Time
	refreshing  chan struct{} // closed when the running refresh ends; nil when none runs
}

// isDestructive reports whether a call must be confirmed because its tool declares
// destructiveHint: true. The annotations come from a tools/list this replica made itself, at most
// hintsTTL old. A tool the list does not show is confirmed: unknown is not safe.
func (c *confirmer) isDestructive(x *request, name string) (bool, error) {
	if !c.confirmDestructive {
		return false, nil
	}
	h := &c.hints
	for {
		h.mu.Lock()
		if !h.fetched.IsZero() && c.now().Sub(h.fetched) < hintsTTL {
			d, known := h.destructive[name]
			h.mu.Unlock()
			return d || !known, nil
		}
		if wait := h.refreshing; wait != nil {
			// One refresh at a time; the others wait for its result.
			h.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-x.ctx.Done():
				return false, x.ctx.Err()
			}
		}
		h.refreshing = make(chan struct{})
		h.mu.Unlock()
		m, err := c.fetchDestructive(x)
		h.mu.Lock()
		if err == nil {
			h.destructive, h.fetched = m, c.now()
		}
		close(h.refreshing)
		h.refreshing = nil
		h.mu.Unlock()
		if err != nil {
			return false, err
		}
	}
}

// fetchDestructive lists every backend's tools, all pages, with no identity filter. A backend
// that takes exchanged tokens cannot be listed without a caller's token, so the caller's is
// exchanged for it as for any list (never sent itself); lists a backend marks private are then
// cached under the caller, as on the caller's own tools/list.
func (c *confirmer) fetchDestructive(x *request) (map[string]bool, error) {
	out := map[string]bool{}
	err := c.eachToolsPage(x, 1000, func(page json.RawMessage) (bool, error) {
		// Members by exact name (maps), as clients read them: encoding/json's struct fields
		// would take another spelling listed after them ("DestructiveHint": false beside
		// "destructiveHint": true, or a "NAME" moving the hint to another tool).
		var list struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(page, &list); err != nil {
			return false, upstreams.ErrBadResponse
		}
		for _, t := range list.Tools {
			// A name listed twice is destructive if either listing says so.
			name := exactString(t["name"])
			out[name] = out[name] || destructiveHint(t["annotations"])
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// destructiveHint reads a listed tool's annotations: true when they declare destructiveHint
// true, and when the annotations or the hint are there but not of their type (a string "true",
// which lax decoders read as true): what cannot be read as false is not known to be safe.
// Absent or null, they declare nothing.
func destructiveHint(annotations json.RawMessage) bool {
	var ann map[string]json.RawMessage
	if len(annotations) == 0 || string(annotations) == "null" {
		return false
	}
	if json.Unmarshal(annotations, &ann) != nil {
		return true
	}
	h, ok := ann["destructiveHint"]
	if !ok || string(h) == "null" {
		return false
	}
	var hint bool
	return json.Unmarshal(h, &hint) != nil || hint
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
