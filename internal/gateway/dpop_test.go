package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/dpopclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
)

// dpopReplicas is two replicas sharing a real Redis, with every token of a real issuer
// required to be DPoP-bound, in front of one backend; a is logged at debug level.
type dpopReplicas struct {
	a, b  Listeners
	alpha *mcptest.Server
	redis *testredis.Server
	logs  *mcptest.LogBuffer
	stopA func()
}

func startDPoPReplicas(t *testing.T, iss *devissuer.Issuer) *dpopReplicas {
	t.Helper()
	f := &dpopReplicas{alpha: mcptest.StartServer(t, "alpha"), redis: testredis.Start(t)}
	mutate := func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.DPoP.Mode = authz.DPoPRequired
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "use", Upstream: "alpha", Tools: []string{"echo", "add"}, AnyScope: []string{"tools:use"}},
			{ID: "admin", Upstream: "alpha", Tools: []string{"whoami"}, AnyScope: []string{"tools:admin"}},
		}
		c.Redis.URL = f.redis.URL()
		c.MRTR.Keys = testKeys
		c.Toolsets = []mcphttp.ToolsetConfig{
			{Name: "ro", Path: "/ro/mcp", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo"}}}},
			{Name: "other", Path: "/other/mcp", Include: []mcphttp.SelectorConfig{{}}},
		}
	}
	f.a, f.logs, f.stopA = startLoggedGateway(t, mutate, f.alpha)
	f.b = startTestGateway(t, mutate, f.alpha)
	return f
}

// dpopCallBody is a tools/call of alpha__echo.
const dpopCallBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + testMeta + `,"name":"alpha__echo","arguments":{"text":"x"}}}`

