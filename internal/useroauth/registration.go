package useroauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Registration bounds.
const (
	// registrationPrefix keys a dynamically registered client in the shared store.
	registrationPrefix = "useroauth/client/"
	// metadataDocumentPath is where the Client ID Metadata Document is served, under Path.
	metadataDocumentPath = "/client-metadata.json"
)

// registered is a client the gateway registered dynamically, as the store keeps it (sealed).
type registered struct {
	ID      string    `json:"id"`
	Secret  string    `json:"secret,omitempty"`
	Expires time.Time `json:"exp,omitzero"`
}

// clientFor returns the gateway's client at the backend's authorization server, by the
// backend's registration. An error wraps ErrAuthServer.
func (s *Service) clientFor(ctx context.Context, st *backendState, d *discovered) (client, error) {
	switch st.cfg.registration() {
	case RegistrationMetadataDocument:
		if !d.as.MetadataDocuments {
			return client{}, fmt.Errorf("%w: %s: the authorization server does not accept client ID metadata documents",
				ErrAuthServer, st.cfg.Name)
		}
		return client{ID: s.metadataDocumentURL()}, nil
	case RegistrationDynamic:
		return s.dynamicClient(ctx, st, d)
	}
	return client{ID: st.cfg.ClientID, Secret: st.cfg.ClientSecret}, nil
}

// dynamicClient returns the client registered at the backend's authorization server (RFC 7591),
// registering it when no replica has yet: the first registration stored wins, and every replica
// then uses it, so the server sees one client per gateway, not one per replica or restart.
func (s *Service) dynamicClient(ctx context.Context, st *backendState, d *discovered) (client, error) {
	if d.as.RegistrationEndpoint == "" {
		return client{}, fmt.Errorf("%w: %s: the authorization server has no registration endpoint", ErrAuthServer, st.cfg.Name)
	}
	key := registrationPrefix + st.cfg.Name + "\x00" + d.as.Issuer + "\x00" + s.redirectURL()
	if c, ok := st.cachedClient(key, s.now()); ok {
		return c, nil
	}
	if raw, ok, err := s.deps.Store.Get(ctx, key); err != nil {
		return client{}, fmt.Errorf("%w: %s: the shared store: %w", ErrAuthServer, st.cfg.Name, err)
	} else if ok {
		if r, err := s.openRegistered(raw); err == nil && (r.Expires.IsZero() || s.now().Before(r.Expires)) {
			return st.keepClient(key, r), nil
		}
	}
	r, err := s.register(ctx, st, d)
	if err != nil {
		return client{}, err
	}
	sealed, err := s.sealRegistered(r)
	if err != nil {
		return client{}, err
	}
	var ttl time.Duration
	if !r.Expires.IsZero() {
		ttl = max(r.Expires.Sub(s.now()), time.Second)
	}
	stored, current, err := s.deps.Store.SetNX(ctx, key, sealed, ttl)
	if err != nil {
		return client{}, fmt.Errorf("%w: %s: the shared store: %w", ErrAuthServer, st.cfg.Name, err)
	}
	if !stored {
		// Another replica registered first: use its client, so every replica uses one.
		if other, err := s.openRegistered(current); err == nil {
			r = other
		}
	}
	return st.keepClient(key, r), nil
}

// register sends the registration request and reads the answer (RFC 7591 §3).
func (s *Service) register(ctx context.Context, st *backendState, d *discovered) (registered, error) {
	method := "client_secret_basic"
	if len(d.as.TokenAuthMethods) > 0 && !slices.Contains(d.as.TokenAuthMethods, method) {
		method = "none"
		if slices.Contains(d.as.TokenAuthMethods, "client_secret_post") {
			method = "client_secret_post"
		}
	}
	meta := map[string]any{
		"client_name":    s.cfg.ClientName,
		"redirect_uris":  []string{s.redirectURL()},
		"grant_types":    []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"},
		// A web application: the gateway runs on a server and keeps its secret there.
		"application_type":           "web",
		"token_endpoint_auth_method": method,
	}
	if len(d.scopes) > 0 {
		meta["scope"] = strings.Join(d.scopes, " ")
	}
	body, _ := json.Marshal(meta)
	rctx, cancel := context.WithTimeout(ctx, st.cfg.timeout())
	defer cancel()
	resp, status, err := s.postJSON(rctx, d.as.RegistrationEndpoint, body)
	if err != nil {
		return registered{}, err
	}
	var w struct {
		ClientID        string `json:"client_id"`
		ClientSecret    string `json:"client_secret"`
		SecretExpiresAt int64  `json:"client_secret_expires_at"`
		Error           string `json:"error"`
	}
	if json.Unmarshal(resp, &w) != nil || (status != http.StatusCreated && status != http.StatusOK) || w.ClientID == "" {
		return registered{}, fmt.Errorf("%w: %s: registration refused (HTTP %d, error %q)", ErrAuthServer, st.cfg.Name, status, errorCode(w.Error))
	}
	r := registered{ID: w.ClientID, Secret: w.ClientSecret}
	if w.SecretExpiresAt > 0 {
		r.Expires = time.Unix(w.SecretExpiresAt, 0)
	}
	s.log.Info("useroauth: registered at the authorization server", "upstream", st.cfg.Name, "auth_server", d.as.Issuer)
	return r, nil
}

// postJSON POSTs a JSON body and returns the bounded answer; redirects are not followed.
func (s *Service) postJSON(ctx context.Context, endpoint string, body []byte) ([]byte, int, error) {
	return s.send(ctx, endpoint, "application/json", string(body), nil)
}

func (s *Service) sealRegistered(r registered) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	tok, err := s.clients.Seal(b)
	return []byte(tok), err
}

func (s *Service) openRegistered(raw []byte) (registered, error) {
	var r registered
	pt, err := s.clients.Open(string(raw))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(pt, &r)
}

// metadataDocument serves the gateway's Client ID Metadata Document: its URL is its client id.
func (s *Service) metadataDocument(w http.ResponseWriter) {
	doc := map[string]any{
		"client_id":                  s.metadataDocumentURL(),
		"client_name":                s.cfg.ClientName,
		"redirect_uris":              []string{s.redirectURL()},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	b, _ := json.Marshal(doc)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(b)
}

func (s *Service) metadataDocumentURL() string {
	return s.deps.BaseURL + s.cfg.Path + metadataDocumentPath
}

func (s *Service) redirectURL() string { return s.deps.BaseURL + s.cfg.Path + "/callback" }
