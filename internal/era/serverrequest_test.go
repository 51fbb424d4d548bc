package era

import (
	"encoding/json"
	"testing"
)

// TestServerRequest checks that a pre-2026 backend's mid-call request becomes the request its
// pre-2026 client gets, with the capability to check, under the same rules as an inputRequests
// entry, and that anything a client may not be asked is refused.
func TestServerRequest(t *testing.T) {
	tests := []struct {
		name, version, method, params string
		wantParams, wantCap           string
	}{
		{"form 2025-11-25", V20251125, MethodElicitationCreate,
			`{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}`,
			`{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}`, CapElicitationForm},
		{"form to 2025-06-18 drops mode", V20250618, MethodElicitationCreate,
			`{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}`,
			`{"message":"Name?","requestedSchema":{"type":"object"}}`, CapElicitationForm},
		{"form without mode", V20251125, MethodElicitationCreate,
			`{"message":"Name?","requestedSchema":{"type":"object"}}`,
			`{"message":"Name?","requestedSchema":{"type":"object"}}`, CapElicitationForm},
		{"url keeps its id", V20251125, MethodElicitationCreate,
			`{"mode":"url","message":"Log in","url":"https://example.com/","elicitationId":"e1"}`,
			`{"mode":"url","message":"Log in","url":"https://example.com/","elicitationId":"e1"}`, CapElicitationURL},
		{"sampling opaque, reserved meta dropped", V20251125, MethodSamplingCreate,
			`{"messages":[{"role":"user","content":{"type":"text","text":"alpha__x"}}],"maxTokens":5,"_meta":{"io.modelcontextprotocol/x":1}}`,
			`{"messages":[{"role":"user","content":{"type":"text","text":"alpha__x"}}],"maxTokens":5}`, CapSampling},
		{"sampling with tools", V20251125, MethodSamplingCreate,
			`{"messages":[],"maxTokens":5,"tools":[{"name":"t"}]}`,
			`{"messages":[],"maxTokens":5,"tools":[{"name":"t"}]}`, CapSamplingTools},
		{"roots without params", V20251125, MethodRootsList, ``, `{}`, CapRoots},
		{"roots with null params", V20250618, MethodRootsList, `null`, `{}`, CapRoots},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ServerRequest(tt.version, "relay", tt.method, json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			if got.Key != "relay" || got.Method != tt.method || string(got.Params) != tt.wantParams || got.Capability != tt.wantCap {
				t.Errorf("got {%s %s %s %s}, want {relay %s %s %s}", got.Key, got.Method, got.Params, got.Capability,
					tt.method, tt.wantParams, tt.wantCap)
			}
		})
	}
	bad := []struct{ name, version, method, params string }{
		{"modern version", "2026-07-28", MethodRootsList, `{}`},
		{"not a client request", V20251125, "tools/call", `{"name":"x"}`},
		{"params not an object", V20251125, MethodElicitationCreate, `[1]`},
		{"elicitation without params", V20251125, MethodElicitationCreate, ``},
		{"unknown mode", V20251125, MethodElicitationCreate, `{"mode":"telepathy","message":"?"}`},
		{"invalid JSON", V20251125, MethodSamplingCreate, `{"messages":`},
		{"url mode to a script", V20251125, MethodElicitationCreate, `{"mode":"url","message":"m","url":"javascript:alert(1)","elicitationId":"e1"}`},
		{"url mode to a file", V20251125, MethodElicitationCreate, `{"mode":"url","message":"m","url":"file:///etc/passwd","elicitationId":"e1"}`},
		{"url mode with a user part", V20251125, MethodElicitationCreate, `{"mode":"url","message":"m","url":"https://idp.example@evil.test/","elicitationId":"e1"}`},
		{"url mode without a url", V20251125, MethodElicitationCreate, `{"mode":"url","message":"m","elicitationId":"e1"}`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := ServerRequest(tt.version, "relay", tt.method, json.RawMessage(tt.params)); err == nil {
				t.Errorf("accepted: %+v", got)
			}
		})
	}
}
