package authz

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// holder is a client's DPoP key: it signs proofs with go-jose, the same library the gateway
// verifies with; the gateway's tests prove the same paths with an independent implementation.
type holder struct {
	key *ecdsa.PrivateKey
	jkt string
}

func newHolder(t testing.TB) holder {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jkt, err := dpop.Thumbprint(&jose.JSONWebKey{Key: k.Public()})
	if err != nil {
		t.Fatal(err)
	}
	return holder{key: k, jkt: jkt}
}

func (h holder) proof(t testing.TB, clk *mcptest.Clock, token string, extra map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType(dpop.ProofType)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: h.key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]any{"jti": rand.Text(), "htm": "POST", "htu": testResource, "iat": clk.Now().Unix(), "ath": dpop.TokenHash(token)}
	for k, v := range extra {
		c[k] = v
	}
	b, _ := json.Marshal(c)
	jws, err := sig.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type dpopFixture struct {
	clk   *mcptest.Clock
	iss   *devissuer.Issuer
	svc   *Service
	store *store.Memory
}

func newDPoPFixture(t testing.TB, mutate func(*Config)) *dpopFixture {
	t.Helper()
	return newDPoPFixtureBegan(t, mutate, nil)
}

// newDPoPFixtureBegan is newDPoPFixture with DPoPOptions.MemoryBegan.
func newDPoPFixtureBegan(t testing.TB, mutate func(*Config), began func(context.Context) (time.Time, error)) *dpopFixture {
	t.Helper()
	return newDPoPFixtureReplay(t, mutate, began, false)
}

// sinceReplay is a replay store that reads when its memory began with each record
// (ReplaySince), as the gateway's store does in one round trip.
type sinceReplay struct {
	*store.Memory
	began func(context.Context) (time.Time, error)
}

func (r sinceReplay) FirstUseSince(ctx context.Context, owner, id string, ttl time.Duration, b store.ReplayBudget) (store.Use, time.Time, error) {
	u, err := r.FirstUse(ctx, owner, id, ttl, b)
	if err != nil || u != store.UseFirst {
		return u, time.Time{}, err
	}
	t, err := r.began(ctx)
	return u, t, err
}

// newDPoPFixtureReplay is newDPoPFixtureBegan with, when since, a replay store that says when
// its memory began itself (ReplaySince): MemoryBegan must then not be asked.
func newDPoPFixtureReplay(t testing.TB, mutate func(*Config), began func(context.Context) (time.Time, error), since bool) *dpopFixture {
	t.Helper()
	f := &dpopFixture{clk: newClock()}
	f.iss = startIssuer(t, f.clk)
	var err error
	if f.store, err = store.NewMemory(store.MemoryOptions{Now: f.clk.Now}); err != nil {
		t.Fatal(err)
	}
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "k", Secret: []byte(strings.Repeat("s", 32))}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Issuers: []IssuerConfig{{Issuer: f.iss.URL()}}, DPoP: DPoPConfig{Mode: DPoPAllowed},
		ResourceMetadata: ResourceMetadataConfig{ScopesSupported: []string{"tools:use"}}}
	if mutate != nil {
		mutate(&cfg)
	}
	opts := DPoPOptions{Replay: f.store, Keys: ring, MemoryBegan: began}
	if since && began != nil {
		opts.Replay = sinceReplay{Memory: f.store, began: began}
		opts.MemoryBegan = func(context.Context) (time.Time, error) {
			t.Error("MemoryBegan asked beside a ReplaySince store: a second round trip")
			return time.Time{}, nil
		}
	}
	f.svc, err = New(cfg, Options{ResourceURI: testResource, Now: f.clk.Now, DPoP: opts})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestDPoPMemoryBegan: a proof issued before the replay store's memory began is refused like a
// replay (it may have been used in the memory the store lost), one issued in that second or
// later is accepted, and a store that cannot say when its memory began fails closed: asked
// through MemoryBegan, or read by the replay store with the record (ReplaySince).
func TestDPoPMemoryBegan(t *testing.T) {
	t.Run("MemoryBegan", func(t *testing.T) { checkDPoPMemoryBegan(t, false) })
	t.Run("ReplaySince", func(t *testing.T) { checkDPoPMemoryBegan(t, true) })
}

