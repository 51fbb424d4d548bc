package intercept

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// TestValidateReportsEveryProblem: Validate reports each problem of a list of interceptors at
// once, by its key path, and never quotes a header value or a client secret.
func TestValidateReportsEveryProblem(t *testing.T) {
	good := Config{Name: "guard", URL: "https://guard.example/mcp", Type: TypeValidation, Rules: toolRule}
	if err := Validate([]Config{good}); err != nil {
		t.Fatalf("a valid interceptor: %v", err)
	}
	bad := []Config{
		{Name: "Bad Name", URL: "ftp://x", Type: "observability", Mode: "enforce", Timeout: time.Hour,
			MaxConcurrent: -1, MaxPayloadBytes: -1, MaxResponseBytes: -1, Claims: []string{"sub", "sub", ""},
			Headers: map[string]string{"Authorization": "Bearer hook-secret-value"},
			Rules:   []RuleConfig{{ID: "r"}, {ID: "r", Tools: []string{"*"}, Phases: []string{"both"}}}},
		{Name: "guard", URL: "https://a.example/mcp", Type: TypeMutation, Webhook: true, Protocol: "2026-07-28",
			MaxConcurrent: 2, MaxConcurrentPerCaller: 3,
			Auth: backend.AuthConfig{Type: backend.AuthTokenExchange, TokenURL: "https://idp.example/token", ClientID: "gw",
				ClientSecret: "client-secret-value"}},
		good,
	}
	err := Validate(bad)
	var paths []string
	for _, e := range configerr.List(err) {
		var ce *configerr.Error
		if !errors.As(e, &ce) {
			t.Fatalf("not a configuration error: %v", e)
		}
		paths = append(paths, ce.Path)
	}
	for _, want := range []string{
		"interceptors[0].name", "interceptors[0].url", "interceptors[0].type", "interceptors[0].mode",
		"interceptors[0].timeout", "interceptors[0].maxConcurrent", "interceptors[0].maxPayloadBytes",
		"interceptors[0].maxResponseBytes", "interceptors[0].claims[1]", "interceptors[0].claims[2]",
		"interceptors[0].rules[0]", "interceptors[0].rules[1].phases[0]", "interceptors[0].rules[1].id",
		"interceptors[1].protocol", "interceptors[1].auth.type", "interceptors[1].rules",
		"interceptors[1].maxConcurrentPerCaller",
		"interceptors[2].name",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("no problem reported at %s; got %v", want, paths)
		}
	}
	for _, secret := range []string{"hook-secret-value", "client-secret-value"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the errors quote a secret: %v", err)
		}
	}
}

// TestMaxClaims: more than MaxClaims claim names are refused.
func TestMaxClaims(t *testing.T) {
	c := Config{Name: "guard", URL: "https://guard.example/mcp", Type: TypeValidation, Rules: toolRule}
	for i := range MaxClaims + 1 {
		c.Claims = append(c.Claims, "c"+string(rune('a'+i%26))+strings.Repeat("x", i/26))
	}
	if err := Validate([]Config{c}); err == nil || !strings.Contains(err.Error(), "at most 32") {
		t.Fatalf("%d claims: %v", len(c.Claims), err)
	}
}
