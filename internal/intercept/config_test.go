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
		{Name: "peruser", URL: "https://p.example/mcp", Type: TypeValidation, Rules: toolRule,
			Auth: backend.AuthConfig{Type: backend.AuthUserOAuth, AuthServer: "https://as.example"}},
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
		"interceptors[2].auth.type",
		"interceptors[3].name",
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

// TestDefaults: the limits docs/interceptors.md gives an interceptor left unconfigured: a 2s
// timeout, 64 in flight per replica, an eighth of them (at least one) per caller, 4 MiB sent and
// 8 MiB read; 5m is the longest timeout accepted.
func TestDefaults(t *testing.T) {
	c := Config{Name: "guard", URL: "https://guard.example/mcp", Type: TypeValidation, Rules: toolRule}.WithDefaults()
	if c.Timeout != 2*time.Second || c.MaxConcurrent != 64 || c.MaxConcurrentPerCaller != 8 ||
		c.MaxPayloadBytes != 4<<20 || c.MaxResponseBytes != 8<<20 {
		t.Errorf("defaults %+v", c)
	}
	for n, want := range map[int]int{1: 1, 7: 1, 8: 1, 16: 2, 128: 16} {
		if got := (Config{MaxConcurrent: n}).WithDefaults().MaxConcurrentPerCaller; got != want {
			t.Errorf("maxConcurrent %d: %d per caller, want %d", n, got, want)
		}
	}
	c.Timeout = 5 * time.Minute
	if err := Validate([]Config{c}); err != nil {
		t.Errorf("a 5m timeout: %v", err)
	}
	c.Timeout += time.Second
	if err := Validate([]Config{c}); err == nil || !strings.Contains(err.Error(), "interceptors[0].timeout") {
		t.Errorf("a timeout over 5m: %v", err)
	}
}

// TestEachProblemSaidOnce: a setting the interceptor checks itself and the connection checks
// again (a negative timeout, a negative answer bound) is reported once, with the interceptor's
// own message, which says what is accepted.
func TestEachProblemSaidOnce(t *testing.T) {
	c := Config{Name: "guard", URL: "https://guard.example/mcp", Type: TypeValidation, Rules: toolRule,
		Timeout: -2 * time.Second, ConnectTimeout: -time.Second, MaxResponseBytes: -1}
	seen := map[string]string{}
	for _, e := range configerr.List(Validate([]Config{c})) {
		p, _ := configerr.PathOf(e)
		if first, dup := seen[p]; dup {
			t.Errorf("%s reported twice:\n%s\n%v", p, first, e)
		}
		seen[p] = e.Error()
	}
	for _, want := range []string{"interceptors[0].timeout", "interceptors[0].connectTimeout", "interceptors[0].maxResponseBytes"} {
		if seen[want] == "" {
			t.Errorf("no problem reported at %s; got %v", want, seen)
		}
	}
	if !strings.Contains(seen["interceptors[0].timeout"], "up to 5m0s") {
		t.Errorf("the timeout's problem does not say what is accepted: %s", seen["interceptors[0].timeout"])
	}
}

// TestAnswerBudgetHoldsEightShares: a caller's share of the budget of answers is an eighth of
// it, and holds one answer of the largest maxResponseBytes while it is read (three times it);
// the default budget grows to hold eight such shares, and a configured one that cannot is
// refused, so that seven callers holding their shares always leave room for another's.
func TestAnswerBudgetHoldsEightShares(t *testing.T) {
	small := []Config{{MaxResponseBytes: 1 << 20}}
	dflt := []Config{{}, {MaxResponseBytes: 1 << 20}}
	for _, c := range []struct {
		limit        int64
		cs           []Config
		total, share int64
		valid        bool
	}{
		{0, small, 64 << 20, 8 << 20, true},
		{0, dflt, 192 << 20, 24 << 20, true},
		{24 << 20, small, 24 << 20, 3 << 20, true},
		{256 << 20, dflt, 256 << 20, 32 << 20, true},
		{24<<20 - 1, small, 24<<20 - 1, 3 << 20, false},
		{64 << 20, dflt, 64 << 20, 24 << 20, false},
		{-1, small, 64 << 20, 8 << 20, false},
	} {
		total, share := answerBudget(c.limit, c.cs)
		if total != c.total || share != c.share {
			t.Errorf("budget %d: total %d, share %d; want %d, %d", c.limit, total, share, c.total, c.share)
		}
		if c.valid && total < answerShareDivisor*share {
			t.Errorf("budget %d: %d callers' shares of %d fill %d", c.limit, total/share, share, total)
		}
		if err := ValidateAnswerBudget(c.limit, c.cs); (err == nil) != c.valid {
			t.Errorf("budget %d: %v, want valid %v", c.limit, err, c.valid)
		}
	}
}

// TestInterceptorHeadersWaitItsTimeout: the wait for an interceptor's answer headers is its
// configured timeout, not a backend's 30 s header bound: an interceptor answers when it has
// decided, so a timeout of up to MaxTimeout must not fail at 30 s for want of headers.
func TestInterceptorHeadersWaitItsTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{0, 90 * time.Second, MaxTimeout} {
		c := validator("guard", "http://127.0.0.1:1/mcp")
		c.Timeout = timeout
		want := c.WithDefaults().Timeout
		if got := c.backendConfig().ResponseHeaderTimeout; got != want {
			t.Errorf("timeout %s: the answer's headers are waited for %s, want %s", timeout, got, want)
		}
	}
}