func checkDPoPMemoryBegan(t *testing.T, since bool) {
	var began time.Time
	var beganErr error
	f := newDPoPFixtureReplay(t, nil, func(context.Context) (time.Time, error) { return began, beganErr }, since)
	h := newHolder(t)
	tok := f.bound(t, h.jkt)
	began = f.clk.Now().Truncate(time.Second).Add(500 * time.Millisecond) // within the proofs' second (iat)
	if _, _, err := f.present(tok, h.proof(t, f.clk, tok, nil)); err != nil {
		t.Fatalf("a proof of the second the memory began: %v", err)
	}
	began = f.clk.Now().Truncate(time.Second).Add(time.Second)
	if _, _, err := f.present(tok, h.proof(t, f.clk, tok, nil)); !errors.Is(err, ErrInvalidToken) || Reason(err) != ReasonDPoPReplay {
		t.Fatalf("a proof older than the memory: %v (reason %q), want a replay refusal", err, Reason(err))
	}
	began, beganErr = time.Time{}, errors.New("store down")
	if _, _, err := f.present(tok, h.proof(t, f.clk, tok, nil)); !errors.Is(err, ErrReplayUnavailable) {
		t.Fatalf("memory's beginning unknown: %v, want ErrReplayUnavailable (fail closed)", err)
	}
}

func (f *dpopFixture) bound(t testing.TB, jkt string) string {
	t.Helper()
	return mint(t, f.iss, devissuer.Claims{"sub": "alice", "cnf": map[string]any{"jkt": jkt}})
}

func (f *dpopFixture) present(token string, proofs ...string) (*Principal, string, error) {
	return f.svc.AuthenticateDPoP(context.Background(), DPoPRequest{Token: token, Proofs: proofs, Method: "POST", URL: testResource})
}