// TestDPoPAcrossReplicas is the acceptance list of MCP's DPoP conformance checks for servers
// (SEP-1932: validate proof, iat window, asymmetric algorithms only, audience, 401 with a DPoP
// challenge, Bearer downgrade; the nonce check is TestDPoPNoncesAndRules'), each case as the
// suite's auth/dpop-server-validation scenario sends it, through two replicas sharing a real Redis, with tokens bound by a real issuer
// over HTTP and proofs made by panva's dpop library. A proof is refused a second time on either
// replica; the backend never sees the token or a proof, nor does the log; with Redis gone the
// gateway fails closed.
func TestDPoPAcrossReplicas(t *testing.T) {
	iss := newDPoPIssuer(t)
	dc := dpopclient.Start(t)
	f := startDPoPReplicas(t, iss)
	caller := newDPoPCaller(t, dc, iss, testResource)
	urlA, urlB := "http://"+f.a.MCP+"/mcp", "http://"+f.b.MCP+"/mcp"
	var sent []string // every proof sent to replica a

	t.Run("go-sdk client with the library's proofs", func(t *testing.T) {
		tr := newDPoPTransport(t, caller)
		cs := mcptest.Connect(t, urlA, mcptest.WithRoundTripper(tr))
		if names := toolNames(t, cs); !slices.Contains(names, "alpha__echo") {
			t.Fatalf("tools/list: %v", names)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "bound"}})
		if err != nil || res.IsError || mcptest.ResultText(res) != "bound" {
			t.Fatalf("tools/call: %v %+v", err, res)
		}
		sent = append(sent, tr.sent()...)
	})
	t.Run("the backend gets neither the token nor a proof", func(t *testing.T) {
		if len(f.alpha.RequestsOf("tools/call")) == 0 {
			t.Fatal("the backend received no call")
		}
		noSecretsIn(t, f.alpha.Requests(), append([]string{caller.token}, sent...)...)
	})
	t.Run("protected resource metadata", func(t *testing.T) {
		md := protectedResourceMetadata(t, f.a)
		if !md.DPoPBoundAccessTokensRequired || !slices.Contains(md.DPoPSigningAlgValuesSupported, "ES256") ||
			slices.Contains(md.DPoPSigningAlgValuesSupported, "none") {
			t.Fatalf("metadata %+v", md)
		}
	})
	t.Run("replay refused on the other replica", func(t *testing.T) {
		f.alpha.Reset()
		proof := caller.proof(t, http.MethodPost, testResource, nil)
		sent = append(sent, proof)
		if status, _, body := post(t, urlA, caller.headers("tools/call", "alpha__echo", proof), dpopCallBody); status != http.StatusOK {
			t.Fatalf("first use: %d %s", status, body)
		}
		replays := metricValue(t, f.a, authFailures+`{reason="dpop_replay"}`)
		for _, u := range []string{urlB, urlA} {
			status, h, _ := post(t, u, caller.headers("tools/call", "alpha__echo", proof), dpopCallBody)
			wantDPoPRefusal(t, status, h, dpop.CodeInvalidProof)
		}
		if n := metricValue(t, f.a, authFailures+`{reason="dpop_replay"}`) - replays; n != 1 {
			t.Fatalf("the replay on a counted %v times under dpop_replay, want 1", n)
		}
		if n := toolCalls(f.alpha); n != 1 {
			t.Fatalf("the backend received %d calls, want 1", n)
		}
	})
	t.Run("no token: a DPoP challenge only, where every issuer requires DPoP", func(t *testing.T) {
		status, h, _ := post(t, urlA, modernHeaders("tools/call", "alpha__echo"), dpopCallBody)
		lines := h.Values("WWW-Authenticate")
		if status != http.StatusUnauthorized || len(lines) != 1 || !strings.HasPrefix(lines[0], "DPoP algs=") ||
			!strings.Contains(lines[0], `resource_metadata="https://mcp.test.invalid/.well-known/oauth-protected-resource/mcp"`) {
			t.Fatalf("status %d, WWW-Authenticate %q", status, lines)
		}
	})
	t.Run("step-up in the DPoP scheme", func(t *testing.T) {
		p := caller.proof(t, http.MethodPost, testResource, nil)
		sent = append(sent, p)
		status, h, _ := post(t, urlB, caller.headers("tools/call", "alpha__whoami", p),
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__whoami","arguments":{}}}`)
		if ch := dpopChallenge(h); status != http.StatusForbidden || !strings.Contains(ch, `error="insufficient_scope"`) ||
			!strings.Contains(ch, `scope="tools:admin"`) || !strings.Contains(ch, `algs="`) {
			t.Fatalf("status %d, WWW-Authenticate %q: want 403 with a DPoP insufficient_scope challenge", status, h.Values("WWW-Authenticate"))
		}
	})
	t.Run("tool set endpoint: its own htu and audience", func(t *testing.T) {
		f.alpha.Reset()
		const setURL = "https://mcp.test.invalid/ro/mcp"
		ro := "http://" + f.a.MCP + "/ro/mcp"
		own := caller.proof(t, http.MethodPost, setURL, nil)
		sent = append(sent, own)
		if status, _, body := post(t, ro, caller.headers("tools/call", "alpha__echo", own), dpopCallBody); status != http.StatusOK {
			t.Fatalf("a proof for the set's URL: %d %s", status, body)
		}
		status, h, _ := post(t, ro, caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, testResource, nil)), dpopCallBody)
		wantDPoPRefusal(t, status, h, dpop.CodeInvalidProof)
		other := newDPoPCaller(t, dc, iss, "https://mcp.test.invalid/other/mcp")
		status, h, _ = post(t, ro, other.headers("tools/call", "alpha__echo", other.proof(t, http.MethodPost, setURL, nil)), dpopCallBody)
		wantDPoPRefusal(t, status, h, authz.ChallengeInvalidToken)
		if n := toolCalls(f.alpha); n != 1 {
			t.Fatalf("the backend received %d calls, want 1", n)
		}
	})
	for _, tc := range dpopConformanceCases(t, caller, iss) {
		t.Run(tc.check+"/"+tc.name, func(t *testing.T) {
			f.alpha.Reset()
			auth, proofs := tc.request()
			sent = append(sent, proofs...)
			h := caller.headers("tools/call", "alpha__echo", proofs...)
			h.Set("Authorization", auth)
			counted := authFailureSeries(tc)
			before := metricValue(t, f.a, counted)
			status, hdr, body := post(t, urlA, h, dpopCallBody) // a is logged: no refusal may log a secret
			wantDPoPRefusal(t, status, hdr, tc.code)
			if strings.Contains(body, `"result"`) || len(f.alpha.Forwarded()) != 0 {
				t.Fatalf("a refused request reached the backend: %s", body)
			}
			if after := metricValue(t, f.a, counted); after != before+1 {
				t.Fatalf("%s moved by %v, want 1 (docs/dpop.md: each failure counted once under its reason)", counted, after-before)
			}
		})
	}
	t.Run("a proof used before Redis lost its data stays used", func(t *testing.T) {
		// A Redis restarted without its data (or failed over to an empty instance) has
		// forgotten the proofs used before; one of them replayed within its iat window is
		// still refused, and a new proof goes through.
		f.alpha.Reset()
		used := caller.proof(t, http.MethodPost, testResource, nil)
		if status, _, body := post(t, urlA, caller.headers("tools/call", "alpha__echo", used), dpopCallBody); status != 200 {
			t.Fatalf("first use: %d %s", status, body)
		}
		// iat has whole seconds: the loss must come in a later second than the first use for
		// the proof to predate it (one used in the very second of a loss is not told apart).
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		f.redis.Restart()
		var status int
		var h http.Header
		mcptest.WaitFor(t, "an answer that is not 503 once Redis is back", func() bool {
			status, h, _ = post(t, urlB, caller.headers("tools/call", "alpha__echo", used), dpopCallBody)
			return status != http.StatusServiceUnavailable
		})
		wantDPoPRefusal(t, status, h, dpop.CodeInvalidProof)
		if toolCalls(f.alpha) != 1 {
			t.Fatalf("the backend got %d calls, want the first use only", toolCalls(f.alpha))
		}
		fresh := caller.proof(t, http.MethodPost, testResource, nil)
		if status, _, body := post(t, urlA, caller.headers("tools/call", "alpha__echo", fresh), dpopCallBody); status != 200 {
			t.Fatalf("a new proof after the restart: %d %s", status, body)
		}
	})
	t.Run("Redis full: 503, never an allow", func(t *testing.T) {
		// maxmemory reached under noeviction: Redis answers, but refuses to record the proof.
		for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
			if _, err := f.redis.Do(args...); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			if _, err := f.redis.Do("CONFIG", "SET", "maxmemory", "0"); err != nil {
				t.Fatal(err)
			}
		}()
		f.alpha.Reset()
		status, h, body := post(t, urlA, caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, testResource, nil)), dpopCallBody)
		if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" || toolCalls(f.alpha) != 0 {
			t.Fatalf("status %d, Retry-After %q: %s", status, h.Get("Retry-After"), body)
		}
	})
	t.Run("Redis gone: 503, never an allow", func(t *testing.T) {
		f.alpha.Reset()
		f.redis.Stop()
		status, h, body := post(t, urlA, caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, testResource, nil)), dpopCallBody)
		if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" || toolCalls(f.alpha) != 0 {
			t.Fatalf("status %d, Retry-After %q: %s", status, h.Get("Retry-After"), body)
		}
	})
	f.stopA()
	for _, secret := range append([]string{caller.token}, sent...) {
		if strings.Contains(f.logs.String(), secret) {
			t.Fatal("the log holds a token or a proof")
		}
	}
}

