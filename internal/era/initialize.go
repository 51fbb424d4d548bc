package era

import (
	"encoding/json"
	"slices"
)

// IsLegacyVersion reports whether v is one of the pre-2026 revisions the gateway speaks. An
// initialize answered with any other version ends the attempt: the client side of the
// handshake must support the version the server chose
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation).
func IsLegacyVersion(v string) bool {
	vs := LegacyVersions()
	return slices.Contains(vs[:], v)
}

// InitializeParams returns the params of an initialize request that offers version and
// declares the client capabilities caps (a JSON object) and clientInfo.
func InitializeParams(version string, caps, clientInfo json.RawMessage) (json.RawMessage, error) {
	return json.Marshal(struct {
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
		ProtocolVersion string          `json:"protocolVersion"`
	}{caps, clientInfo, version})
}