// TestAuthenticateDPoP: a bound token with its proof is accepted once; each way of presenting a
// token against its binding, a replay, a proof over budget and a replay store that is down are
// refused with the right error and reason.
func TestAuthenticateDPoP(t *testing.T) {
	f := newDPoPFixture(t, func(c *Config) { c.DPoP.MaxProofsPerCaller = 3 })
	h, other := newHolder(t), newHolder(t)
	tok := f.bound(t, h.jkt)
	bearer := mint(t, f.iss, devissuer.Claims{"sub": "bob"})
	good := h.proof(t, f.clk, tok, nil)
	p, _, err := f.present(tok, good)
	if err != nil || p.Subject != "alice" || p.JKT != h.jkt {
		t.Fatalf("valid proof: %v %+v", err, p)
	}
	expired := mint(t, f.iss, devissuer.Claims{"sub": "alice", "cnf": map[string]any{"jkt": h.jkt}, "exp": f.clk.Now().Add(-time.Hour).Unix()})
	cases := []struct {
		name, reason string
		run          func() error
		is           error
	}{
		{"replay", ReasonDPoPReplay, func() error { _, _, err := f.present(tok, good); return err }, ErrInvalidToken},
		{"two proofs", ReasonDPoPProof, func() error {
			_, _, err := f.present(tok, h.proof(t, f.clk, tok, nil), h.proof(t, f.clk, tok, nil))
			return err
		}, ErrInvalidToken},
		{"no proof", ReasonDPoPProof, func() error { _, _, err := f.present(tok); return err }, ErrInvalidToken},
		{"bearer token with a proof", ReasonDPoPBinding, func() error { _, _, err := f.present(bearer, h.proof(t, f.clk, bearer, nil)); return err }, ErrInvalidToken},
		{"ath of another token", ReasonDPoPProof, func() error { _, _, err := f.present(tok, h.proof(t, f.clk, bearer, nil)); return err }, ErrInvalidToken},
		{"token bound to another key", ReasonDPoPBinding, func() error { _, _, err := f.present(tok, other.proof(t, f.clk, tok, nil)); return err }, ErrInvalidToken},
		{"expired token", ReasonExpired, func() error { _, _, err := f.present(expired, h.proof(t, f.clk, expired, nil)); return err }, ErrInvalidToken},
		{"wrong htm", ReasonDPoPProof, func() error {
			_, _, err := f.present(tok, h.proof(t, f.clk, tok, map[string]any{"htm": "GET"}))
			return err
		}, ErrInvalidToken},
		{"bound token as Bearer", ReasonDPoPBinding, func() error { _, err := f.svc.AuthenticateBearer(context.Background(), tok); return err }, ErrInvalidToken},
		{"cnf not an object", ReasonClaims, func() error {
			_, err := f.svc.AuthenticateBearer(context.Background(), mint(t, f.iss, devissuer.Claims{"cnf": "x"}))
			return err
		}, ErrInvalidToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if !errors.Is(err, tc.is) || Reason(err) != tc.reason {
				t.Fatalf("err %v (reason %q), want %v with reason %s", err, Reason(err), tc.is, tc.reason)
			}
			cs := f.svc.Unauthorized(err)
			if tc.reason == ReasonClaims {
				// A bad bearer token: Bearer invalid_token, then the DPoP algorithms.
				if len(cs) != 2 || cs[0].Scheme != "" || cs[0].Error != ChallengeInvalidToken || cs[1].Scheme != dpop.Scheme {
					t.Errorf("challenges %+v", cs)
				}
			} else if len(cs) != 1 || cs[0].Scheme != dpop.Scheme {
				t.Errorf("challenges %+v, want one DPoP challenge", cs)
			}
		})
	}
	if _, err := f.svc.AuthenticateBearer(context.Background(), bearer); err != nil {
		t.Errorf("a bearer token as Bearer with DPoP allowed: %v", err)
	}
	// Two more proofs fill alice's budget of three (one was recorded above).
	for i := range 3 {
		_, _, err := f.present(tok, h.proof(t, f.clk, tok, nil))
		if want := error(nil); i == 2 {
			want = ErrProofBudget
			if !errors.Is(err, want) {
				t.Fatalf("proof %d: %v, want ErrProofBudget", i, err)
			}
		} else if err != nil {
			t.Fatalf("proof %d: %v", i, err)
		}
	}
	_ = f.store.Close()
	if _, _, err := f.present(tok, h.proof(t, f.clk, tok, nil)); !errors.Is(err, ErrReplayUnavailable) {
		t.Errorf("store down: %v, want ErrReplayUnavailable (fail closed)", err)
	}
}

// TestDPoPProofHTUQueryIgnored: a proof whose htu names the endpoint with a query or fragment
// is accepted with its bound token from a real issuer (RFC 9449 §4.3 step 9 ignores both), once,
// and one whose htu differs before the query is still refused.
func TestDPoPProofHTUQueryIgnored(t *testing.T) {
	f := newDPoPFixture(t, nil)
	h := newHolder(t)
	tok := f.bound(t, h.jkt)
	for _, htu := range []string{testResource + "?session=1", testResource + "#top", testResource + "?a=1#top"} {
		proof := h.proof(t, f.clk, tok, map[string]any{"htu": htu})
		if p, _, err := f.present(tok, proof); err != nil || p.JKT != h.jkt {
			t.Fatalf("htu %q: %v, want accepted", htu, err)
		}
		if _, _, err := f.present(tok, proof); Reason(err) != ReasonDPoPReplay {
			t.Fatalf("htu %q a second time: %v, want a replay", htu, err)
		}
	}
	for _, htu := range []string{testResource + "/other?x=1", "https://other.example.test/mcp?" + testResource} {
		_, _, err := f.present(tok, h.proof(t, f.clk, tok, map[string]any{"htu": htu}))
		if !errors.Is(err, ErrInvalidToken) || Reason(err) != ReasonDPoPProof {
			t.Fatalf("htu %q: %v (reason %q), want refused as %s", htu, err, Reason(err), ReasonDPoPProof)
		}
	}
}