// authFailures is the metric every failed authentication is counted in, by reason.
const authFailures = metrics.NameAuthFailures

// authFailureSeries is the series of authFailures a conformance case must move: a proof's own
// failure is dpop_proof; a token for another resource is wrong_audience; any other token refused
// with a proof (or a bound token as Bearer) is dpop_binding.
func authFailureSeries(tc dpopCase) string {
	reason := metrics.AuthDPoPBinding
	switch {
	case tc.code == dpop.CodeInvalidProof:
		reason = metrics.AuthDPoPProof
	case tc.check == "sep-1932-server-audience-validation":
		reason = metrics.AuthWrongAudience
	}
	return authFailures + `{reason="` + reason + `"}`
}

// dpopCase is one negative of the conformance list: the Authorization value and the DPoP
// header values it sends, and the error code the challenge must carry.
type dpopCase struct {
	check, name string
	request     func() (auth string, proofs []string)
	code        string
}

// dpopConformanceCases are the negatives of the SEP-1932 server checks, each made with one
// defect: by the library where it will make it, else forged with the library's key.
func dpopConformanceCases(t *testing.T, c *dpopCaller, iss *devissuer.Issuer) []dpopCase {
	const htu = testResource
	bound := dpop.Scheme + " " + c.token
	lib := func(change func(*dpopclient.Proof)) func() (string, []string) {
		return func() (string, []string) { return bound, []string{c.proof(t, http.MethodPost, htu, change)} }
	}
	forge := func(change func(h, claims map[string]any)) func() (string, []string) {
		return func() (string, []string) {
			return bound, []string{dpopclient.Forge(t, c.key, dpopclient.Proof{Method: http.MethodPost, URL: htu, AccessToken: c.token}, time.Now(), change)}
		}
	}
	del := func(member string) func() (string, []string) {
		return forge(func(h, claims map[string]any) { delete(claims, member); delete(h, member) })
	}
	const proofCheck, iatCheck, algCheck = "sep-1932-server-validate-proof", "sep-1932-server-iat-window", "sep-1932-asymmetric-alg-only"
	return []dpopCase{
		{"sep-1932-server-reject-401", "tampered signature", func() (string, []string) {
			return bound, []string{dpopclient.TamperSignature(c.proof(t, http.MethodPost, htu, nil))}
		}, dpop.CodeInvalidProof},
		{proofCheck, "missing jti", del("jti"), dpop.CodeInvalidProof},
		{proofCheck, "typ jwt", forge(func(h, _ map[string]any) { h["typ"] = "jwt" }), dpop.CodeInvalidProof},
		{proofCheck, "wrong htu", lib(func(p *dpopclient.Proof) { p.URL = "https://other.test.invalid/mcp" }), dpop.CodeInvalidProof},
		{proofCheck, "htm GET", lib(func(p *dpopclient.Proof) { p.Method = http.MethodGet }), dpop.CodeInvalidProof},
		{proofCheck, "private key in jwk", forge(func(h, _ map[string]any) { h["jwk"] = dpopclient.PrivateJWKMember(t, c.key) }), dpop.CodeInvalidProof},
		{proofCheck, "wrong ath", lib(func(p *dpopclient.Proof) { p.AccessToken = "another-token" }), dpop.CodeInvalidProof},
		{proofCheck, "two DPoP headers", func() (string, []string) {
			return bound, []string{c.proof(t, http.MethodPost, htu, nil), c.proof(t, http.MethodPost, htu, nil)}
		}, dpop.CodeInvalidProof},
		{proofCheck, "no DPoP header", func() (string, []string) { return bound, nil }, dpop.CodeInvalidProof},
		{proofCheck, "missing htm", del("htm"), dpop.CodeInvalidProof},
		{proofCheck, "missing htu", del("htu"), dpop.CodeInvalidProof},
		{proofCheck, "missing iat", del("iat"), dpop.CodeInvalidProof},
		{proofCheck, "missing jwk", del("jwk"), dpop.CodeInvalidProof},
		{proofCheck, "token presented without ath", lib(func(p *dpopclient.Proof) { p.AccessToken = "" }), dpop.CodeInvalidProof},
		{proofCheck, "proof not a JWT", func() (string, []string) { return bound, []string{"not-a-jwt"} }, dpop.CodeInvalidProof},
		{proofCheck, "cnf.jkt is another key's", func() (string, []string) {
			other := c.dc.NewKey(t, "ES256")
			return bound, []string{c.dc.Proof(t, other, dpopclient.Proof{Method: http.MethodPost, URL: htu, AccessToken: c.token})}
		}, authz.ChallengeInvalidToken},
		// Its own check since the scenario landed on the suite's main branch, sent with a valid
		// proof beside it.
		{"sep-1932-server-reject-bearer-downgrade", "bound token as Bearer", func() (string, []string) {
			return "Bearer " + c.token, []string{c.proof(t, http.MethodPost, htu, nil)}
		}, authz.ChallengeInvalidToken},
		{"sep-1932-server-reject-bearer-downgrade", "bound token as Bearer, no proof", func() (string, []string) { return "Bearer " + c.token, nil }, authz.ChallengeInvalidToken},
		{iatCheck, "iat 303s ago", lib(func(p *dpopclient.Proof) { p.Skew = -303 * time.Second }), dpop.CodeInvalidProof},
		{iatCheck, "iat 303s ahead", lib(func(p *dpopclient.Proof) { p.Skew = 303 * time.Second }), dpop.CodeInvalidProof},
		{algCheck, "alg none", forge(func(h, _ map[string]any) { h["alg"] = "none" }), dpop.CodeInvalidProof},
		{algCheck, "HS256 with the public key", forge(func(h, _ map[string]any) { h["alg"] = "HS256" }), dpop.CodeInvalidProof},
		{"sep-1932-server-audience-validation", "token for another resource", func() (string, []string) {
			other := newDPoPCaller(t, c.dc, iss, "https://other.test.invalid/mcp")
			return dpop.Scheme + " " + other.token, []string{other.proof(t, http.MethodPost, htu, nil)}
		}, authz.ChallengeInvalidToken},
	}
}

