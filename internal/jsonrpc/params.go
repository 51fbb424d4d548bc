package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Reserved _meta keys (docs/protocol.md §1, quick reference).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaProgressToken      = "progressToken"
	// MetaAuthorizationContextID is where a client echoes the authorizationContextId of an
	// authorization denial on its retry (SEP-2643, a draft). Only read, never refused: a server
	// must process a retry whatever the key holds.
	MetaAuthorizationContextID = "io.modelcontextprotocol/authorization-context-id"
)

// Params holds the members of a request's params that the gateway itself reads. Everything else
// stays in the raw params and is forwarded untouched.
type Params struct {
	Meta           json.RawMessage // the _meta object, nil when absent
	Name           string          // params.name (tools/call, prompts/get)
	HasName        bool            // params.name was present
	Foreign        bool            // a member besides these was present (forwarded as it is; in HasName's word)
	URI            string          // params.uri (resources/read)
	HasURI         bool            // params.uri was present
	Arguments      json.RawMessage // params.arguments, nil when absent
	RequestState   string          // params.requestState (MRTR retry)
	HasState       bool            // params.requestState was present
	InputResponses json.RawMessage // params.inputResponses (MRTR retry), nil when absent
	Cursor         string          // params.cursor (list methods)
	HasCursor      bool            // params.cursor was present ("" is a valid cursor)
	Ref            json.RawMessage // params.ref (completion/complete)
}

// paramsKeys are the members of params the gateway reads, routes on or binds (confirmation
// digests, MRTR state): a member that differs from one of them only in case or punctuation is
// refused, since a case-insensitive decoder behind the gateway would read it as that member.
// argument and context are completion/complete's (CheckCompletion).
var paramsKeys = []string{"_meta", "name", "uri", "arguments", "requestState", "inputResponses", "cursor", "ref",
	"argument", "context"}

// metaKeys are the _meta members the gateway reads.
var metaKeys = []string{MetaProtocolVersion, MetaClientCapabilities, MetaClientInfo, MetaLogLevel,
	MetaProgressToken, "traceparent", "tracestate", "baggage"}

// refKeys are the members of a completion reference the gateway routes on.
var refKeys = []string{"type", "name", "uri"}

