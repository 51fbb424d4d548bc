package authz

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestRulesBoundToIssuer: with two real issuers, a rule trusts only the issuers it names. The
// partner issuer can put any claim it likes in its tokens ("groups": ["admins"] here); that
// satisfies no rule written for the corporate issuer. A deny rule without issuers applies to
// both, and "*" is every configured issuer.
func TestRulesBoundToIssuer(t *testing.T) {
	clk := newClock()
	corp, partner := startIssuer(t, clk), startIssuer(t, clk)
	cfg := Config{
		Issuers: []IssuerConfig{{Issuer: corp.URL()}, {Issuer: partner.URL()}},
		Policy: PolicyConfig{Rules: []RuleConfig{
			{ID: "no-contractors", Upstream: "*", Effect: EffectDeny, Claims: map[string][]string{"groups": {"contractors"}}},
			{ID: "corp-admins", Upstream: "github", Tools: []string{"*"}, Claims: map[string][]string{"groups": {"admins"}}, Issuers: []string{corp.URL()}},
			{ID: "partner-read", Upstream: "github", Tools: []string{"get_*"}, Issuers: []string{partner.URL()}},
			{ID: "docs", Upstream: "docs", Issuers: []string{"*"}},
			{ID: "corp-deny-beta", Upstream: "docs", Tools: []string{"beta_*"}, Effect: EffectDeny, Issuers: []string{partner.URL()}},
		}},
	}
	s, err := New(cfg, Options{ResourceURI: testResource, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	token := func(iss *devissuer.Issuer, groups ...string) string {
		return mint(t, iss, devissuer.Claims{"sub": "same-subject", "groups": groups})
	}
	tests := []struct {
		name, token, upstream, tool string
		want                        Effect
		rule                        string
	}{
		{"corp admin deletes", token(corp, "admins"), "github", "delete_repo", Allow, "corp-admins"},
		{"partner claiming admins", token(partner, "admins"), "github", "delete_repo", Hidden, ""},
		{"partner reads", token(partner, "admins"), "github", "get_repo", Allow, "partner-read"},
		{"corp without admins", token(corp), "github", "get_repo", Hidden, ""},
		{"docs for corp", token(corp), "docs", "search", Allow, "docs"},
		{"docs for partner", token(partner), "docs", "search", Allow, "docs"},
		{"contractor of corp", token(corp, "admins", "contractors"), "github", "delete_repo", Hidden, "no-contractors"},
		{"contractor of partner", token(partner, "contractors"), "docs", "search", Hidden, "no-contractors"},
		{"deny bound to partner", token(partner), "docs", "beta_search", Hidden, "corp-deny-beta"},
		{"deny bound to partner, corp caller", token(corp), "docs", "beta_search", Allow, "docs"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := s.Authenticate(ctx, tt.token)
			if err != nil {
				t.Fatal(err)
			}
			d := s.Decide(ctx, p, KindTool, tt.upstream, tt.tool)
			if d.Effect != tt.want || d.RuleID != tt.rule {
				t.Fatalf("Decide = %s by %q, want %s by %q", d.Effect, d.RuleID, tt.want, tt.rule)
			}
			if s.Visible(p, KindTool, tt.upstream, tt.tool) != (tt.want == Allow) {
				t.Fatal("Visible disagrees with Decide")
			}
		})
	}
	// The explainer says why: the rule does not trust the partner.
	ex, err := s.Explain(ctx, ExplainRequest{Token: token(partner, "admins"), Kind: KindTool, Upstream: "github", Name: "delete_repo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ex.Rules {
		if r.RuleID == "corp-admins" && (r.IssuerMatched || !r.ClaimsMatched || !r.TargetMatched) {
			t.Fatalf("trace of corp-admins for the partner = %+v, want target and claims matched, issuer not", r)
		}
	}

	// Unbound allow rules with two issuers are refused at configuration time.
	cfg.Policy.Rules = append(cfg.Policy.Rules, RuleConfig{ID: "unbound", Upstream: "github", Tools: []string{"list_*"}})
	if _, err := New(cfg, Options{ResourceURI: testResource}); err == nil || !strings.Contains(err.Error(), `policy.rules[5].issuers: rule "unbound": required: with 2 issuers configured`) {
		t.Fatalf("unbound allow rule with two issuers: %v", err)
	}
}

// TestPartnerCannotNameAnotherIssuer: the partner issuer signs whatever claims it likes, also
// claims named twice, exactly or under the case folding a Go struct decoder applies. A token
// signed by the partner that also says "iss": corp was verified with the partner's keys yet
// read as corp's caller, with corp's rules and corp's users' state; one whose "aud" names
// another resource passed with a folded "AUD". Each is refused as malformed, whichever spelling
// comes last, before its signature is checked.
func TestPartnerCannotNameAnotherIssuer(t *testing.T) {
	clk := newClock()
	corp, partner := startIssuer(t, clk), startIssuer(t, clk)
	s, err := New(Config{
		Issuers: []IssuerConfig{{Issuer: corp.URL()}, {Issuer: partner.URL()}},
		Policy: PolicyConfig{Rules: []RuleConfig{
			{ID: "corp-only", Upstream: "github", Issuers: []string{corp.URL()}},
		}},
	}, Options{ResourceURI: testResource, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	exp := clk.Now().Add(time.Hour).Unix()
	claims := func(members string) []byte {
		return fmt.Appendf(nil, `{"sub":"alice","exp":%d,%s}`, exp, members)
	}
	iss := func(first, second, name string) []byte {
		return claims(fmt.Sprintf(`"aud":%q,"iss":%q,%q:%q`, testResource, first, name, second))
	}
	p, c := partner.URL(), corp.URL()
	tests := map[string][]byte{
		"iss twice, partner last":      iss(c, p, "iss"),
		"iss twice, corp last":         iss(p, c, "iss"),
		"ISS after iss":                iss(c, p, "ISS"),
		"Iss after iss":                iss(c, p, "Iss"),
		"long s after iss":             iss(c, p, "i\u017fs"),
		"ISS alone":                    claims(fmt.Sprintf(`"aud":%q,"ISS":%q`, testResource, p)),
		"AUD names this resource":      claims(fmt.Sprintf(`"iss":%q,"aud":"https://other.example/mcp","AUD":%q`, p, testResource)),
		"EXP beside exp":               claims(fmt.Sprintf(`"iss":%q,"aud":%q,"EXP":%d`, p, testResource, exp+100)),
		"SUB beside sub":               claims(fmt.Sprintf(`"iss":%q,"aud":%q,"SUB":"bob"`, p, testResource)),
		"scope twice under folding":    claims(fmt.Sprintf(`"iss":%q,"aud":%q,"scope":"read","SCOPE":"admin"`, p, testResource)),
		"nested member named twice":    claims(fmt.Sprintf(`"iss":%q,"aud":%q,"cnf":{"jkt":"a","jkt":"b"}`, p, testResource)),
		"Kelvin sign in a custom name": claims(fmt.Sprintf(`"iss":%q,"aud":%q,"kid_x":1,"\u212aid_x":2`, p, testResource)),
	}
	ctx := context.Background()
	for name, payload := range tests {
		t.Run(name, func(t *testing.T) {
			tok, err := partner.MintPayload(payload)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := s.Authenticate(ctx, tok)
			if !errors.Is(err, ErrInvalidToken) || Reason(err) != ReasonMalformed {
				issuer := ""
				if pr != nil {
					issuer = pr.Issuer
				}
				t.Fatalf("Authenticate = %v (issuer %q), want malformed", err, issuer)
			}
		})
	}
	// The same claims spelt once each are the partner's caller, whom corp's rule does not cover;
	// names a struct decoder keeps apart (Keycloak's "clientId" beside "client_id") are fine.
	tok, err := partner.MintPayload(claims(fmt.Sprintf(`"aud":%q,"iss":%q,"clientId":"x","client_id":"x","client-id":"x"`, testResource, p)))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Authenticate(ctx, tok)
	if err != nil || pr.Issuer != p {
		t.Fatalf("Authenticate = %v, %v; want the partner's caller", pr, err)
	}
	if d := s.Decide(ctx, pr, KindTool, "github", "delete_repo"); d.Effect != Hidden {
		t.Fatalf("Decide = %s by %q, want hidden", d.Effect, d.RuleID)
	}
}

// TestHeaderNamedTwiceRefused: the header is held to the same rule as the claims, since peek
// reads its alg through a folding decoder and go-jose through a case-sensitive one.
func TestHeaderNamedTwiceRefused(t *testing.T) {
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"https://issuer.example","sub":"a"}`))
	for _, hdr := range []string{
		`{"alg":"RS256","alg":"none"}`,
		`{"alg":"RS256","ALG":"ES256"}`,
		`{"ALG":"RS256"}`,
		`{"alg":"RS256","kid":"a","KID":"b"}`,
	} {
		tok := base64.RawURLEncoding.EncodeToString([]byte(hdr)) + "." + payload + ".c2ln"
		if _, err := peek(tok); Reason(err) != ReasonMalformed {
			t.Errorf("peek(header %s) = %v, want malformed", hdr, err)
		}
	}
}