// TestDPoPModes: per issuer, off refuses DPoP and bound tokens, required refuses bearer tokens;
// the challenges and the metadata say what is accepted.
func TestDPoPModes(t *testing.T) {
	h := newHolder(t)
	t.Run("off", func(t *testing.T) {
		f := newDPoPFixture(t, func(c *Config) { c.DPoP.Mode = DPoPOff })
		tok := f.bound(t, h.jkt)
		// A scheme the gateway does not take: no bearer token, a challenge without an error
		// code (RFC 6750 §3.1).
		_, _, err := f.present(tok, h.proof(t, f.clk, tok, nil))
		if Reason(err) != ReasonNoToken {
			t.Errorf("DPoP scheme with DPoP off: %v", err)
		}
		if got := only(t, f.svc.Unauthorized(err)).Header(); !strings.HasPrefix(got, "Bearer ") || strings.Contains(got, "error=") {
			t.Errorf("challenge to the DPoP scheme with DPoP off: %s", got)
		}
		_, err = f.svc.AuthenticateBearer(context.Background(), tok)
		if Reason(err) != ReasonDPoPBinding {
			t.Errorf("bound token as Bearer with DPoP off: %v", err)
		}
		if got := only(t, f.svc.Unauthorized(err)).Header(); !strings.HasPrefix(got, "Bearer ") || !strings.Contains(got, `error="invalid_token"`) {
			t.Errorf("challenge %s", got)
		}
		if md := f.svc.Metadata(); md.DPoPSigningAlgValuesSupported != nil || md.DPoPBoundAccessTokensRequired {
			t.Errorf("metadata with DPoP off: %+v", md)
		}
	})
	t.Run("required", func(t *testing.T) {
		f := newDPoPFixture(t, func(c *Config) {
			c.DPoP.Algorithms = []string{"ES256", "PS256"}
			c.Issuers[0].DPoP = DPoPRequired
		})
		_, err := f.svc.AuthenticateBearer(context.Background(), mint(t, f.iss, devissuer.Claims{"sub": "bob"}))
		if Reason(err) != ReasonDPoPBinding {
			t.Fatalf("bearer token with DPoP required: %v", err)
		}
		want := `DPoP error="invalid_token", error_description="This resource requires a DPoP-bound access token", algs="ES256 PS256", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="tools:use"`
		if got := only(t, f.svc.Unauthorized(err)).Header(); got != want {
			t.Errorf("challenge\n%s\nwant\n%s", got, want)
		}
		want = `DPoP algs="ES256 PS256", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="tools:use"`
		if got := only(t, f.svc.Unauthorized(ErrNoToken)).Header(); got != want {
			t.Errorf("no-token challenge\n%s\nwant\n%s", got, want)
		}
		if md := f.svc.Metadata(); strings.Join(md.DPoPSigningAlgValuesSupported, " ") != "ES256 PS256" || !md.DPoPBoundAccessTokensRequired {
			t.Errorf("metadata %+v", md)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		f := newDPoPFixture(t, nil)
		cs := f.svc.Unauthorized(ErrNoToken)
		if len(cs) != 2 || !strings.HasPrefix(cs[0].Header(), "Bearer resource_metadata=") || !strings.HasPrefix(cs[1].Header(), "DPoP algs=") {
			t.Errorf("no-token challenges %v: want Bearer first (clients read resource_metadata there), then DPoP", cs)
		}
		if md := f.svc.Metadata(); len(md.DPoPSigningAlgValuesSupported) == 0 || md.DPoPBoundAccessTokensRequired {
			t.Errorf("metadata %+v", md)
		}
	})
	t.Run("required by a rule", func(t *testing.T) {
		f := newDPoPFixture(t, func(c *Config) {
			c.Policy.Rules = []RuleConfig{{ID: "deploy", Tools: []string{"deploy"}, DPoP: DPoPRequired}}
		})
		if !f.svc.Metadata().DPoPBoundAccessTokensRequired {
			t.Error("a rule requires DPoP but the metadata does not say so")
		}
		d := f.svc.Decide(context.Background(), &Principal{Subject: "a", Issuer: f.iss.URL()}, KindTool, "x", "deploy")
		if d.Effect != Allow || !d.DPoPRequired {
			t.Errorf("decision %+v", d)
		}
	})
}

// TestDPoPNonce: with nonces required a proof without one is use_dpop_nonce with a fresh nonce,
// which a retry carries; a forged one is refused the same way.
func TestDPoPNonce(t *testing.T) {
	f := newDPoPFixture(t, func(c *Config) { c.DPoP.Nonce = DPoPNonceConfig{Required: true, Lifetime: time.Minute} })
	h := newHolder(t)
	tok := f.bound(t, h.jkt)
	_, _, err := f.present(tok, h.proof(t, f.clk, tok, nil))
	nonce := DPoPNonce(err)
	if Reason(err) != ReasonDPoPNonce || nonce == "" {
		t.Fatalf("no nonce: %v, nonce %q", err, nonce)
	}
	if c := only(t, f.svc.Unauthorized(err)); c.Error != dpop.CodeUseNonce {
		t.Errorf("challenge %s", c.Header())
	}
	if _, fresh, err := f.present(tok, h.proof(t, f.clk, tok, map[string]any{"nonce": nonce})); err != nil || fresh != "" {
		t.Fatalf("retry with the nonce: %v (fresh %q)", err, fresh)
	}
	f.clk.Advance(40 * time.Second)
	if _, fresh, err := f.present(tok, h.proof(t, f.clk, tok, map[string]any{"nonce": nonce})); err != nil || fresh == "" {
		t.Fatalf("a nonce past half its life: %v, want a fresh one (got %q)", err, fresh)
	}
	if _, _, err := f.present(tok, h.proof(t, f.clk, tok, map[string]any{"nonce": "definitely-not-the-server-nonce"})); Reason(err) != ReasonDPoPNonce {
		t.Errorf("forged nonce: %v", err)
	}
}

// TestDPoPConfigValidate: every bad DPoP setting is reported, with its key.
func TestDPoPConfigValidate(t *testing.T) {
	err := Config{
		Issuers: []IssuerConfig{{Issuer: "https://idp.example", DPoP: "maybe"}},
		DPoP: DPoPConfig{Mode: "on", Algorithms: []string{"HS256", "none"}, Window: 10 * time.Minute, MaxProofsPerCaller: -1,
			Nonce: DPoPNonceConfig{Lifetime: time.Second}},
		Policy: PolicyConfig{Rules: []RuleConfig{{Tools: []string{"x"}, DPoP: "yes"}, {Tools: []string{"y"}, Effect: EffectDeny, DPoP: DPoPRequired}}},
	}.Validate()
	for _, want := range []string{"issuers[0].dpop", "dpop.mode", "dpop.algorithms[0]", "dpop.algorithms[1]", "dpop.window",
		"dpop.maxProofsPerCaller", "dpop.nonce.lifetime", "policy.rules[0].dpop", "policy.rules[1].effect"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s: %v", want, err)
		}
	}
	err = Config{Issuers: []IssuerConfig{{Issuer: "https://idp.example"}},
		Policy: PolicyConfig{Rules: []RuleConfig{{Tools: []string{"x"}, DPoP: DPoPRequired}}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "no issuer accepts DPoP-bound tokens") {
		t.Errorf("a rule requiring DPoP with DPoP off: %v", err)
	}
}

// TestInScheme: a challenge decided after authentication goes to a caller whose token came with
// a proof in the DPoP scheme, with the accepted algorithms and the challenge's own parameters; to
// a bearer caller, and with DPoP off, unchanged.
func TestInScheme(t *testing.T) {
	f := newDPoPFixture(t, func(c *Config) { c.DPoP.Algorithms = []string{"ES256", "EdDSA"} })
	c := Challenge{Error: ChallengeInsufficientScope, Scopes: []string{"tools:admin"}, ResourceMetadata: "https://m.example/prm"}
	want := `DPoP error="insufficient_scope", algs="ES256 EdDSA", resource_metadata="https://m.example/prm", scope="tools:admin"`
	if got := f.svc.InScheme(c, true).Header(); got != want {
		t.Errorf("with a proof: %s\nwant %s", got, want)
	}
	if got := f.svc.InScheme(c, false); got.Scheme != "" || got.Algs != nil {
		t.Errorf("without a proof: %+v", got)
	}
	off := newDPoPFixture(t, func(c *Config) { c.DPoP.Mode = DPoPOff })
	if got := off.svc.InScheme(c, true); got.Scheme != "" {
		t.Errorf("with DPoP off: %+v", got)
	}
}

// TestConfirmationNotVerifiedRefused: a token whose cnf binds it by a method the gateway cannot
// check (RFC 8705 x5t#S256, RFC 7800 jwk, jwe, jku, kid, any other member) or by nothing at all
// is refused as Bearer and with a proof, in every DPoP mode: taking it as a bearer token would
// let whoever holds a copy use a token its issuer meant only for the holder of a certificate or
// key. A token bound with cnf.jkt alone still passes with its proof.
func TestConfirmationNotVerifiedRefused(t *testing.T) {
	h := newHolder(t)
	for _, mode := range []string{DPoPOff, DPoPAllowed} {
		f := newDPoPFixture(t, func(c *Config) { c.DPoP.Mode = mode })
		cnfs := map[string]map[string]any{
			"empty":               {},
			"x5t#S256":            {"x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"},
			"jwk":                 {"jwk": map[string]any{"kty": "EC", "crv": "P-256", "x": "a", "y": "b"}},
			"kid":                 {"kid": "dfd1aa97-6d8d-4575-a0fe-34b96de2bfad"},
			"jku":                 {"jku": "https://keys.example/k.json"},
			"jkt and x5t#S256":    {"jkt": h.jkt, "x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"},
			"jkt and an unknown":  {"jkt": h.jkt, "osc": "x"},
			"JKT in another case": {"JKT": h.jkt},
		}
		for name, cnf := range cnfs {
			t.Run(mode+"/"+name, func(t *testing.T) {
				tok := mint(t, f.iss, devissuer.Claims{"sub": "alice", "cnf": cnf})
				if _, err := f.svc.AuthenticateBearer(context.Background(), tok); !errors.Is(err, ErrInvalidToken) {
					t.Errorf("as Bearer: %v, want invalid_token", err)
				}
				if mode == DPoPOff {
					return
				}
				if p, _, err := f.present(tok, h.proof(t, f.clk, tok, nil)); !errors.Is(err, ErrInvalidToken) {
					t.Errorf("with a proof: %v (principal %+v), want invalid_token", err, p)
				}
			})
		}
		if mode == DPoPAllowed {
			tok := f.bound(t, h.jkt)
			if _, _, err := f.present(tok, h.proof(t, f.clk, tok, nil)); err != nil {
				t.Errorf("cnf.jkt alone with its proof: %v", err)
			}
		}
	}
}

// TestDPoPReplayAcrossSkewedReplicas: a proof's jti is remembered for as long as any replica
// could still take its iat within the window, not only the one that recorded it: a replica
// whose clock runs behind (up to dpop.ReplicaSkew) accepts the proof for longer, and must find the
// record there. Two Services share one replay store, B's clock 20 seconds behind A's.
func TestDPoPReplayAcrossSkewedReplicas(t *testing.T) {
	f := newDPoPFixture(t, nil)
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "k", Secret: []byte(strings.Repeat("s", 32))}}})
	if err != nil {
		t.Fatal(err)
	}
	behind := func() time.Time { return f.clk.Now().Add(-20 * time.Second) }
	b, err := New(Config{Issuers: []IssuerConfig{{Issuer: f.iss.URL()}}, DPoP: DPoPConfig{Mode: DPoPAllowed}},
		Options{ResourceURI: testResource, Now: behind, DPoP: DPoPOptions{Replay: f.store, Keys: ring}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHolder(t)
	tok := f.bound(t, h.jkt)
	proof := h.proof(t, f.clk, tok, nil)
	if _, _, err := f.present(tok, proof); err != nil {
		t.Fatalf("first use on A: %v", err)
	}
	// On A the proof's iat has left the window; on B, 20 seconds behind, it has not.
	f.clk.Advance(dpop.DefaultWindow + 10*time.Second)
	_, _, err = b.AuthenticateDPoP(context.Background(), DPoPRequest{Token: tok, Proofs: []string{proof}, Method: "POST", URL: testResource})
	if Reason(err) != ReasonDPoPReplay {
		t.Fatalf("replayed on the replica behind: %v, want %s", err, ReasonDPoPReplay)
	}
}
