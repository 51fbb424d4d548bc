package authz

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestChallengeHeader(t *testing.T) {
	const md = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
	tests := []struct {
		name string
		c    Challenge
		want string
	}{
		{"401 no token", Challenge{Scopes: []string{"mcp:tools"}, ResourceMetadata: md},
			`Bearer resource_metadata="` + md + `", scope="mcp:tools"`},
		{"401 no scopes", Challenge{ResourceMetadata: md}, `Bearer resource_metadata="` + md + `"`},
		{"401 invalid token", Challenge{Error: ChallengeInvalidToken, Scopes: []string{"a", "b"}, ResourceMetadata: md, Description: "The access token expired"},
			`Bearer resource_metadata="` + md + `", scope="a b", error="invalid_token", error_description="The access token expired"`},
		{"403 insufficient scope", Challenge{Error: ChallengeInsufficientScope, Scopes: []string{"files:read", "files:write"}, ResourceMetadata: md, Description: "Needs files:write"},
			`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="` + md + `", error_description="Needs files:write"`},
		{"quote and backslash escaped", Challenge{ResourceMetadata: `https://x/a"b\c`},
			`Bearer resource_metadata="https://x/a\"b\\c"`},
		{"description limited to RFC 6750 set", Challenge{Error: ChallengeInvalidToken, Description: "say \"hi\"\\ \r\nnow é"},
			`Bearer error="invalid_token", error_description="say 'hi'/ now "`},
		{"control characters dropped", Challenge{ResourceMetadata: "https://x/\r\nSet-Cookie: a"},
			`Bearer resource_metadata="https://x/Set-Cookie: a"`},
		{"empty", Challenge{}, `Bearer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Header(); got != tt.want {
				t.Fatalf("Header() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestServiceChallenges(t *testing.T) {
	s, err := New(Config{
		Issuers:          []IssuerConfig{{Issuer: "https://idp.example"}},
		ResourceMetadata: ResourceMetadataConfig{ScopesSupported: []string{"mcp:tools"}},
	}, Options{ResourceURI: "https://gw.example/public/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	const md = "https://gw.example/.well-known/oauth-protected-resource/public/mcp"
	tests := []struct {
		name string
		c    Challenge
		want string
	}{
		{"no token", only(t, s.Unauthorized(ErrNoToken)), `Bearer resource_metadata="` + md + `", scope="mcp:tools"`},
		{"expired", only(t, s.Unauthorized(invalid(ReasonExpired, "x"))),
			`Bearer resource_metadata="` + md + `", scope="mcp:tools", error="invalid_token", error_description="The access token expired"`},
		{"step-up", s.Forbidden(Decision{Effect: StepUp, RequiredScopes: []string{"a:w", "b"}}),
			`Bearer error="insufficient_scope", scope="a:w b", resource_metadata="` + md + `", error_description="This operation needs the scopes: a:w b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Header(); got != tt.want {
				t.Fatalf("Header() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestMetadataURL(t *testing.T) {
	tests := []struct{ resource, path, root string }{
		{"https://ex.com/public/mcp", "https://ex.com/.well-known/oauth-protected-resource/public/mcp", "https://ex.com/.well-known/oauth-protected-resource"},
		{"https://ex.com/mcp/", "https://ex.com/.well-known/oauth-protected-resource/mcp", "https://ex.com/.well-known/oauth-protected-resource"},
		{"https://ex.com", "https://ex.com/.well-known/oauth-protected-resource", "https://ex.com/.well-known/oauth-protected-resource"},
		{"https://ex.com:8443/", "https://ex.com:8443/.well-known/oauth-protected-resource", "https://ex.com:8443/.well-known/oauth-protected-resource"},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			p, err1 := MetadataURL(tt.resource)
			r, err2 := RootMetadataURL(tt.resource)
			if err := errors.Join(err1, err2); err != nil || p != tt.path || r != tt.root {
				t.Fatalf("got %q, %q, %v", p, r, err)
			}
		})
	}
	for _, bad := range []string{"", "/mcp", "https://ex.com/mcp#frag", "::"} {
		if _, err := MetadataURL(bad); err == nil {
			t.Errorf("MetadataURL(%q) accepted", bad)
		}
	}
}

func TestMetadataDocument(t *testing.T) {
	s, err := New(Config{
		Issuers: []IssuerConfig{{Issuer: "https://idp.example"}, {Issuer: "https://idp2.example"}},
		ResourceMetadata: ResourceMetadataConfig{ScopesSupported: []string{"mcp:tools"}, ResourceName: "Example MCP",
			ResourceDocumentation: "https://docs.example/mcp"},
	}, Options{ResourceURI: "https://gw.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(s.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"resource":"https://gw.example/mcp","authorization_servers":["https://idp.example","https://idp2.example"],` +
		`"scopes_supported":["mcp:tools"],"bearer_methods_supported":["header"],"resource_name":"Example MCP",` +
		`"resource_documentation":"https://docs.example/mcp"}`
	if string(got) != want {
		t.Fatalf("metadata =\n%s\nwant\n%s", got, want)
	}
}

// only is the one challenge of cs.
func only(t *testing.T, cs []Challenge) Challenge {
	t.Helper()
	if len(cs) != 1 {
		t.Fatalf("%d challenges, want 1: %v", len(cs), cs)
	}
	return cs[0]
}
