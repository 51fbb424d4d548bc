package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
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
		c.Auth.Disabled = false
		c.Server.PublicURL = testResource
		c.Auth.Issuers = []authz.IssuerConfig{{Issuer: iss.URL()}}
		c.Auth.DPoP.Mode = authz.DPoPRequired
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "use", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
		c.Redis.URL = f.redis.URL()
		c.MRTR.Keys = testKeys
	}
	f.a, f.logs, f.stopA = startLoggedGateway(t, mutate, f.alpha)
	f.b = startTestGateway(t, mutate, f.alpha)
	return f
}

// callBody is a tools/call of alpha__echo.
const callBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + testMeta + `,"name":"alpha__echo","arguments":{"text":"x"}}}`

// TestDPoPAcrossReplicas is the acceptance list of MCP's DPoP conformance checks for servers
// (SEP-1932: validate proof, iat window, asymmetric algorithms only, audience, 401 with a DPoP
// challenge), through two replicas sharing a real Redis, with tokens bound by a real issuer
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
		if status, _, body := post(t, urlA, caller.headers("tools/call", "alpha__echo", proof), callBody); status != http.StatusOK {
			t.Fatalf("first use: %d %s", status, body)
		}
		for _, u := range []string{urlB, urlA} {
			status, h, _ := post(t, u, caller.headers("tools/call", "alpha__echo", proof), callBody)
			wantDPoPRefusal(t, status, h, dpop.CodeInvalidProof)
		}
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
			status, hdr, body := post(t, urlB, h, callBody)
			wantDPoPRefusal(t, status, hdr, tc.code)
			if strings.Contains(body, `"result"`) || len(f.alpha.Forwarded()) != 0 {
				t.Fatalf("a refused request reached the backend: %s", body)
			}
		})
	}
	t.Run("Redis gone: 503, never an allow", func(t *testing.T) {
		f.alpha.Reset()
		f.redis.Stop()
		status, h, body := post(t, urlA, caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, testResource, nil)), callBody)
		if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || toolCalls(f.alpha) != 0 {
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
		{proofCheck, "bound token as Bearer", func() (string, []string) { return "Bearer " + c.token, nil }, authz.ChallengeInvalidToken},
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