// wantDPoPRefusal fails the test unless the response is 401 with a DPoP challenge carrying
// code and the accepted algorithms.
func wantDPoPRefusal(t *testing.T, status int, h http.Header, code string) {
	t.Helper()
	ch := dpopChallenge(h)
	if status != http.StatusUnauthorized || !strings.Contains(ch, `error="`+code+`"`) || !strings.Contains(ch, `algs="`) {
		t.Fatalf("status %d, WWW-Authenticate %q: want 401 with a DPoP challenge, error %q and algs", status, h.Values("WWW-Authenticate"), code)
	}
}

// protectedResourceMetadata fetches the gateway's protected resource metadata.
func protectedResourceMetadata(t *testing.T, gw Listeners) authz.ProtectedResourceMetadata {
	t.Helper()
	res, err := http.Get("http://" + gw.MCP + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var md authz.ProtectedResourceMetadata
	if err := json.NewDecoder(res.Body).Decode(&md); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("metadata: %d %v", res.StatusCode, err)
	}
	return md
}

// TestDPoPNoncesAndRules: with server nonces required (RFC 9449 §8; SEP-1932's nonce check), a
// proof without one is answered 401 use_dpop_nonce with a DPoP-Nonce, a retry carrying it
// passes on another replica (the nonce is sealed, nothing is stored), and a wrong nonce is
// refused; the go-sdk client retries on its own, in 2026-07-28 and through the pre-2026 edge
// (initialize and the GET stream carry proofs of their own method). With DPoP allowed, a
// bearer token works except where a rule requires DPoP, which the metadata then says.
func TestDPoPNoncesAndRules(t *testing.T) {
	iss := newDPoPIssuer(t)
	dc := dpopclient.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	mutate := func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.DPoP.Mode = authz.DPoPAllowed
		c.Auth.DPoP.Nonce.Required = true
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "strong", Upstream: "alpha", Tools: []string{"add"}, AnyScope: []string{"tools:use"}, DPoP: authz.DPoPRequired},
			{ID: "use", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
		}
		c.MRTR.Keys = testKeys
	}
	c, d := startTestGateway(t, mutate, alpha), startTestGateway(t, mutate, alpha)
	urlC, urlD := "http://"+c.MCP+"/mcp", "http://"+d.MCP+"/mcp"
	caller := newDPoPCaller(t, dc, iss, testResource)

	t.Run("sep-1932-server-nonce", func(t *testing.T) {
		alpha.Reset()
		status, h, _ := post(t, urlC, caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, testResource, nil)), dpopCallBody)
		wantDPoPRefusal(t, status, h, dpop.CodeUseNonce)
		if n := metricValue(t, c, authFailures+`{reason="dpop_nonce"}`); n != 1 {
			t.Fatalf("a proof without the nonce counted %v times under dpop_nonce, want 1", n)
		}
		nonce := h.Get(dpop.NonceHeader)
		if nonce == "" || toolCalls(alpha) != 0 {
			t.Fatalf("use_dpop_nonce without a DPoP-Nonce (%q), or the call went through", nonce)
		}
		withNonce := caller.proof(t, http.MethodPost, testResource, func(p *dpopclient.Proof) { p.Nonce = nonce })
		if status, _, body := post(t, urlD, caller.headers("tools/call", "alpha__echo", withNonce), dpopCallBody); status != http.StatusOK {
			t.Fatalf("the retry with the nonce on another replica: %d %s", status, body)
		}
		for _, wrong := range []string{"not-our-nonce", nonce[:len(nonce)-2] + "xx"} {
			p := caller.proof(t, http.MethodPost, testResource, func(p *dpopclient.Proof) { p.Nonce = wrong })
			status, h, _ := post(t, urlD, caller.headers("tools/call", "alpha__echo", p), dpopCallBody)
			wantDPoPRefusal(t, status, h, dpop.CodeUseNonce)
		}
		if toolCalls(alpha) != 1 {
			t.Fatalf("the backend received %d calls, want 1", toolCalls(alpha))
		}
	})
	// Every revision the pre-2026 edge serves authenticates through the same stage: docs/dpop.md
	// names them all.
	for _, version := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("go-sdk client "+version, func(t *testing.T) {
			tr := newDPoPTransport(t, caller)
			opts := []mcptest.ClientOption{mcptest.WithRoundTripper(tr)}
			if version != "2026-07-28" {
				opts = append(opts, mcptest.WithProtocolVersion(version))
			}
			cs := mcptest.Connect(t, urlC, opts...)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}})
			if err != nil || res.IsError {
				t.Fatalf("a DPoP caller's call of a tool whose rule requires DPoP: %v %+v", err, res)
			}
			if err := cs.Close(); err != nil {
				t.Fatal(err)
			}
			sends := tr.exchanges()
			if version != "2026-07-28" && !slices.Contains(sends, "GET 200") {
				t.Fatalf("the pre-2026 session's GET stream did not pass with its proof (htm GET): %v", sends)
			}
		})
	}
	t.Run("bearer allowed, except where a rule requires DPoP", func(t *testing.T) {
		bearer, typ := requestToken(t, iss, testResource, "")
		if typ != "Bearer" {
			t.Fatalf("token_type %q without a proof", typ)
		}
		cs := mcptest.Connect(t, urlD, mcptest.WithBearer(bearer))
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
			t.Fatalf("a bearer call where DPoP is allowed: %v %+v", err, res)
		}
		h := modernHeaders("tools/call", "alpha__add")
		h.Set("Authorization", "Bearer "+bearer)
		status, hdr, _ := post(t, urlD, h, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__add","arguments":{"a":1,"b":2}}}`)
		wantDPoPRefusal(t, status, hdr, authz.ChallengeInvalidToken)
		// Where Bearer is accepted, a DPoP-bound token presented as Bearer is still refused
		// (RFC 9449 §7.2).
		h = modernHeaders("tools/call", "alpha__echo")
		h.Set("Authorization", "Bearer "+caller.token)
		status, hdr, _ = post(t, urlD, h, dpopCallBody)
		wantDPoPRefusal(t, status, hdr, authz.ChallengeInvalidToken)
		if md := protectedResourceMetadata(t, d); !md.DPoPBoundAccessTokensRequired {
			t.Fatalf("a rule requires DPoP, the metadata says %+v", md)
		}
	})
	t.Run("no token: Bearer first, then DPoP, where both are accepted", func(t *testing.T) {
		status, h, _ := post(t, urlC, modernHeaders("tools/call", "alpha__echo"), dpopCallBody)
		lines := h.Values("WWW-Authenticate")
		if status != http.StatusUnauthorized || len(lines) != 2 || !strings.HasPrefix(lines[0], "Bearer resource_metadata=") ||
			!strings.HasPrefix(lines[1], "DPoP algs=") {
			t.Fatalf("status %d, WWW-Authenticate %q", status, lines)
		}
	})
	t.Run("pre-2026 edge: a proof for another method", func(t *testing.T) {
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		h.Set("Authorization", dpop.Scheme+" "+caller.token)
		h.Set(dpop.Header, caller.proof(t, http.MethodGet, testResource, nil))
		status, hdr, _ := post(t, urlC, h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		wantDPoPRefusal(t, status, hdr, dpop.CodeInvalidProof)
		// DELETE of a session is 405 before authentication: no proof for DELETE is checked, and
		// none is needed.
		del := http.Header{"Mcp-Session-Id": {"any"}, "Mcp-Protocol-Version": {"2025-11-25"}}
		if status, hdr, _ := exchange(t, http.MethodDelete, urlC, del, ""); status != http.StatusMethodNotAllowed || len(hdr.Values("WWW-Authenticate")) != 0 {
			t.Fatalf("DELETE without a token: %d %v, want 405 before authentication", status, hdr.Values("WWW-Authenticate"))
		}
	})
}

