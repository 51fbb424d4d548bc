package era

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// This file is the gateway's edge toward pre-2026 clients: what a 2026-07-28 result, error or
// inputRequests entry becomes for a client that negotiated 2025-11-25 or 2025-06-18 at
// initialize, and what its answers become again.

// InitializeResult builds a pre-2026 initialize result from the gateway's 2026 server/discover
// result (its capabilities, instructions and _meta serverInfo), for a client of version.
// Only what the edge serves is advertised: tools, prompts and resources with their
// listChanged (the edge relays list_changed on the GET stream), completions, and logging
// (the edge keeps the session's logging/setLevel and asks for that level on each later
// request); resources.subscribe only when opts.ResourceSubscribe says the edge serves it and
// some backend does; never tasks or experimental.
func InitializeResult(version string, discover []byte, opts InitializeOptions) ([]byte, error) {
	if !IsLegacyVersion(version) {
		return nil, fmt.Errorf("era: initialize: %q is not a pre-2026 version", version)
	}
	if err := scanObject(discover); err != nil {
		return nil, fmt.Errorf("era: initialize: discover result: %w", err)
	}
	var caps, serverInfo []byte
	var instructions string
	err := jsonrpc.Members(discover, func(key, val []byte) error {
		switch string(key) {
		case "capabilities":
			caps = val
		case "instructions":
			if val[0] == '"' {
				return json.Unmarshal(val, &instructions)
			}
		case "_meta":
			if isObject(val) {
				return jsonrpc.Members(val, func(k, v []byte) error {
					if string(k) == jsonrpc.MetaServerInfo && isObject(v) {
						serverInfo = v
					}
					return nil
				})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("era: initialize: discover result: %w", err)
	}
	if serverInfo == nil {
		return nil, errors.New("era: initialize: discover result has no serverInfo")
	}
	if version == V20250326 {
		if serverInfo, err = implementation0326.filter(serverInfo); err != nil {
			return nil, fmt.Errorf("era: initialize: serverInfo: %w", err)
		}
	}
	out := make([]byte, 0, 192+len(serverInfo)+len(instructions))
	out = append(out, `{"protocolVersion":`...)
	out = jsonrpc.AppendString(out, version)
	out = append(out, `,"capabilities":`...)
	out = appendServerCaps(out, caps, opts)
	out = append(out, `,"serverInfo":`...)
	out = append(out, serverInfo...)
	if instructions != "" {
		out = append(out, `,"instructions":`...)
		out = jsonrpc.AppendString(out, instructions)
	}
	return append(out, '}'), nil
}

// InitializeOptions are what the edge serves beyond the backends' capabilities.
type InitializeOptions struct {
	// ResourceSubscribe: the edge serves resources/subscribe (its GET stream, which delivers
	// resources/updated, is on). resources.subscribe is advertised only when the discover
	// result says a backend supports it too.
	ResourceSubscribe bool
}

// appendServerCaps appends the pre-2026 server capabilities the edge serves, out of the 2026
// ones in caps (a scanned value, or nil).
func appendServerCaps(dst, caps []byte, opts InitializeOptions) []byte {
	present := map[string]bool{}
	listChanged := map[string]bool{}
	subscribe := false
	if isObject(caps) {
		_ = jsonrpc.Members(caps, func(key, val []byte) error {
			if !isObject(val) {
				return nil
			}
			k := string(key)
			present[k] = true
			_ = jsonrpc.Members(val, func(m, v []byte) error {
				if string(m) == "listChanged" && string(v) == "true" {
					listChanged[k] = true
				}
				if k == "resources" && string(m) == "subscribe" && string(v) == "true" {
					subscribe = true
				}
				return nil
			})
			return nil
		})
	}
	dst = append(dst, '{')
	for _, k := range []string{"tools", "prompts", "resources"} {
		if !present[k] {
			continue
		}
		dst = appendSep(dst)
		dst = append(jsonrpc.AppendString(dst, k), ':')
		switch {
		case k == "resources" && subscribe && opts.ResourceSubscribe && listChanged[k]:
			dst = append(dst, `{"subscribe":true,"listChanged":true}`...)
		case k == "resources" && subscribe && opts.ResourceSubscribe:
			dst = append(dst, `{"subscribe":true}`...)
		case listChanged[k]:
			dst = append(dst, `{"listChanged":true}`...)
		default:
			dst = append(dst, `{}`...)
		}
	}
	if present["completions"] {
		dst = appendSep(dst)
		dst = append(dst, `"completions":{}`...)
	}
	dst = appendSep(dst)
	dst = append(dst, `"logging":{}`...)
	return append(dst, '}')
}

// ToLegacyClientResult reshapes a 2026-07-28 result of method for a client of version: it drops
// resultType, ttlMs and cacheScope (ToLegacyResult). Both pre-2026 schemas require an object
// where 2026-07-28 allows any JSON, and SDK clients validate it (TypeScript SDK v1 refuses the
// whole result, and validates structuredContent against outputSchema), so for every pre-2026
// version tools/list drops an outputSchema whose type is not "object", and tools/call drops a
// structuredContent that is not an object, making sure a text block carries its JSON (2026
// servers SHOULD send one anyway). For 2025-03-26, which has no structured output, titles, icons
// or resource links, the items are cut down to what that revision defines (v20250326.go). A
// result that is not complete (input_required, task) is an
// error: it must never reach a pre-2026 client as such. serverInfo, when not nil, becomes the
// result's _meta serverInfo (the gateway's, as on every result it answers), in the same pass.
func ToLegacyClientResult(method, version string, result, serverInfo []byte) ([]byte, error) {
	return AppendLegacyClientResult(nil, method, version, result, serverInfo)
}

// AppendLegacyClientResult is ToLegacyClientResult appending to dst (the head of a response,
// say), so the reshaped result is written once.
func AppendLegacyClientResult(dst []byte, method, version string, result, serverInfo []byte) ([]byte, error) {
	if !IsLegacyVersion(version) {
		return nil, fmt.Errorf("era: %q is not a pre-2026 version", version)
	}
	if err := scanObject(result); err != nil {
		return nil, fmt.Errorf("era: %s result: %w", method, err)
	}
	structured, content, err := resultParts(method, result)
	if err != nil {
		return nil, err
	}
	w := legacyResult{method: method, version: version, serverInfo: serverInfo}
	// 2025-03-26 has no structured output at all; the later revisions take an object only.
	w.dropStructured = method == "tools/call" && structured != nil && (!isObject(structured) || version == V20250326)
	if w.dropStructured {
		if w.newContent, err = contentCarrying(content, structured); err != nil {
			return nil, fmt.Errorf("era: tools/call result: %w", err)
		}
	}
	if version == V20250326 {
		w.shaped = result0326[method]
	}
	// One pass into one buffer, the added members at the end.
	w.out = slices.Grow(dst, len(result)+len(w.newContent)+len(serverInfo)+len(`,"_meta":{"":}`)+len(jsonrpc.MetaServerInfo)+16)
	w.out = append(w.out, '{')
	if err := jsonrpc.Members(result, w.member); err != nil {
		return nil, fmt.Errorf("era: %s result: %w", method, err)
	}
	if serverInfo != nil && !w.hasMeta {
		w.key([]byte("_meta"))
		w.out, _ = appendWithServerInfo(w.out, []byte(`{}`), serverInfo)
	}
	if w.newContent != nil && content == nil {
		w.key([]byte("content"))
		w.out = append(w.out, w.newContent...)
	}
	return append(w.out, '}'), nil
}

// resultParts checks a result's resultType (only "complete" may reach a pre-2026 client) and
// returns its structuredContent and content members (nil when absent).
func resultParts(method string, result []byte) (structured, content []byte, err error) {
	err = jsonrpc.Members(result, func(key, val []byte) error {
		switch string(key) {
		case "resultType":
			if string(val) != `"complete"` {
				return fmt.Errorf("era: %s result of type %s is not for a pre-2026 client", method, val)
			}
		case "structuredContent":
			structured = val
		case "content":
			content = val
		}
		return nil
	})
	return structured, content, err
}

// legacyResult writes a result reshaped for a pre-2026 client (AppendLegacyClientResult), one
// member at a time.
type legacyResult struct {
	out             []byte
	n               int  // members written
	hasMeta         bool // the result had _meta
	method, version string
	serverInfo      []byte
	// dropStructured: structuredContent is left out, and newContent (its JSON in a text block
	// added to content) written in content's place.
	dropStructured bool
	newContent     []byte
	shaped         fieldSet // the members shape20250326 rewrites, for a 2025-03-26 client
}

// key writes a member's key (and the comma before it).
func (w *legacyResult) key(key []byte) {
	if w.n > 0 {
		w.out = append(w.out, ',')
	}
	w.n++
	w.out = append(jsonrpc.AppendString(w.out, key), ':')
}

// member writes one member of the result as the client's version has it, or leaves it out.
func (w *legacyResult) member(key, val []byte) error {
	if shadowsResultKey(key, w.shaped) {
		return nil
	}
	switch string(key) {
	case "resultType", "ttlMs", "cacheScope":
		return nil
	case "_meta":
		w.hasMeta = true
		w.key(key)
		if w.serverInfo == nil || len(val) == 0 || val[0] != '{' {
			w.out = append(w.out, val...)
			return nil
		}
		var err error
		w.out, err = appendWithServerInfo(w.out, val, w.serverInfo)
		return err
	case "structuredContent":
		if w.dropStructured {
			return nil
		}
	case "content":
		if w.newContent != nil {
			val = w.newContent
		}
	case "tools":
		if w.method == methodToolsList && len(val) > 0 && val[0] == '[' && w.version != V20250326 {
			tools, err := mapArray(val, legacyTool)
			if err != nil {
				return err
			}
			val = tools
		}
	}
	if w.version == V20250326 {
		var err error
		if val, err = shape20250326(w.method, key, val); err != nil {
			return err
		}
	}
	w.key(key)
	w.out = append(w.out, val...)
	return nil
}

// resultKeys are the result members AppendLegacyClientResult drops or rewrites.
var resultKeys = [...][]byte{[]byte("resultType"), []byte("ttlMs"), []byte("cacheScope"), []byte("_meta"),
	[]byte("structuredContent"), []byte("content"), []byte("tools")}

// shadowsResultKey reports whether key is another spelling of one of resultKeys, or of the
// members shaped rewrites, under the case folding of case-insensitive JSON decoders (Go's
// encoding/json matches members with bytes.EqualFold): such a member would reach those clients
// as the one the gateway dropped or rewrote ("struCturedContent" as structuredContent,
// "Prompts" as the prompts cut down for 2025-03-26), so it is dropped.
func shadowsResultKey(key []byte, shaped fieldSet) bool {
	for _, k := range resultKeys {
		if foldedOther(key, k) {
			return true
		}
	}
	for k := range shaped {
		if foldedOther(key, []byte(k)) {
			return true
		}
	}
	return false
}

// foldedOther reports whether key is k spelled otherwise, as a case-insensitive decoder reads it.
func foldedOther(key, k []byte) bool {
	return bytes.EqualFold(key, k) && !bytes.Equal(key, k)
}

// appendWithServerInfo appends the _meta object meta with its serverInfo member, if any,
// replaced by info.
func appendWithServerInfo(dst, meta, info []byte) ([]byte, error) {
	dst = append(dst, '{')
	n := 0
	err := jsonrpc.Members(meta, func(k, v []byte) error {
		if string(k) == jsonrpc.MetaServerInfo {
			return nil
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(append(jsonrpc.AppendString(dst, k), ':'), v...)
		return nil
	})
	if n > 0 {
		dst = append(dst, ',')
	}
	dst = append(append(jsonrpc.AppendString(dst, jsonrpc.MetaServerInfo), ':'), info...)
	return append(dst, '}'), err
}

// legacyTool drops a tool's outputSchema unless its type is "object".
func legacyTool(tool []byte) ([]byte, error) {
	if !isObject(tool) {
		return tool, nil
	}
	return FilterObject(make([]byte, 0, len(tool)), tool, func(key []byte, val []byte) ([]byte, bool) {
		if string(key) != "outputSchema" {
			return val, true
		}
		return val, objectSchema(val)
	})
}

// objectSchema reports whether the JSON Schema schema says type "object" (exactly: a type
// list such as ["object","null"] is not what a pre-2026 client accepts).
func objectSchema(schema []byte) bool {
	if !isObject(schema) {
		return false
	}
	ok := false
	_ = jsonrpc.Members(schema, func(k, v []byte) error {
		if string(k) == "type" {
			ok = string(v) == `"object"`
		}
		return nil
	})
	return ok
}

// contentCarrying returns the content array (or nil, when absent) with a text block carrying
// structured as JSON added, unless a text block already carries a value equal to it.
func contentCarrying(content, structured []byte) ([]byte, error) {
	var blocks []json.RawMessage
	if content != nil {
		if err := json.Unmarshal(content, &blocks); err != nil {
			return nil, fmt.Errorf("content is not an array: %w", err)
		}
	}
	var want any
	if err := json.Unmarshal(structured, &want); err != nil {
		return nil, err
	}
	for _, b := range blocks {
		var block struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &block) != nil || block.Type != "text" {
			continue
		}
		var got any
		if json.Unmarshal([]byte(block.Text), &got) == nil && reflect.DeepEqual(got, want) {
			return content, nil
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, structured); err != nil {
		return nil, err
	}
	text := append([]byte(`{"type":"text","text":`), jsonrpc.AppendString(nil, compact.String())...)
	text = append(text, '}')
	out := make([]byte, 0, len(content)+len(text)+2)
	out = append(out, '[')
	for i, b := range blocks {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	if len(blocks) > 0 {
		out = append(out, ',')
	}
	out = append(out, text...)
	return append(out, ']'), nil
}

// mapArray applies fn to each element of the JSON array arr.
func mapArray(arr []byte, fn func([]byte) ([]byte, error)) ([]byte, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(arr, &elems); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(arr))
	out = append(out, '[')
	for i, e := range elems {
		v, err := fn(e)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return append(out, ']'), nil
}

// LegacyClientError maps a 2026-07-28 error to method for a pre-2026 client: a resources/read
// "resource not found" (-32602 naming the URI in data, SEP-2164, or saying the resource is
// unknown or not found, as the gateway's own answer does) is -32002, the code pre-2026 clients
// know. Any other error is returned as it is; e is never modified.
func LegacyClientError(method string, e *jsonrpc.Error) *jsonrpc.Error {
	if e == nil || method != methodResourcesRead || e.Code != jsonrpc.CodeInvalidParams || !resourceNotFound(e) {
		return e
	}
	c := *e
	c.Code = CodeResourceNotFound
	return &c
}

// resourceNotFound tells a resource-not-found -32602 from other invalid params.
func resourceNotFound(e *jsonrpc.Error) bool {
	msg := strings.ToLower(e.Message)
	if strings.Contains(msg, "not found") || strings.Contains(msg, "unknown resource") {
		return true
	}
	return len(e.Data) > 0 && jsonrpc.Scan(e.Data, jsonrpc.Limits{}) == nil && hasMember(e.Data, "uri")
}

// checkedLimits bound the scan of what reaches this package already checked: a backend's
// message, read within its backend's maxResponseBytes by upstreams, or a client's, strictly
// decoded within the gateway's own limits. Only the structure is checked again, so a string is
// not held to the decoder's default token size: a pre-2026 client gets a 15 MB text result
// like any other client.
var checkedLimits = jsonrpc.Limits{MaxDepth: 1 << 10, MaxTokenBytes: 1 << 30}

// scanObject checks that b is one well-formed JSON object without duplicate keys: what the
// functions here are given comes from backends and clients, and must be refused, never trusted.
func scanObject(b []byte) error {
	if err := jsonrpc.Scan(b, checkedLimits); err != nil {
		return err
	}
	if !isObject(b) {
		return errors.New("not a JSON object")
	}
	return nil
}
