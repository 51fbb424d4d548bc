package mcphttp

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// A backend's result is checked for the shapes 2026-07-28 forbids before anything reads or
// relays it (docs/protocol.md §3): a result that is not an object, a resultType the request
// cannot have, an input_required result that asks nothing, a _meta that is not an object
// (null counts as none). The client gets a clear error
// instead of a result its SDK would choke on or, worse, half read.
//
// resultType "task" belongs to the tasks extension (io.modelcontextprotocol/tasks): it is
// relayed for a tools/call whose request declared that extension in its clientCapabilities, as
// the extension lets a server answer only then; any other resultType is refused. The gateway
// cannot tell which extension defines a resultType it does not know, and relays no extension
// that adds result kinds (upstreams.RelayCapabilities), so an unknown one is an invalid result,
// not an extension's.

// resultKind is what a backend's result is, by its resultType.
type resultKind uint8

const (
	kindComplete resultKind = iota
	kindInputRequired
	kindTask
)

// tasksExtension is the extension that defines resultType "task".
const tasksExtension = "io.modelcontextprotocol/tasks"

// resultShape checks a backend's result to x and returns its kind. It reads the result's top
// level once and allocates nothing for a well-formed one.
func resultShape(x *request, result []byte) (resultKind, error) {
	var typ []byte
	var variant string
	inputs, state, badMember, badMeta := false, false, false, false
	err := jsonrpc.Members(result, func(key, val []byte) error {
		switch string(key) {
		case "resultType":
			typ = val
		case "inputRequests":
			inputs = val[0] == '{' && !emptyObject(val)
			badMember = badMember || val[0] != '{'
		case "requestState":
			state = val[0] == '"'
			badMember = badMember || !state
		case "_meta":
			// null is no _meta; anything else but an object is no _meta a client can read, and
			// the gateway would otherwise replace it with its own without a word.
			badMeta = val[0] != '{' && string(val) != "null"
		default:
			if variant == "" {
				variant = shapeVariant(key)
			}
		}
		return nil
	})
	if err != nil {
		return 0, invalidResult("the result is not a JSON object")
	}
	if badMeta {
		return 0, invalidResult("its _meta must be an object")
	}
	if variant != "" {
		return 0, invalidResult("a member spells " + variant + " another way (case or punctuation)")
	}
	switch string(unescaped(typ)) {
	case "", `"complete"`:
		return kindComplete, nil
	case `"input_required"`:
		switch {
		case !mrtrMethods[x.in.req.Method]:
			return 0, invalidResult("only tools/call, prompts/get and resources/read may answer input_required")
		case badMember:
			return 0, invalidResult("inputRequests must be an object and requestState a string")
		case !inputs && !state:
			return 0, invalidResult("an input_required result carries neither inputRequests nor requestState")
		}
		return kindInputRequired, nil
	case `"task"`:
		if x.in.req.Method == "tools/call" && declaresExtension(x.in.meta.ClientCapabilities, tasksExtension) {
			return kindTask, nil
		}
		return 0, invalidResult("a task result answers only a tools/call whose request declared the " + tasksExtension + " extension")
	}
	return 0, invalidResult("its resultType is none the protocol defines nor one of an extension the request declared")
}

// shapeMembers are the members of a result that resultShape reads by their exact names.
var shapeMembers = [...]string{"resultType", "inputRequests", "requestState"}

// shapeVariant returns the member of shapeMembers that key, which is none of them, is another
// spelling of (jsonrpc.FoldEqual: case, '_' and '-', Unicode folding); "" for none. The gateway
// decides on the exact name whether a result is sealed as a round trip or relayed as complete,
// but a client whose decoder folds names (Go's encoding/json, .NET's case-insensitive option)
// reads "ResultType" or "request_state" as that member, usually the last one: a result holding
// such a spelling would be one thing to the gateway and another to that client (a backend's
// requestState that reaches the client unsealed, a task result to a client that never asked
// for one). Interceptors' mutations are refused the same spellings (intercept).
func shapeVariant(key []byte) string {
	for _, m := range shapeMembers {
		if jsonrpc.FoldEqual(key, []byte(m)) {
			return m
		}
	}
	return ""
}

// unescaped is raw, a JSON value, as a client decodes it: a string with escapes is written
// again without them ("\u0074ask" is "task" to every client), anything else is kept. Only that
// rare spelling allocates.
func unescaped(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' || bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw
	}
	out, _ := json.Marshal(s)
	return out
}

// emptyObject reports whether val, a JSON object, has no member.
func emptyObject(val []byte) bool {
	return len(bytes.TrimSpace(val[1:len(val)-1])) == 0
}

// declaresExtension reports whether clientCapabilities (a request's, an object or nil)
// declares the extension name under extensions.
func declaresExtension(caps json.RawMessage, name string) bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if len(caps) == 0 || json.Unmarshal(caps, &c) != nil {
		return false
	}
	v, ok := c.Extensions[name]
	return ok && len(v) > 0 && v[0] == '{'
}

// invalidResult is the error a client gets for a backend's result of a forbidden shape: the
// backend's failure, as for any invalid response, with what was wrong.
func invalidResult(why string) *Error {
	return &Error{Status: http.StatusBadGateway, Outcome: outcomeBadResponse,
		RPC: jsonrpc.NewError(jsonrpc.CodeUpstreamUnavailable, invalidResultPrefix+why)}
}

// invalidResultPrefix begins the message of invalidResult.
const invalidResultPrefix = "Backend sent an invalid result: "