// TestDPoPProofBudget: the proofs one caller may have remembered against replay are bounded
// (auth.dpop.maxProofsPerCaller); past the budget its requests are 429 with Retry-After, not
// forwarded, while a replay of a remembered proof is still refused as one. It is a caller's
// limit like the others: -32012, or with server.draftErrors [rateLimited] SEP-3304's -32023
// with retryAfterMs (docs/denials.md).
func TestDPoPProofBudget(t *testing.T) {
	iss := newDPoPIssuer(t)
	dc := dpopclient.Start(t)
	for _, tc := range []struct {
		drafts []string
		want   string
	}{
		{nil, `"code":-32012`},
		{[]string{mcphttp.DraftRateLimited}, `"code":-32023,"message":"Too many DPoP proofs from this caller; retry later","data":{"retryAfterMs":`},
	} {
		t.Run(fmt.Sprint(tc.drafts), func(t *testing.T) {
			alpha := mcptest.StartServer(t, "alpha")
			gw := startTestGateway(t, func(c *Config) {
				trustIssuers(c, iss)
				c.Server.DraftErrors = tc.drafts
				c.Auth.DPoP.Mode = authz.DPoPRequired
				c.Auth.DPoP.MaxProofsPerCaller = 2
				c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "use", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
			}, alpha)
			u := "http://" + gw.MCP + "/mcp"
			caller := newDPoPCaller(t, dc, iss, testResource)
			first := caller.proof(t, http.MethodPost, testResource, nil)
			for _, p := range []string{first, caller.proof(t, http.MethodPost, testResource, nil)} {
				if status, _, body := post(t, u, caller.headers("tools/call", "alpha__echo", p), dpopCallBody); status != http.StatusOK {
					t.Fatalf("within the budget: %d %s", status, body)
				}
			}
			status, h, body := post(t, u, caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, testResource, nil)), dpopCallBody)
			if status != http.StatusTooManyRequests || !strings.Contains(body, tc.want) {
				t.Fatalf("over the budget: %d: %s, want %s", status, body, tc.want)
			}
			wantBudgetFrees(t, h, body, 2*dpop.MaxWindow+time.Second)
			status, h, _ = post(t, u, caller.headers("tools/call", "alpha__echo", first), dpopCallBody)
			wantDPoPRefusal(t, status, h, dpop.CodeInvalidProof)
			if n := toolCalls(alpha); n != 2 {
				t.Fatalf("the backend received %d calls, want 2", n)
			}
		})
	}
}

