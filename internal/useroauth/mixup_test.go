package useroauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// hostileAS is the authorization server of a second per-user backend, run by an attacker: it
// serves valid metadata, and sends every browser that comes to its authorization endpoint on
// to another authorization server (the victim's), as the gateway's client there, with the
// gateway's own state and PKCE challenge (the mix-up attack of RFC 9700 §4.4). Its token
// endpoint keeps any code it receives.
type hostileAS struct {
	srv *httptest.Server
	// victimAuthorize is the other server's authorization endpoint, victimClient and
	// victimRedirect the gateway's client and redirect URI there (all public knowledge).
	victimAuthorize, victimClient, victimRedirect atomic.Pointer[string]
	// codes counts the codes its token endpoint received, refreshes the refresh tokens.
	codes, refreshes atomic.Int64
}

func startHostileAS(t *testing.T) *hostileAS {
	h := &hostileAS{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		base := h.srv.URL
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize",
			"token_endpoint": base + "/token", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "client_id_metadata_document_supported": true})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		u, _ := url.Parse(*h.victimAuthorize.Load())
		q := r.URL.Query() // the gateway's state and code_challenge, kept
		q.Set("client_id", *h.victimClient.Load())
		q.Set("redirect_uri", *h.victimRedirect.Load())
		q.Set("scope", "openid offline_access notes")
		q.Del("resource")
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if r.ParseForm() == nil && r.PostForm.Get("code") != "" {
			h.codes.Add(1)
		}
		if r.PostForm.Get("refresh_token") != "" {
			h.refreshes.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
	})
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

// TestMixUpAcrossBackends: a backend's authorization server that sends the user on to another
// backend's server (which sends no RFC 9207 iss) never receives the code that server issued.
// Each backend has its own redirect URI, and a response arriving at one backend's callback with
// the state of another's round trip is refused before its code goes anywhere.
func TestMixUpAcrossBackends(t *testing.T) {
	t.Parallel()
	evil := startHostileAS(t)
	f := newFixture(t, fixtureOptions{more: []Backend{{Name: "other", URL: evil.srv.URL + "/mcp", AuthServer: evil.srv.URL,
		Scopes: []string{"notes"}, ClientID: "gateway-at-other", ClientSecret: "other-secret"}}})
	var meta struct {
		AuthorizationEndpoint string `json:"authorization_endpoint"`
	}
	resp, err := http.Get(strings.TrimSuffix(f.as.Issuer(), "/") + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&meta)
	_ = resp.Body.Close()
	client := asClientID
	evil.victimAuthorize.Store(&meta.AuthorizationEndpoint)
	evil.victimClient.Store(&client)
	evil.victimRedirect.Store(&f.redirect)

	alice := f.caller(realop.UserID)
	t.Run("a server sending the browser on to another's", func(t *testing.T) { sentOn(t, f, evil) })
	t.Run("a response at another backend's callback", func(t *testing.T) {
		b := f.browser(t)
		genuine := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		before := f.tokenRequests.Load()
		for _, path := range []string{"/connect/callback/other", "/connect/callback"} {
			moved := *genuine
			moved.Path = path
			if status, _, body := b.get(moved.String()); status != http.StatusBadRequest {
				t.Errorf("%s: %d\n%s", path, status, body)
			}
		}
		if f.tokenRequests.Load() != before {
			t.Errorf("the moved responses made %d token requests", f.tokenRequests.Load()-before)
		}
		f.noToken(t, alice)
		// Refused before its state was used: the genuine response still connects.
		if status, _, body := b.get(genuine.String()); status != http.StatusOK {
			t.Fatalf("the genuine callback: %d\n%s", status, body)
		}
		f.mustToken(t, alice)
	})
}

func sentOn(t *testing.T, f *fixture, evil *hostileAS) {
	alice := f.caller(realop.UserID)
	u, _, err := f.svc.Link(alice, "other")
	if err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	before := f.tokenRequests.Load()
	status, body := b.connect(u, f.idp.Username(), f.as.Username())
	if n := evil.codes.Load(); n != 0 {
		t.Errorf("the other backend's authorization server received %d codes issued by the victim's server", n)
	}
	if status != http.StatusBadRequest || !strings.Contains(body, "does not come from the authorization server") {
		t.Errorf("the mixed-up callback: %d\n%s", status, body)
	}
	if f.tokenRequests.Load() != before {
		t.Errorf("the mixed-up callback made %d token requests", f.tokenRequests.Load()-before)
	}
	if f.obs.count("consent failed "+FailIssMismatch) == 0 {
		t.Errorf("no failed consent counted as %s: %v", FailIssMismatch, f.obs.counts)
	}
	f.noToken(t, alice)
	if _, ok, err := f.svc.Token(t.Context(), "other", alice); ok || err != nil {
		t.Errorf("a token for the other backend: ok %v, %v", ok, err)
	}
}

