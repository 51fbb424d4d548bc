package useroauth

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
)

// Registration bounds.
const (
	// registrationPrefix keys a dynamically registered client in the shared store.
	registrationPrefix = "useroauth/client/"
	// minClientLife is the least time a registered client's secret must have left for the
	// registration to count: one that expires sooner is a failed registration.
	minClientLife = time.Minute
	// metadataDocumentDir is where the Client ID Metadata Documents are served, under Path:
	// one per backend, <dir><backend>.json.
	metadataDocumentDir = "/client-metadata/"
	// callbackDir is where the authorization servers' responses arrive, under Path: one
	// redirect URI per backend, <dir><backend>.
	callbackDir = "/callback/"
)

// asClient is the gateway as an OAuth client of backends' authorization servers: its
// registrations, grants and revocations. It holds no per-user state.
type asClient struct {
	// http sends every request asClient makes, each carrying a credential (a code, a client
	// secret, a refresh token, a registration); it follows no redirect (egress.Credentialed).
	http    *http.Client
	store   store.Store  // dynamically registered clients, shared by the replicas
	clients *seal.Sealer // seals those clients' secrets in the store
	now     func() time.Time
	log     *slog.Logger
	// flight runs one dynamic registration at a time per registration key.
	flight singleflight.Group
	// beforeFlight, when set (tests only), runs after dynamicClient found no client and before
	// the flight.
	beforeFlight func()
	// beforeForget, when set (tests only), runs in forgetClient after it read the stored
	// registration and before it removes it: tests land another replica's registration there.
	beforeForget func()
	// clientName is the name the gateway registers under; pages is where its pages are
	// (BaseURL and Path), under which redirectURL and documentURL are.
	clientName, pages string
}

// redirectURL is the gateway's redirect URI for backend's round trips. Each backend has its
// own (RFC 9700 §4.4.2): an authorization server that sends the browser on to another
// backend's server, as the gateway's client there, gets the response delivered to that
// backend's callback, where the state of its own round trip is refused (mix-up), so the code
// the other server issued never reaches it, even from a server that sends no iss.
func (a *asClient) redirectURL(backend string) string { return a.pages + callbackDir + backend }

// documentURL is the URL of backend's Client ID Metadata Document, the gateway's client id at
// that backend's server: one per backend, since a document lists the redirect URIs its client
// may use, and one listing every backend's would let a server use another's.
func (a *asClient) documentURL(backend string) string {
	return a.pages + metadataDocumentDir + backend + ".json"
}

// registered is a client the gateway registered dynamically, as the store keeps it (sealed).
type registered struct {
	ID      string    `json:"id"`
	Secret  string    `json:"secret,omitempty"`
	Expires time.Time `json:"exp,omitzero"`
}

// clientFor returns the gateway's client at the backend's authorization server, by the
// backend's registration. An error wraps ErrAuthServer.
func (a *asClient) clientFor(ctx context.Context, st *backendState, d *discovered) (client, error) {
	switch st.cfg.registration() {
	case RegistrationMetadataDocument:
		if !d.as.MetadataDocuments {
			return client{}, fmt.Errorf("%w: %s: the authorization server does not accept client ID metadata documents",
				ErrAuthServer, st.cfg.Name)
		}
		return client{ID: a.documentURL(st.cfg.Name)}, nil
	case RegistrationDynamic:
		return a.dynamicClient(ctx, st, d)
	}
	if st.cfg.ClientSecret != "" && (st.cfg.AuthServer == "" || d.as.Issuer != st.cfg.AuthServer) {
		// The secret is registered at the configured server: one a backend's metadata named
		// instead must not receive it (Backend.Problems refuses the configuration already).
		return client{}, fmt.Errorf("%w: %s: the client secret is for the configured authServer, not for %q",
			ErrAuthServer, st.cfg.Name, shown(d.as.Issuer))
	}
	return client{ID: st.cfg.ClientID, Secret: st.cfg.ClientSecret}, nil
}

// dynamicClient returns the client registered at the backend's authorization server (RFC 7591),
// registering it when no replica has yet: the first registration stored wins, and every replica
// then uses it, so the server sees one client per gateway, not one per replica or restart.
// Within a replica one registration runs at a time (callers arriving meanwhile wait for its
// result), and a failed one is not tried again before its cooldown ends (registrationCooldown):
// callers get a retryable error saying when, and the server sees no request.
func (a *asClient) dynamicClient(ctx context.Context, st *backendState, d *discovered) (client, error) {
	if d.as.RegistrationEndpoint == "" {
		return client{}, fmt.Errorf("%w: %s: the authorization server has no registration endpoint", ErrAuthServer, st.cfg.Name)
	}
	key := a.registrationKey(st, d)
	if c, ok := st.cachedClient(key, a.now()); ok {
		return c, nil
	}
	if a.beforeFlight != nil {
		a.beforeFlight()
	}
	ch := a.flight.DoChan(key, func() (any, error) {
		// The first caller's cancellation must not fail the others waiting for this result.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*st.cfg.timeout())
		defer cancel()
		return a.loadOrRegister(fctx, st, d, key)
	})
	select {
	case <-ctx.Done():
		return client{}, fmt.Errorf("%w: %s: waiting for the registration: %w", ErrAuthServer, st.cfg.Name, ctx.Err())
	case res := <-ch:
		if res.Err != nil {
			return client{}, res.Err
		}
		return res.Val.(client), nil
	}
}

