package gateway

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/dpopclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// The fixtures of the DPoP end-to-end tests: a development issuer whose token endpoint binds
// tokens to a proof's key, over HTTP; keys and proofs made by panva's dpop library
// (dpopclient), never by the gateway's own code; and a transport that makes the go-sdk client a
// DPoP client.

// The client the DPoP issuer knows (client credentials grant).
const (
	dpopClientID     = "agent"
	dpopClientSecret = "agent-secret"
)

// newDPoPIssuer starts a development issuer for testResource that answers the client
// credentials grant for dpopClientID.
func newDPoPIssuer(t *testing.T) *devissuer.Issuer {
	t.Helper()
	return startIssuer(t, devissuer.Options{Audience: testResource, Clients: map[string]string{dpopClientID: dpopClientSecret}})
}

// dpopCaller is one client's DPoP state: a key the library made and the token the issuer bound
// to it.
type dpopCaller struct {
	dc    *dpopclient.Client
	key   dpopclient.Key
	token string
}

// newDPoPCaller makes an ES256 key with the library and gets a token bound to it from iss's
// token endpoint over HTTP, for resource, with the scope tools:use.
func newDPoPCaller(t *testing.T, dc *dpopclient.Client, iss *devissuer.Issuer, resource string) *dpopCaller {
	t.Helper()
	c := &dpopCaller{dc: dc, key: dc.NewKey(t, "ES256")}
	proof := dc.Proof(t, c.key, dpopclient.Proof{Method: http.MethodPost, URL: iss.TokenURL()})
	tok, typ := requestToken(t, iss, resource, proof)
	if typ != dpop.Scheme {
		t.Fatalf("the issuer answered a token request with a proof with token_type %q", typ)
	}
	cnf, _ := mcptest.JWTClaims(t, tok)["cnf"].(map[string]any)
	if cnf["jkt"] != c.key.JKT {
		t.Fatalf("the token's cnf %v is not the library's thumbprint %s", cnf, c.key.JKT)
	}
	c.token = tok
	return c
}

// requestToken asks iss's token endpoint for a client credentials token for resource, with the
// DPoP proof when it is not empty, and returns the token and its token_type.
func requestToken(t *testing.T, iss *devissuer.Issuer, resource, proof string) (token, tokenType string) {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"tools:use"}, "resource": {resource}}
	req, err := http.NewRequest(http.MethodPost, iss.TokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(dpopClientID, dpopClientSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if proof != "" {
		req.Header.Set(dpop.Header, proof)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusOK || body.AccessToken == "" {
		t.Fatalf("token request: status %d, %v", res.StatusCode, err)
	}
	return body.AccessToken, body.TokenType
}

// proof is a library proof of the caller's key for method at the public URL htu, with the ath
// of its token; change, when not nil, alters the request for the proof first.
func (c *dpopCaller) proof(t *testing.T, method, htu string, change func(*dpopclient.Proof)) string {
	t.Helper()
	p := dpopclient.Proof{Method: method, URL: htu, AccessToken: c.token}
	if change != nil {
		change(&p)
	}
	return c.dc.Proof(t, c.key, p)
}

// headers are the 2026-07-28 headers of method (and name) with the caller's token as DPoP and
// the given DPoP header values.
func (c *dpopCaller) headers(method, name string, proofs ...string) http.Header {
	h := modernHeaders(method, name)
	h.Set("Authorization", dpop.Scheme+" "+c.token)
	h[dpop.Header] = proofs
	return h
}

// dpopTransport makes the go-sdk client a DPoP client: every HTTP request it sends gets the
// caller's token with the DPoP scheme and a fresh library proof for its method and the public
// URL htu, with the newest server nonce; a use_dpop_nonce challenge is retried once with the
// nonce it carries (RFC 9449 §8-9).
type dpopTransport struct {
	t      *testing.T
	c      *dpopCaller
	htu    string
	base   http.RoundTripper
	mu     sync.Mutex
	nonce  string
	proofs []string // every proof sent, for the log check
	sends  []string // "METHOD status" of every request sent
}

func (d *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := d.send(req)
	if err != nil || res.StatusCode != http.StatusUnauthorized || res.Header.Get(dpop.NonceHeader) == "" || req.GetBody == nil {
		return res, err
	}
	res.Body.Close()
	if req.Body, err = req.GetBody(); err != nil {
		return nil, err
	}
	return d.send(req)
}

func (d *dpopTransport) send(req *http.Request) (*http.Response, error) {
	d.mu.Lock()
	nonce := d.nonce
	d.mu.Unlock()
	proof := d.c.proof(d.t, req.Method, d.htu, func(p *dpopclient.Proof) { p.Nonce = nonce })
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", dpop.Scheme+" "+d.c.token)
	r.Header.Set(dpop.Header, proof)
	res, err := d.base.RoundTrip(r)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.proofs = append(d.proofs, proof)
	if err == nil {
		d.sends = append(d.sends, req.Method+" "+strconv.Itoa(res.StatusCode))
	}
	if err == nil && res.Header.Get(dpop.NonceHeader) != "" {
		d.nonce = res.Header.Get(dpop.NonceHeader) // the newest nonce wins (RFC 9449 §8.2)
	}
	return res, err
}

// sent returns the proofs the transport sent.
func (d *dpopTransport) sent() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.proofs...)
}

// exchanges returns "METHOD status" of every request the transport sent.
func (d *dpopTransport) exchanges() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.sends...)
}

// newDPoPTransport is a dpopTransport over its own connection pool, closed when the test ends.
func newDPoPTransport(t *testing.T, c *dpopCaller) *dpopTransport {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	return &dpopTransport{t: t, c: c, htu: testResource, base: base}
}

// dpopChallenge returns the DPoP challenge among a response's WWW-Authenticate lines (the
// gateway writes each challenge on a line of its own), "" without one.
func dpopChallenge(h http.Header) string {
	for _, line := range h.Values("WWW-Authenticate") {
		if strings.HasPrefix(line, dpop.Scheme+" ") {
			return line
		}
	}
	return ""
}

// noSecretsIn fails the test when any of the secrets occurs in what a backend received.
func noSecretsIn(t *testing.T, got []mcptest.Exchange, secrets ...string) {
	t.Helper()
	for _, ex := range got {
		for name, values := range ex.Header {
			for _, v := range values {
				for _, s := range secrets {
					if strings.Contains(v, s) {
						t.Errorf("a backend received %s carrying the client's token or proof", name)
					}
				}
			}
		}
		for _, s := range secrets {
			if strings.Contains(string(ex.Body), s) {
				t.Error("a backend received the client's token or proof in a body")
			}
		}
	}
}