// TestMetadataDocumentPerBackend: the Client ID Metadata Document of a backend names that
// backend's redirect URI only (a document naming every backend's would let one backend's server
// have another's responses delivered to its own callback), and only backends registered by
// document have one.
func TestMetadataDocumentPerBackend(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{registration: RegistrationMetadataDocument,
		authServer: realop.AuthServerOptions{MetadataDocuments: true, ISSResponse: true},
		more:       []Backend{{Name: "other", URL: "https://other.example/mcp", ClientID: "gateway-at-other"}}})
	f.as.SetDocumentClient(f.srv.Client())
	b := f.browser(t)
	status, _, body := b.get(f.srv.URL + "/connect/client-metadata/" + backendName + ".json")
	var doc struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &doc) != nil {
		t.Fatalf("the document: %d\n%s", status, body)
	}
	wantID, wantRedirect := f.srv.URL+"/connect/client-metadata/"+backendName+".json", f.srv.URL+"/connect/callback/"+backendName
	if doc.ClientID != wantID || len(doc.RedirectURIs) != 1 || doc.RedirectURIs[0] != wantRedirect {
		t.Errorf("the document: client_id %q, redirect_uris %q; want %q, [%q]", doc.ClientID, doc.RedirectURIs, wantID, wantRedirect)
	}
	for _, path := range []string{"/connect/client-metadata/other.json", "/connect/client-metadata.json", "/connect/client-metadata/nothing.json",
		"/connect/client-metadata/" + backendName, "/connect/client-metadata/" + backendName + ".json.json",
		"/connect/client-metadata/" + backendName + "/x.json", "/connect/" + backendName + ".json"} {
		if status, _, _ := b.get(f.srv.URL + path); status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, status)
		}
	}
	// The document's client connects at the server that fetches it.
	alice := f.caller(realop.UserID)
	if status, body := b.connect(f.link(t, alice), f.idp.Username(), f.as.Username()); status != http.StatusOK {
		t.Fatalf("connect: %d\n%s", status, body)
	}
	f.mustToken(t, alice)
}

// TestRefreshTokenStaysWithItsServer: a backend whose resource metadata comes to name another
// authorization server (its operator moved, or it was compromised) never has the gateway send
// that server a refresh token the first one issued, even when the gateway's client id is the
// same at both (a Client ID Metadata Document: a static client with a secret has its server
// configured, so the metadata does not choose it): the record, issued by another server, is
// removed, and the user connects again.
func TestRefreshTokenStaysWithItsServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{registration: RegistrationMetadataDocument,
		authServer: realop.AuthServerOptions{MetadataDocuments: true}})
	f.as.SetDocumentClient(f.srv.Client())
	alice, _ := connected(t, f)
	other := startHostileAS(t)
	f.asLink.resourceAS.Store(&other.srv.URL)
	f.clock.Advance(24 * time.Hour) // the token expired, and the metadata is read again
	_, ok, err := f.svc.Token(t.Context(), backendName, alice)
	if n := other.refreshes.Load(); n != 0 {
		t.Errorf("the other authorization server received %d refresh tokens the first one issued", n)
	}
	if ok || err != nil {
		t.Errorf("Token: ok %v, %v; want consent", ok, err)
	}
	expectContains(t, "the log", f.log.String(), "useroauth: token record removed")
}

// TestTwoBackendsOneServer: one user connects two backends whose authorization server is the
// same (one client there, a redirect URI each): each backend has its own record, for its own
// resource (RFC 8707), the tokens differ, and disconnecting one leaves the other.
func TestTwoBackendsOneServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{moreOf: func(f *fixture) []Backend {
		return []Backend{{Name: "second", URL: f.backend.URL(), Resource: f.backend.URL() + "/second", AuthServer: f.as.Issuer(),
			Scopes: []string{"openid", "offline_access", "notes"}, ClientID: asClientID, ClientSecret: asClientSecret}}
	}})
	f.as.AddJWTWebClient(asClientID, asClientSecret, f.redirect, f.base+"/connect/callback/second")
	alice := f.caller(realop.UserID)
	b := f.browser(t)
	if status, body := b.connect(f.link(t, alice), f.idp.Username(), f.as.Username()); status != http.StatusOK {
		t.Fatalf("connect %s: %d\n%s", backendName, status, body)
	}
	u, _, err := f.svc.Link(alice, "second")
	if err != nil {
		t.Fatal(err)
	}
	if status, body := b.connect(u, f.idp.Username(), f.as.Username()); status != http.StatusOK {
		t.Fatalf("connect second: %d\n%s", status, body)
	}
	first, second := f.mustToken(t, alice), ""
	if tok, ok, err := f.svc.Token(t.Context(), "second", alice); ok && err == nil {
		second = tok
	}
	if second == "" || second == first {
		t.Fatalf("the second backend's token: %q (the first's: same %v)", second, second == first)
	}
	recs, err := f.svc.Vault().Subject(t.Context(), alice)
	if err != nil || len(recs) != 2 || recs[backendName].Resource != f.backend.URL() || recs["second"].Resource != f.backend.URL()+"/second" {
		t.Fatalf("records: %v, %v", len(recs), err)
	}
	if _, err := f.svc.Disconnect(t.Context(), alice, "second", "user"); err != nil {
		t.Fatal(err)
	}
	if f.mustToken(t, alice) != first {
		t.Error("disconnecting the second backend changed the first's token")
	}
}