// loadOrRegister is dynamicClient's one flight: the client another replica stored, else a new
// registration unless the last one failed within its cooldown.
func (a *asClient) loadOrRegister(ctx context.Context, st *backendState, d *discovered, key string) (client, error) {
	if c, ok := st.cachedClient(key, a.now()); ok {
		return c, nil // a flight that ended just before this one began
	}
	raw, ok, err := a.store.Get(ctx, key)
	if err != nil {
		return client{}, fmt.Errorf("%w: %s: the shared store: %w", ErrAuthServer, st.cfg.Name, err)
	}
	if ok {
		if r, err := a.openRegistered(raw); err == nil && (r.Expires.IsZero() || a.now().Before(r.Expires)) {
			return st.keepClient(key, r), nil
		}
	} else {
		raw = nil
	}
	if err := st.coolingDown(key, a.now()); err != nil {
		return client{}, err
	}
	r, err := a.register(ctx, st, d)
	if err != nil {
		return client{}, st.registrationFailed(key, a.now(), err)
	}
	sealed, err := a.sealRegistered(r)
	if err != nil {
		return client{}, err
	}
	var ttl time.Duration
	if !r.Expires.IsZero() {
		ttl = max(r.Expires.Sub(a.now()), time.Second)
	}
	if raw != nil {
		// The stored registration is one no replica can use (sealed with a key since rotated
		// out, damaged, or past its expiry): removed while it is still the one read, so that
		// this client is stored for every replica. Kept, it would refuse every replica's store
		// below and each would register a client of its own, on every start.
		if _, err := a.store.Swap(ctx, key, raw, nil); err != nil {
			return client{}, fmt.Errorf("%w: %s: the shared store: %w", ErrAuthServer, st.cfg.Name, err)
		}
	}
	stored, current, err := a.store.SetNX(ctx, key, sealed, ttl)
	if err != nil {
		return client{}, fmt.Errorf("%w: %s: the shared store: %w", ErrAuthServer, st.cfg.Name, err)
	}
	if !stored {
		// Another replica registered first: use its client, so every replica uses one.
		if other, err := a.openRegistered(current); err == nil {
			r = other
		}
	}
	return st.keepClient(key, r), nil
}

// registrationKey keys the backend's dynamically registered client in the store: per backend,
// authorization server and callback URL.
func (a *asClient) registrationKey(st *backendState, d *discovered) string {
	return registrationPrefix + st.cfg.Name + "\x00" + d.as.Issuer + "\x00" + a.redirectURL(st.cfg.Name)
}

// forgetClient is the authorization server answering invalid_client to the gateway's dynamically
// registered client c: it no longer knows it (servers clean up registrations). Kept, the client
// would fail every refresh and connect until a restart; forgotten here and in the store (while
// the store still holds it), the next use registers anew. The users' tokens were issued to the
// old client: their records are dropped on their next use and they connect again. The store's
// value goes only while it is the one read (a compare-and-delete): another replica that met
// invalid_client first may have registered anew in between, and its client, which every
// replica then uses, stays.
func (a *asClient) forgetClient(ctx context.Context, st *backendState, d *discovered, c client) {
	if st.cfg.registration() != RegistrationDynamic {
		return // the operator's client (or the metadata document's): nothing to register
	}
	key := a.registrationKey(st, d)
	st.forgetClient(key, c.ID)
	if raw, ok, err := a.store.Get(ctx, key); err == nil && ok {
		if r, err := a.openRegistered(raw); err != nil || r.ID == c.ID {
			if a.beforeForget != nil {
				a.beforeForget()
			}
			_, _ = a.store.Swap(ctx, key, raw, nil)
		}
	}
	a.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: the authorization server no longer knows the gateway's registered client; it registers again",
		slog.String("upstream", st.cfg.Name), slog.String("auth_server", d.as.Issuer))
}

// register sends the registration request and reads the answer (RFC 7591 §3).
func (a *asClient) register(ctx context.Context, st *backendState, d *discovered) (registered, error) {
	method := "client_secret_basic"
	if len(d.as.TokenAuthMethods) > 0 && !slices.Contains(d.as.TokenAuthMethods, method) {
		method = "none"
		if slices.Contains(d.as.TokenAuthMethods, "client_secret_post") {
			method = "client_secret_post"
		}
	}
	meta := map[string]any{
		"client_name":    a.clientName,
		"redirect_uris":  []string{a.redirectURL(st.cfg.Name)},
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
	resp, status, err := a.postJSON(rctx, d.as.RegistrationEndpoint, body)
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
		if r.Expires.Before(a.now().Add(minClientLife)) {
			// Expired on arrival (or nearly): kept, it would be registered again on every
			// use; refused, it is a failure the cooldown spaces out.
			return registered{}, fmt.Errorf("%w: %s: the registration's client secret expires at once (client_secret_expires_at %d)",
				ErrAuthServer, st.cfg.Name, w.SecretExpiresAt)
		}
	}
	a.log.Info("useroauth: registered at the authorization server", "upstream", st.cfg.Name, "auth_server", d.as.Issuer)
	return r, nil
}

// postJSON POSTs a JSON body and returns the bounded answer; redirects are not followed.
func (a *asClient) postJSON(ctx context.Context, endpoint string, body []byte) ([]byte, int, error) {
	return a.send(ctx, endpoint, "application/json", string(body), nil)
}

func (a *asClient) sealRegistered(r registered) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	tok, err := a.clients.Seal(b)
	return []byte(tok), err
}

func (a *asClient) openRegistered(raw []byte) (registered, error) {
	var r registered
	pt, err := a.clients.Open(string(raw))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(pt, &r)
}

// metadataDocument serves the gateway's Client ID Metadata Document for backend: its URL is
// its client id at that backend's server, and it names that backend's redirect URI only.
func (a *asClient) metadataDocument(w http.ResponseWriter, backend string) {
	doc := map[string]any{
		"client_id":                  a.documentURL(backend),
		"client_name":                a.clientName,
		"redirect_uris":              []string{a.redirectURL(backend)},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	b, _ := json.Marshal(doc)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(b)
}
