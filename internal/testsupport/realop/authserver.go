package realop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"

	exstorage "github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// AuthServerOptions add to the example OP what it lacks as the authorization server of a
// third-party backend. The zitadel OP implements none of the three, so each is a small layer of
// this package around it, speaking the wire protocol of its RFC or draft; everything else (the
// login page, codes, PKCE, tokens, refresh, revocation) stays the OP's own.
type AuthServerOptions struct {
	// ISSResponse adds iss to every authorization response the OP redirects to a client, and
	// authorization_response_iss_parameter_supported to its metadata (RFC 9207).
	ISSResponse bool
	// Registration serves an RFC 7591 registration endpoint at /register (named in the
	// metadata as registration_endpoint): each registration adds a web client with JWT
	// access tokens, confidential unless it asks for token_endpoint_auth_method none.
	Registration bool
	// MetadataDocuments accepts an https or loopback http URL as client id: the OP fetches the
	// Client ID Metadata Document there, checks that its client_id is that URL, and serves a
	// public client with its redirect URIs (client_id_metadata_document_supported in the
	// metadata).
	MetadataDocuments bool
}

func (o AuthServerOptions) any() bool { return o.ISSResponse || o.Registration || o.MetadataDocuments }

// wrap returns the OP's handler with o's layers and the observer.
func (o AuthServerOptions) wrap(next http.Handler, issuer string, s *storage, observe func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if observe != nil {
			observe(r)
		}
		switch {
		case o.Registration && r.URL.Path == "/register":
			o.register(w, r, s)
		case o.any() && r.URL.Path == "/.well-known/openid-configuration":
			o.metadata(w, r, next, issuer)
		case o.ISSResponse:
			next.ServeHTTP(&issWriter{ResponseWriter: w, issuer: issuer}, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// metadata serves the OP's discovery document with the members o adds.
func (o AuthServerOptions) metadata(w http.ResponseWriter, r *http.Request, next http.Handler, issuer string) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	var doc map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	if o.ISSResponse {
		doc["authorization_response_iss_parameter_supported"] = true
	}
	if o.Registration {
		doc["registration_endpoint"] = strings.TrimSuffix(issuer, "/") + "/register"
	}
	if o.MetadataDocuments {
		doc["client_id_metadata_document_supported"] = true
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// issWriter adds iss to an authorization response: a redirect away from the OP carrying code
// or error (RFC 9207 §2).
type issWriter struct {
	http.ResponseWriter
	issuer string
}

func (w *issWriter) WriteHeader(code int) {
	if code/100 == 3 {
		if u, err := url.Parse(w.Header().Get("Location")); err == nil && u.IsAbs() && !strings.HasPrefix(u.String(), w.issuer) {
			q := u.Query()
			if q.Has("code") || q.Has("error") {
				q.Set("iss", w.issuer)
				u.RawQuery = q.Encode()
				w.Header().Set("Location", u.String())
			}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *issWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// register is the RFC 7591 §3 endpoint.
func (o AuthServerOptions) register(w http.ResponseWriter, r *http.Request, s *storage) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		ClientName   string   `json:"client_name"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil || len(req.RedirectURIs) == 0 ||
		slices.ContainsFunc(req.RedirectURIs, func(u string) bool { return !strings.HasPrefix(u, "http") }) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_client_metadata"}`)
		return
	}
	id, secret := "dcr-"+rand.Text(), rand.Text()
	public := req.AuthMethod == "none"
	if public {
		secret = ""
	}
	s.add(id, extraClient{client: exstorage.WebClient(id, secret, req.RedirectURIs...), secret: secret, jwt: true, public: public})
	resp := map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "client_name": req.ClientName,
		"token_endpoint_auth_method": map[bool]string{true: "none", false: "client_secret_basic"}[public],
		"grant_types":                []string{"authorization_code", "refresh_token"}, "client_secret_expires_at": 0}
	if !public {
		resp["client_secret"] = secret
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(resp)
}

// metadataDocumentClient serves a URL client id from its Client ID Metadata Document, when the
// provider accepts them; ok is false for any other client id.
func (s *storage) metadataDocumentClient(ctx context.Context, clientID string) (c op.Client, ok bool, err error) {
	u, perr := url.Parse(clientID)
	if !s.cimd || perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, false, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return nil, true, err
	}
	s.mu.Lock()
	fetch := s.fetch
	s.mu.Unlock()
	resp, err := fetch.Do(req)
	if err != nil {
		return nil, true, oidc.ErrInvalidClient().WithDescription("the client metadata document cannot be fetched")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var doc struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(bytes.TrimSpace(body), &doc) != nil {
		return nil, true, oidc.ErrInvalidClient().WithDescription("the client metadata document is not valid")
	}
	if doc.ClientID != clientID || len(doc.RedirectURIs) == 0 || doc.AuthMethod != "none" {
		return nil, true, oidc.ErrInvalidClient().WithDescription("the client metadata document does not describe this public client")
	}
	ec := extraClient{client: exstorage.WebClient(clientID, "", doc.RedirectURIs...), jwt: true, public: true}
	return ec.op(false), true, nil
}

// SetDocumentClient makes the provider fetch Client ID Metadata Documents with c (a client
// that trusts a test server's certificate, for example).
func (p *Provider) SetDocumentClient(c *http.Client) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.fetch = c
}

// publicClient is a client without a secret: PKCE alone protects its code.
type publicClient struct{ op.Client }

func (publicClient) AuthMethod() oidc.AuthMethod { return oidc.AuthMethodNone }