// wantBudgetFrees checks that a refusal for the proof budget says when the budget's window,
// opened by the first proof a moment ago, ends: Retry-After its whole seconds, rounded up, and
// the draft's retryAfterMs, when the body has one, the same time in milliseconds.
func wantBudgetFrees(t *testing.T, h http.Header, body string, window time.Duration) {
	t.Helper()
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	// The replicas' clock and Redis's run on while the test sends: a minute is ample.
	if err != nil || time.Duration(secs)*time.Second > window+time.Second || time.Duration(secs)*time.Second < window-time.Minute {
		t.Fatalf("Retry-After %q, want about %v", h.Get("Retry-After"), window)
	}
	var msg struct {
		Error struct {
			Data struct{ RetryAfterMs *int64 } `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &msg) != nil {
		t.Fatalf("body %s", body)
	}
	if ms := msg.Error.Data.RetryAfterMs; ms != nil && (*ms > int64(secs)*1000 || *ms <= int64(secs-1)*1000) {
		t.Errorf("retryAfterMs %d and Retry-After %d disagree", *ms, secs)
	}
}

// TestDPoPPublicURLNormalises: with DPoP on, a server.publicURL that has no htu normal form (a
// query, a host of other characters) is a configuration error: every proof's htu is compared
// with it, so the gateway would otherwise start and refuse every DPoP request. The same URLs stay
// accepted with DPoP off. (User information is refused whatever DPoP's mode:
// TestPublishedURLsCarryNoUserInfo.)
func TestDPoPPublicURLNormalises(t *testing.T) {
	for _, public := range []string{"https://mcp.test.invalid/mcp?tenant=a", "https://bücher.test.invalid/mcp"} {
		cfg := &Config{Log: LogConfig{Level: "error", Format: "text"}}
		cfg.Server.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
		cfg.Auth.Issuers = []authz.IssuerConfig{{Issuer: "https://issuer.test.invalid"}}
		cfg.Server.PublicURL = public
		cfg.applyDefaults()
		if err := cfg.validate(); err != nil && strings.Contains(err.Error(), "server.publicURL") {
			t.Fatalf("%s with DPoP off: %v", public, err)
		}
		cfg.Auth.DPoP.Mode = authz.DPoPAllowed
		if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "server.publicURL") || !strings.Contains(err.Error(), "htu") {
			t.Errorf("%s with DPoP on: %v", public, err)
		}
	}
}

// TestDPoPNoncesNeedSharedKeys: with server nonces required and Redis (several replicas), the
// gateway refuses to start without mrtr.keys: a nonce sealed under one replica's random key
// would be refused by every other, and clients would loop on use_dpop_nonce (docs/dpop.md). One
// replica without Redis, or shared keys, start.
func TestDPoPNoncesNeedSharedKeys(t *testing.T) {
	for _, tc := range []struct {
		name        string
		redis, keys bool
		refused     bool
	}{{"redis without keys", true, false, true}, {"redis with keys", true, true, false}, {"one replica", false, false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{Log: LogConfig{Level: "error", Format: "text"}}
			cfg.Server.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
			cfg.Server.PublicURL = testResource
			cfg.Auth.Issuers = []authz.IssuerConfig{{Issuer: "https://issuer.test.invalid"}}
			cfg.Auth.DPoP.Mode = authz.DPoPAllowed
			cfg.Auth.DPoP.Nonce.Required = true
			if tc.redis {
				cfg.Redis.URL = "redis://127.0.0.1:6379/0"
			}
			if tc.keys {
				cfg.MRTR.Keys = testKeys
			}
			cfg.applyDefaults()
			err := cfg.validate()
			if refused := err != nil && strings.Contains(err.Error(), "mrtr.keys") && strings.Contains(err.Error(), "nonce"); refused != tc.refused {
				t.Fatalf("refused %v, want %v: %v", refused, tc.refused, err)
			}
		})
	}
}