// ParseParams reads the members the gateway needs from raw params, which must have passed Decode.
// A member of the wrong JSON type is -32602, and so is a member whose name is a spelling variant
// of one the gateway reads (see FoldKey). nil raw yields empty Params.
func ParseParams(raw json.RawMessage) (*Params, error) {
	p := &Params{}
	if raw == nil {
		return p, nil
	}
	err := Members(raw, func(key, val []byte) error {
		switch string(key) {
		case "_meta":
			return rawObject(val, &p.Meta, "_meta")
		case "name":
			p.HasName = true
			return paramString(val, &p.Name, "name")
		case "uri":
			p.HasURI = true
			return paramString(val, &p.URI, "uri")
		case "arguments":
			if string(val) == "null" {
				// The go-sdk client sends "arguments":null for a call without arguments; the
				// schema makes the member optional, and null reads the same as absent.
				return nil
			}
			return rawObject(val, &p.Arguments, "arguments")
		case "requestState":
			p.HasState = true
			return paramString(val, &p.RequestState, "requestState")
		case "inputResponses":
			return rawObject(val, &p.InputResponses, "inputResponses")
		case "cursor":
			p.HasCursor = true
			return paramString(val, &p.Cursor, "cursor")
		case "ref":
			return rawObject(val, &p.Ref, "ref")
		}
		if k := variantOf(key, paramsKeys); k != "" {
			return caseVariant("", string(key), k)
		}
		p.Foreign = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Meta holds the request _meta members the gateway reads (docs/protocol.md §1).
type Meta struct {
	ProtocolVersion    string          // io.modelcontextprotocol/protocolVersion
	HasVersion         bool            // the version key was present
	Foreign            bool            // a key that is not ReservedMetaKey's was present (in HasVersion's word)
	ClientCapabilities json.RawMessage // io.modelcontextprotocol/clientCapabilities (object)
	ClientInfo         json.RawMessage // io.modelcontextprotocol/clientInfo, nil when absent
	LogLevel           string          // io.modelcontextprotocol/logLevel (deprecated)
	ProgressToken      json.RawMessage // progressToken, nil when absent
	TraceParent        string          // W3C traceparent (SEP-414)
	TraceState         string          // W3C tracestate
	Baggage            string          // W3C baggage
	// AuthorizationContextID is the raw value under MetaAuthorizationContextID, nil when absent;
	// not checked here (any JSON value), since the key is a draft's and never grounds to refuse.
	AuthorizationContextID json.RawMessage
}

// ReservedMetaKey reports whether the _meta key (decoded) is one of a request's that the
// gateway reads and validates itself: the protocol's keys ParseMeta reads, progressToken, and
// trace context's traceparent, tracestate and baggage. Any other key is the client's own, one of
// the protocol's namespace that the gateway does not read included: it reaches the backend as
// the client wrote it.
func ReservedMetaKey(key []byte) bool {
	switch string(key) {
	case MetaProtocolVersion, MetaClientCapabilities, MetaClientInfo, MetaLogLevel, MetaAuthorizationContextID,
		MetaProgressToken, "traceparent", "tracestate", "baggage":
		return true
	}
	return false
}

// ParseMeta reads the gateway-relevant keys of a _meta object. Wrongly typed reserved keys are
// -32602; unknown keys are ignored (and forwarded by the caller).
func ParseMeta(raw json.RawMessage) (*Meta, error) {
	m := &Meta{}
	if raw == nil {
		return m, nil
	}
	err := Members(raw, func(key, val []byte) error {
		switch string(key) {
		case MetaProtocolVersion:
			m.HasVersion = true
			if string(val) == quotedCurrentVersion {
				m.ProtocolVersion = currentVersion // nearly every request: no string to allocate
				return nil
			}
			return paramString(val, &m.ProtocolVersion, MetaProtocolVersion)
		case MetaClientCapabilities:
			return rawObject(val, &m.ClientCapabilities, MetaClientCapabilities)
		case MetaClientInfo:
			return rawObject(val, &m.ClientInfo, MetaClientInfo)
		case MetaLogLevel:
			if err := paramString(val, &m.LogLevel, MetaLogLevel); err != nil {
				return err
			}
			if !LogLevelKnown(m.LogLevel) {
				return invalidParam(MetaLogLevel, "one of "+LogLevelsText())
			}
		case MetaProgressToken:
			if val[0] != '"' && !validID(val) {
				return invalidParam(MetaProgressToken, "a string or an integer")
			}
			m.ProgressToken = val
		case "traceparent":
			return paramString(val, &m.TraceParent, "traceparent")
		case "tracestate":
			return paramString(val, &m.TraceState, "tracestate")
		case "baggage":
			return paramString(val, &m.Baggage, "baggage")
		case MetaAuthorizationContextID:
			m.AuthorizationContextID = val
			return nil
		}
		if k := variantOf(key, metaKeys); k != "" {
			return caseVariant("_meta ", string(key), k)
		}
		if !m.Foreign && !ReservedMetaKey(key) {
			m.Foreign = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Ref is the reference of a completion/complete request: a prompt by name or a resource
// (template) by URI.
type Ref struct {
	Type string // "ref/prompt" or "ref/resource"
	Name string // the prompt name, for ref/prompt
	URI  string // the resource URI or URI template, for ref/resource
}

// ParseRef reads params.ref, which must have passed Decode. Members are matched exactly, and a
// member whose name is a spelling variant of type, name or uri is refused, as in ParseParams.
func ParseRef(raw json.RawMessage) (*Ref, error) {
	ref := &Ref{}
	if raw == nil {
		return ref, nil
	}
	err := Members(raw, func(key, val []byte) error {
		switch string(key) {
		case "type":
			return paramString(val, &ref.Type, "ref.type")
		case "name":
			return paramString(val, &ref.Name, "ref.name")
		case "uri":
			return paramString(val, &ref.URI, "ref.uri")
		}
		if k := variantOf(key, refKeys); k != "" {
			return caseVariant("ref ", string(key), k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ref, nil
}

// CheckCompletion checks what the gateway reads of a completion/complete's params besides its
// ref (ParseRef) to judge which resource each value of a resource template's completion names:
// argument (an object) with its name, and context (an object, or null) with its arguments. A
// member whose name is a spelling variant of one of those is refused, as in ParseParams: a
// case-insensitive decoder behind the gateway would complete another variable, or in another
// context, than the one the gateway judges the values by. params must have passed Decode.
func CheckCompletion(params json.RawMessage) error {
	if params == nil {
		return nil
	}
	return Members(params, func(key, val []byte) error {
		switch string(key) {
		case "argument":
			return checkMembers(val, "argument", "name")
		case "context":
			if string(val) == "null" {
				return nil
			}
			return checkMembers(val, "context", "arguments")
		}
		return nil
	})
}

// checkMembers refuses obj, the params member called name, unless it is an object without a
// spelling variant of the member read.
func checkMembers(obj []byte, name, read string) error {
	if obj[0] != '{' {
		return invalidParam(name, "an object")
	}
	known := []string{read}
	return Members(obj, func(key, _ []byte) error {
		if k := variantOf(key, known); k != "" {
			return caseVariant(name+" ", string(key), k)
		}
		return nil
	})
}

func rawObject(val []byte, dst *json.RawMessage, name string) error {
	if val[0] != '{' {
		return invalidParam(name, "an object")
	}
	*dst = val
	return nil
}

// currentVersion is the protocol version nearly every request names; ParseMeta returns this
// constant for it instead of a fresh string.
const (
	currentVersion       = "2026-07-28"
	quotedCurrentVersion = `"` + currentVersion + `"`
)

func paramString(val []byte, dst *string, name string) error {
	if val[0] != '"' {
		return invalidParam(name, "a string")
	}
	if bytes.IndexByte(val, '\\') < 0 {
		*dst = string(val[1 : len(val)-1])
		return nil
	}
	if err := json.Unmarshal(val, dst); err != nil {
		return invalidParam(name, "a string")
	}
	return nil
}

func invalidParam(name, want string) *Error {
	return NewError(CodeInvalidParams, "Invalid params: "+name+" must be "+want)
}

// LogLevels returns the levels of notifications/message and logging/setLevel, least severe
// first: the eight syslog severities of RFC 5424 as MCP spells them
// (https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging). It is
// the one list of them; an array returned by value, so no caller can change it for another.
func LogLevels() [8]string {
	return [8]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
}

// LogLevelRank is the position of level in LogLevels, and false for anything else (levels are
// case-sensitive: a client that sends "DEBUG" gets invalid params, not a guess).
func LogLevelRank(level string) (int, bool) {
	for i, l := range LogLevels() {
		if l == level {
			return i, true
		}
	}
	return 0, false
}

// LogLevelKnown reports whether level is one of LogLevels. A request's _meta log level that is
// not is refused with -32602, as the specification asks: a level no one knows would otherwise
// reach the backend, and decide nothing about which of its messages the client wanted.
func LogLevelKnown(level string) bool {
	_, ok := LogLevelRank(level)
	return ok
}

// LogLevelsText is LogLevels as an error message names them: "debug, info, …, emergency".
func LogLevelsText() string {
	l := LogLevels()
	return strings.Join(l[:], ", ")
}
