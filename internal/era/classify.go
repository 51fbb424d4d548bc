package era

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Verdict is what one answer to a modern server/discover request says about the peer's era.
type Verdict struct {
	Era Era
	// Named: the answer names the versions it supports (a DiscoverResult with
	// supportedVersions, or -32022 with data.supported); only such an answer changes an era
	// already learnt.
	Named bool
	// Candidate: a bare 400, 404 or 405, as a pre-2026 server answers, but also a proxy or a
	// backend in trouble; pre-2026 only once an initialize handshake confirms it.
	Candidate bool
}

// Classify tells the era from the answer to server/discover: status is the HTTP status, m the
// JSON-RPC response when one could be read (err says why not).
//
// A result (a DiscoverResult naming 2026-07-28, or anything but a DiscoverResult of pre-2026
// versions), or an error code from the range the 2026 revision reserves (-32020..-32099),
// means modern; a result whose supportedVersions lacks 2026-07-28, or a -32022 whose
// data.supported lacks it, means legacy; a 400, 404 or 405 without a modern body makes legacy a
// candidate. Anything else says nothing.
func Classify(status int, m *jsonrpc.Message, err error) Verdict {
	switch {
	case err != nil && LegacyStatus(status):
		return Verdict{Candidate: true}
	case err != nil:
		return Verdict{}
	case m.Error == nil && hasMember(m.Result, "supportedVersions"):
		// e.g. the go-sdk's stateful server: a DiscoverResult of legacy versions
		if supportsModern(m.Result, "supportedVersions") {
			return Verdict{Era: Modern, Named: true}
		}
		return Verdict{Era: Legacy, Named: true}
	case m.Error == nil:
		return Verdict{Era: Modern} // a modern request answered without a session is not a legacy server
	case m.Error.Code == jsonrpc.CodeUnsupportedProtocolVersion && hasMember(m.Error.Data, "supported"):
		if supportsModern(m.Error.Data, "supported") {
			return Verdict{Era: Modern}
		}
		return Verdict{Era: Legacy, Named: true}
	case m.Error.Code <= -32020 && m.Error.Code >= -32099:
		return Verdict{Era: Modern}
	case LegacyStatus(status):
		return Verdict{Candidate: true} // e.g. a TypeScript SDK server: 400 "Server not initialized", -32000
	case status/100 == 2:
		return Verdict{Era: Modern}
	}
	return Verdict{}
}

// Named is the era an answer to server/discover names itself (see Verdict.Named), else
// Unknown.
func Named(m *jsonrpc.Message) Era {
	if v := Classify(http.StatusOK, m, nil); v.Named {
		return v.Era
	}
	return Unknown
}

// LegacyStatus reports the statuses a pre-2026 server gives a request it cannot place: 400
// (no session), 404 (unknown method or path), 405.
func LegacyStatus(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusMethodNotAllowed
}

// hasMember reports whether the JSON object obj has the member key.
func hasMember(obj json.RawMessage, key string) bool {
	found := false
	if len(obj) > 0 && obj[0] == '{' {
		_ = jsonrpc.Members(obj, func(k, _ []byte) error {
			found = found || string(k) == key
			return nil
		})
	}
	return found
}

// supportsModern reports whether the string array member key of obj names 2026-07-28.
func supportsModern(obj json.RawMessage, key string) bool {
	if len(obj) == 0 || obj[0] != '{' {
		return false
	}
	var versions []string
	_ = jsonrpc.Members(obj, func(k, v []byte) error {
		if string(k) == key {
			_ = json.Unmarshal(v, &versions)
		}
		return nil
	})
	return slices.Contains(versions, V20260728)
}
