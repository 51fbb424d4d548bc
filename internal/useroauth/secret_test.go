package useroauth

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/testsupport/oauthbackend"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// secretCatcher is an authorization server a compromised backend names in its resource
// metadata: valid metadata, an authorization endpoint that sends the browser straight back to
// the gateway's callback with a code (and its iss), and token and revocation endpoints that
// keep everything the gateway sends them.
type secretCatcher struct {
	srv *httptest.Server

	mu       sync.Mutex
	received []string // "path authorization-header body" of every token and revocation request
}

func startSecretCatcher(t *testing.T) *secretCatcher {
	c := &secretCatcher{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		base := c.srv.URL
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize",
			"token_endpoint": base + "/token", "revocation_endpoint": base + "/revoke", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "authorization_response_iss_parameter_supported": true})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		u, err := url.Parse(r.URL.Query().Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", http.StatusBadRequest)
			return
		}
		u.RawQuery = url.Values{"code": {"caught-code"}, "state": {r.URL.Query().Get("state")}, "iss": {c.srv.URL}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	})
	keep := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.received = append(c.received, r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(body))
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
	}
	mux.HandleFunc("/token", keep)
	mux.HandleFunc("/revoke", keep)
	c.srv = httptest.NewServer(mux)
	t.Cleanup(c.srv.Close)
	return c
}

// requests is what the catcher's token and revocation endpoints received.
func (c *secretCatcher) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.received...)
}

// secretFixture is the fixture with a second backend, "second", a static client with the
// fixture's client secret at the fixture's authorization server, whose resource metadata names
// catcher as its authorization server.
func secretFixture(t *testing.T, catcher *secretCatcher) *fixture {
	f := newFixture(t, fixtureOptions{moreOf: func(f *fixture) []Backend {
		second := oauthbackend.Start(t, "second", oauthbackend.Options{Issuer: f.as.Issuer(), AuthServers: []string{catcher.srv.URL},
			Scopes: []string{"openid", "offline_access", "notes"}})
		return []Backend{{Name: "second", URL: second.URL(), AuthServer: f.as.Issuer(), ClientID: asClientID, ClientSecret: asClientSecret}}
	}})
	f.as.AddJWTWebClient(asClientID, asClientSecret, f.redirect, f.base+"/connect/callback/second")
	return f
}

// TestStaticSecretNeedsAuthServer: a static client with a secret and no authServer is refused
// at configuration, naming authServer and why: the backend's own resource metadata would
// choose where the secret goes. A public client (no secret), or a secret with its server, is
// not.
func TestStaticSecretNeedsAuthServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		b    Backend
		want bool
	}{
		{"secret without authServer", Backend{Name: "x", ClientID: "c", ClientSecret: "s"}, true},
		{"secret without authServer, static named", Backend{Name: "x", Registration: RegistrationStatic, ClientID: "c", ClientSecret: "s"}, true},
		{"secret with authServer", Backend{Name: "x", ClientID: "c", ClientSecret: "s", AuthServer: "https://as.example"}, false},
		{"public client without authServer", Backend{Name: "x", ClientID: "c"}, false},
	} {
		var got []string
		for _, err := range tc.b.Problems() {
			var ce *configerr.Error
			if errors.As(err, &ce) && ce.Path == "authServer" {
				got = append(got, err.Error())
			}
		}
		if tc.want && (len(got) != 1 || !strings.Contains(got[0], "clientSecret") || !strings.Contains(got[0], "resource metadata")) {
			t.Errorf("%s: authServer problems %q; want one naming clientSecret and the resource metadata", tc.name, got)
		}
		if !tc.want && len(got) != 0 {
			t.Errorf("%s: authServer problems %q; want none", tc.name, got)
		}
	}
}

// TestSecretGoesToConfiguredServerOnly: a backend whose resource metadata names another
// authorization server than the configured one: the user connects at the configured server,
// and the other receives no request.
func TestSecretGoesToConfiguredServerOnly(t *testing.T) {
	t.Parallel()
	catcher := startSecretCatcher(t)
	f := secretFixture(t, catcher)
	alice := f.caller(realop.UserID)
	link, _, err := f.svc.Link(alice, "second")
	if err != nil {
		t.Fatal(err)
	}
	if status, body := f.browser(t).connect(link, f.idp.Username(), f.as.Username()); status != http.StatusOK {
		t.Fatalf("connect: %d\n%s", status, body)
	}
	if _, ok, err := f.svc.Token(t.Context(), "second", alice); !ok || err != nil {
		t.Fatalf("Token: ok %v, %v", ok, err)
	}
	if _, err := f.svc.Disconnect(t.Context(), alice, "second", "user"); err != nil {
		t.Fatal(err)
	}
	if got := catcher.requests(); len(got) != 0 {
		t.Errorf("the server the metadata names received %d requests: %q", len(got), got)
	}
}

// TestSecretNeverToServerMetadataNames: a static client whose authServer is not configured
// (a Backend that escaped validation) gets no secret sent to the server the backend's metadata
// names, at the code exchange or anywhere: the connect fails before the browser goes there;
// and a discovered issuer other than the configured authServer gets no client with a secret.
func TestSecretNeverToServerMetadataNames(t *testing.T) {
	t.Parallel()
	catcher := startSecretCatcher(t)
	f := secretFixture(t, catcher)
	st := f.svc.backends["second"]
	st.cfg.AuthServer, st.disc.b.AuthServer = "", ""
	alice := f.caller(realop.UserID)
	link, _, err := f.svc.Link(alice, "second")
	if err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	status, body := b.openLink(link, f.idp.Username())
	if status != http.StatusOK || !strings.Contains(body, `id="continue"`) {
		t.Fatalf("connect page: %d\n%s", status, body)
	}
	status, _, body = b.post(link, url.Values{"csrf": {csrfOf(t, body)}})
	if status == http.StatusOK {
		t.Errorf("the connect went through: %d\n%s", status, body)
	}
	for _, r := range catcher.requests() {
		if strings.Contains(r, asClientSecret) || strings.Contains(r, "Basic ") {
			t.Errorf("the server the metadata names received the client secret: %q", r)
		}
	}
	if got := catcher.requests(); len(got) != 0 {
		t.Errorf("the server the metadata names received %d token or revocation requests: %q", len(got), got)
	}
	if _, ok, err := f.svc.Token(t.Context(), "second", alice); ok || err != nil {
		t.Errorf("Token: ok %v, %v; want none", ok, err)
	}

	// The configured server's client, asked for another issuer's metadata.
	own := f.svc.backends[backendName]
	other := &discovered{as: asMetadata{Issuer: catcher.srv.URL, TokenEndpoint: catcher.srv.URL + "/token"}}
	if c, err := f.svc.oauth.clientFor(t.Context(), own, other); !errors.Is(err, ErrAuthServer) || c.Secret != "" {
		t.Errorf("clientFor another issuer: %+v, %v; want ErrAuthServer and no secret", c, err)
	}
}
