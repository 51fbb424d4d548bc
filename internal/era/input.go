package era

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/weburl"
)

// InputRequest is one entry of an input_required result's inputRequests, as a pre-2026 client
// gets it: a server→client JSON-RPC request on the response stream of its call.
type InputRequest struct {
	Key        string          // the inputRequests key
	Method     string          // "elicitation/create", "sampling/createMessage" or "roots/list"
	Params     json.RawMessage // as sent to the pre-2026 client (jsonrpc request params); always an object
	Capability string          // what the client must have declared: one of the Cap* names
}

// InputRequests parses inputRequests (a JSON object) for a client of version, ordered by key
// (byte order), so that every replica asks in the same order whatever the backend's member
// order. Each entry must name one of the three methods MRTR allows, with params that are an
// object (or absent, for roots/list); anything else is an error, and nothing is asked.
//
// Elicitation: form mode (mode "form" or none) needs elicitation.form; for a 2025-06-18 client
// the mode member is dropped, since that revision has form mode only. URL mode needs
// elicitation.url, which ClientCaps.ForVersion never grants a 2025-06-18 client; for a
// 2025-11-25 client, whose schema requires elicitationId (removed in 2026-07-28), the key
// stands in when the server gave none: the gateway sends no elicitation/complete notification
// that would need another. Sampling needs sampling, plus sampling.tools when it offers tools
// (tools or toolChoice) and sampling.context when includeContext is not "none" (both when it does both). Roots need roots. Reserved
// io.modelcontextprotocol/* keys are dropped from the params' _meta: they mean a 2026 request.
func InputRequests(version string, inputRequests json.RawMessage) ([]InputRequest, error) {
	if !IsLegacyVersion(version) {
		return nil, fmt.Errorf("era: %q is not a pre-2026 version", version)
	}
	if err := scanObject(inputRequests); err != nil {
		return nil, fmt.Errorf("era: inputRequests: %w", err)
	}
	var reqs []InputRequest
	err := jsonrpc.Members(inputRequests, func(key, val []byte) error {
		r, err := inputRequest(version, string(key), val)
		if err != nil {
			return fmt.Errorf("era: inputRequests[%q]: %w", key, err)
		}
		reqs = append(reqs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(reqs, func(a, b InputRequest) int { return strings.Compare(a.Key, b.Key) })
	return reqs, nil
}

// ServerRequest translates one request that a pre-2026 backend sent during a call
// (elicitation/create, sampling/createMessage or roots/list, with its JSON-RPC params) into the
// request a pre-2026 client of version gets, under key, exactly as InputRequests translates an
// inputRequests entry: the same capability to check and the same params rules. Names in it are
// not rewritten: a sampling request's content is opaque, an elicitation's message and roots are
// the backend's to word.
func ServerRequest(version, key, method string, params json.RawMessage) (InputRequest, error) {
	if !IsLegacyVersion(version) {
		return InputRequest{}, fmt.Errorf("era: %q is not a pre-2026 version", version)
	}
	entry := jsonrpc.AppendString([]byte(`{"method":`), method)
	if len(params) > 0 && string(params) != "null" {
		if err := scanObject(params); err != nil {
			return InputRequest{Key: key, Method: method}, fmt.Errorf("era: %s params: %w", method, err)
		}
		entry = append(append(entry, `,"params":`...), params...)
	}
	r, err := inputRequest(version, key, append(entry, '}'))
	if err != nil {
		return r, fmt.Errorf("era: %s: %w", method, err)
	}
	return r, nil
}

// inputRequest translates one scanned inputRequests entry.
func inputRequest(version, key string, entry []byte) (InputRequest, error) {
	r := InputRequest{Key: key}
	if !isObject(entry) {
		return r, fmt.Errorf("not an object")
	}
	if err := spelledOtherwise(entry, readEntry[:]); err != nil {
		return r, err
	}
	var params []byte
	err := jsonrpc.Members(entry, func(k, v []byte) error {
		switch string(k) {
		case "method":
			if v[0] != '"' {
				return fmt.Errorf("method is not a string")
			}
			return json.Unmarshal(v, &r.Method)
		case "params":
			params = v
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	if params == nil || string(params) == "null" {
		if r.Method != MethodRootsList {
			return r, fmt.Errorf("%s without params", r.Method)
		}
		params = []byte(`{}`)
	}
	if !isObject(params) {
		return r, fmt.Errorf("params are not an object")
	}
	if err := spelledOtherwise(params, readParams[:]); err != nil {
		return r, err
	}
	switch r.Method {
	case MethodElicitationCreate:
		return elicitation(r, version, params)
	case MethodSamplingCreate:
		// One capability per entry: a request that offers tools and includes context needs
		// both, which neither implies.
		tools, context := false, false
		_ = jsonrpc.Members(params, func(k, v []byte) error {
			switch string(k) {
			case "tools", "toolChoice":
				// toolChoice is a tool-use parameter too: sampling.tools declares both.
				tools = tools || string(v) != "null"
			case "includeContext":
				context = string(v) != `"none"` && string(v) != "null"
			}
			return nil
		})
		switch {
		case tools && context:
			r.Capability = CapSamplingToolsContext
		case tools:
			r.Capability = CapSamplingTools
		case context:
			r.Capability = CapSamplingContext
		default:
			r.Capability = CapSampling
		}
	case MethodRootsList:
		r.Capability = CapRoots
	default:
		return r, fmt.Errorf("method %q is not one a server may ask a client", r.Method)
	}
	r.Params, err = withoutProtocolMeta(params, nil)
	return r, err
}

// readEntry are the members of an inputRequests entry the gateway reads: method and params.
var readEntry = [...][]byte{[]byte("method"), []byte("params")}

// readParams are the params members the gateway reads or writes in a request to a client:
// mode and url (URL-mode elicitation, which needs elicitation.url), elicitationId (added when
// absent), requestedSchema (a form's fields, checked flat: formschema.go), tools, toolChoice and
// includeContext (sampling.tools, sampling.context; includeContext rewritten: context.go),
// _meta (reserved keys dropped, the guardrails' annotation added).
var readParams = [...][]byte{[]byte("mode"), []byte("url"), []byte("elicitationId"), []byte("requestedSchema"),
	[]byte("tools"), []byte("toolChoice"), []byte("includeContext"), []byte("_meta")}

// spelledOtherwise refuses obj (an object) when a member of it is one of names spelled otherwise
// ("Mode", "include_context", "_META", "METHOD"; jsonrpc.FoldEqual), naming the first. The
// gateway decides on the exact name what a request needs of the client, but a client whose
// decoder folds case or punctuation (Go's encoding/json, encoding/json/v2's case-insensitive
// matching) reads such a member as that one: "Mode":"url" would reach a client that declared
// form mode only as a URL-mode elicitation, "Tools" one that never declared sampling.tools as a
// tool-enabled sampling request. Such a request is not sent, on either edge.
func spelledOtherwise(obj []byte, names [][]byte) error {
	var err error
	_ = jsonrpc.Members(obj, func(k, _ []byte) error {
		for _, name := range names {
			if err == nil && jsonrpc.FoldEqual(k, name) && string(k) != string(name) {
				err = fmt.Errorf("member %q spells %s another way (case or punctuation)", k, name)
			}
		}
		return nil
	})
	return err
}

// elicitation translates the params of an elicitation/create entry.
func elicitation(r InputRequest, version string, params []byte) (InputRequest, error) {
	mode := "form"
	hasID := false
	var link, schema []byte
	var err error
	_ = jsonrpc.Members(params, func(k, v []byte) error {
		switch string(k) {
		case "mode":
			if v[0] != '"' || json.Unmarshal(v, &mode) != nil {
				mode = "?"
			}
		case "elicitationId":
			hasID = true
		case "url":
			link = v
		case "requestedSchema":
			schema = v
		}
		return nil
	})
	var add []byte
	keepMode := true
	switch mode {
	case "form":
		r.Capability = CapElicitationForm
		keepMode = version == V20251125
		if err := checkFormSchema(schema); err != nil {
			return r, err
		}
	case "url":
		r.Capability = CapElicitationURL
		if err := webPage(link); err != nil {
			return r, err
		}
		if !hasID {
			add = jsonrpc.AppendString([]byte(`"elicitationId":`), r.Key)
		}
	default:
		return r, fmt.Errorf("unknown elicitation mode")
	}
	r.Params, err = withoutProtocolMeta(params, func(k string) bool { return k != "mode" || keepMode })
	if err == nil && add != nil {
		r.Params = InsertMembers(r.Params, add)
	}
	return r, err
}

// webPage refuses the url member of a URL-mode elicitation (raw JSON, nil when absent) unless
// it is a string holding an absolute http or https URL with a host and no user information,
// with no space, control character or backslash in it. The client opens it in a browser: a
// javascript: or data: URL runs the backend's script there, a file: URL opens the user's own
// files, and a user part or a backslash (which a browser reads as a slash, and a parser may
// not) shows one host and goes to another; none of them is a host the guardrails' link
// allowlist is read against. The error names no part of the url, which may carry a secret.
func webPage(raw []byte) error {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return fmt.Errorf("URL-mode elicitation without a url string")
	}
	if strings.ContainsFunc(s, func(c rune) bool { return c <= ' ' || c == 0x7f || c == '\\' }) {
		return fmt.Errorf("URL-mode elicitation url holds a space, control character or backslash")
	}
	u, err := url.Parse(s)
	if err != nil || (!strings.EqualFold(u.Scheme, "https") && !strings.EqualFold(u.Scheme, "http")) ||
		u.Opaque != "" || u.Hostname() == "" {
		return fmt.Errorf("URL-mode elicitation url is not an absolute http(s) URL with a host")
	}
	if u.User != nil {
		return fmt.Errorf("URL-mode elicitation url holds user information")
	}
	// The host the browser goes to must be the host as written, which the person is shown and
	// the guardrails' link allowlist reads: a browser percent-decodes a host, maps it through
	// IDNA and reads a number as an IPv4 address, so https://idp.example%E3%80%82attacker.test
	// goes to idp.example.attacker.test and https://0x7f.1 to 127.0.0.1.
	b, err := weburl.Parse(s)
	if err != nil || b.User != "" {
		return fmt.Errorf("URL-mode elicitation url is not one a browser opens as written")
	}
	if b.Host != strings.ToLower(b.RawHost) {
		return fmt.Errorf("URL-mode elicitation url's host is not written as a browser reads it")
	}
	return nil
}

// withoutProtocolMeta copies the object obj keeping the members keep keeps (all when nil),
// with reserved io.modelcontextprotocol/* keys dropped from its _meta, and a _meta left empty
// dropped.
func withoutProtocolMeta(obj []byte, keep func(key string) bool) (json.RawMessage, error) {
	var inner error
	out, err := FilterObject(make([]byte, 0, len(obj)), obj, func(key []byte, val []byte) ([]byte, bool) {
		if keep != nil && !keep(string(key)) {
			return nil, false
		}
		if string(key) != "_meta" || !isObject(val) {
			return val, true
		}
		meta, err := FilterObject(nil, val, func(k []byte, v []byte) ([]byte, bool) { return v, !IsProtocolMetaKey(string(k)) })
		if err != nil {
			inner = err
		}
		return meta, string(meta) != "{}"
	})
	if err == nil {
		err = inner
	}
	return out, err
}

// protocolMetaPrefix is the folded form of the _meta prefix the MCP specification reserves for
// its own keys.
var protocolMetaPrefix = jsonrpc.FoldKey("io.modelcontextprotocol/")

// IsProtocolMetaKey reports whether k is in the io.modelcontextprotocol/ namespace that the
// specification reserves, in any spelling that some decoder reads as such (jsonrpc.FoldKey).
// Such keys declare a request's era, capabilities and client: a pre-2026 client or answer must
// not bring its own.
func IsProtocolMetaKey(k string) bool {
	return strings.HasPrefix(jsonrpc.FoldKey(k), protocolMetaPrefix)
}

// InputResponse turns a pre-2026 client's JSON-RPC result for req into the value of
// inputResponses[req.Key]: the client's ElicitResult, CreateMessageResult or ListRootsResult,
// checked for the members the gateway and the backend read (an elicitation's action; a
// sampling result's role, content and model; the roots array), without resultType (input
// responses carry none), without reserved io.modelcontextprotocol/* _meta keys, and, for a
// URL-mode elicitation, without content (2026-07-28 has none there).
func InputResponse(req InputRequest, result json.RawMessage) (json.RawMessage, error) {
	if err := scanObject(result); err != nil {
		return nil, fmt.Errorf("era: answer to %s: %w", req.Method, err)
	}
	seen := map[string][]byte{}
	_ = jsonrpc.Members(result, func(k, v []byte) error {
		seen[string(k)] = v
		return nil
	})
	var bad string
	switch req.Method {
	case MethodElicitationCreate:
		switch string(seen["action"]) {
		case `"accept"`, `"decline"`, `"cancel"`:
		default:
			bad = "action"
		}
	case MethodSamplingCreate:
		switch {
		case !isString(seen["role"]):
			bad = "role"
		case seen["content"] == nil || string(seen["content"]) == "null":
			bad = "content"
		case !isString(seen["model"]):
			bad = "model"
		}
	case MethodRootsList:
		if r := seen["roots"]; len(r) == 0 || r[0] != '[' {
			bad = "roots"
		}
	default:
		return nil, fmt.Errorf("era: answer to unknown method %q", req.Method)
	}
	if bad != "" {
		return nil, fmt.Errorf("era: answer to %s: missing or invalid %s", req.Method, bad)
	}
	urlMode := req.Capability == CapElicitationURL
	out, err := withoutProtocolMeta(result, func(k string) bool {
		return k != "resultType" && !(urlMode && k == "content")
	})
	if err != nil {
		return nil, fmt.Errorf("era: answer to %s: %w", req.Method, err)
	}
	return out, nil
}

// isString reports whether the scanned JSON value v is a string.
func isString(v []byte) bool { return len(v) > 0 && v[0] == '"' }
