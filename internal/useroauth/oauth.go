package useroauth

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/egress"
	"github.com/mcp-gateway/gateway/internal/expiresin"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// maxTokenResponseBytes bounds a token endpoint's answer.
const maxTokenResponseBytes = 64 << 10

// client is the gateway's client at one authorization server: its id and, for a confidential
// client, its secret.
type client struct {
	ID, Secret string
}

// tokenResponse is a successful token endpoint answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string
	RefreshToken string
	// Expiry is when the access token expires, zero when the server did not say.
	Expiry time.Time
	Scope  string
}

// oauthError is an authorization server's refusal (RFC 6749 §5.2): Code is the error code, kept
// only when it looks like one, never the description (which may echo what was sent).
type oauthError struct {
	Status int
	Code   string
}

func (e *oauthError) Error() string {
	return fmt.Sprintf("the authorization server answered HTTP %d, error %q", e.Status, e.Code)
}

// grantRefused reports whether err is the server refusing the grant itself, for good: a code or
// refresh token that is expired, revoked or was never its own (invalid_grant), and any other
// refusal of its own (RFC 6749 §5.2 unauthorized_client, unsupported_grant_type,
// invalid_request; servers that send invalid_token, or an error member in a 200 answer, for an
// expired refresh token), which asking again would only repeat. Not a refusal: the server
// failing (serverFailure: HTTP 5xx or 429 whatever the body, temporarily_unavailable,
// server_error), nor refusing the gateway as its client (invalid_client: the gateway's
// configuration or registration, not the user's grant). A refusal is an answer RFC 6749 §5.2
// describes: HTTP 400, 401 or 403 (or 200) with an error code; a redirect, a 404 or an answer
// without a readable code is a server moved or misrouted, which must not end every user's grant.
func grantRefused(err error) bool {
	var oe *oauthError
	if !errors.As(err, &oe) || serverFailure(err) || oe.Code == "invalid" || oe.Code == "invalid_client" {
		return false
	}
	switch oe.Status {
	case http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
		return true
	}
	return false
}

// unusableError is a token response whose tokens the gateway cannot send: of a type other than
// Bearer (DPoP-bound tokens need proofs the gateway does not make), or that a header cannot
// carry (tokenChars). The server issued them, so the caller revokes them (tokens) and tells the
// user why rather than to try again. It is an answer about one caller's grant (a JWT listing
// one user's many groups outgrows the bound), not the server failing: it begins no cooldown.
type unusableError struct {
	// TokenType is the answer's token_type, kept to the OAuth charset.
	TokenType          string
	access, refreshTok string
	// unsendable: the tokens are Bearer (or would be), but a header cannot carry them.
	unsendable bool
	// oversize: the successful answer was over maxTokenResponseBytes, so its tokens are not
	// known (nothing of the answer is revoked). What makes it big may be one caller's (an
	// id_token with a user's huge claims); oversizeAnswered tells when it is the server's.
	oversize bool
}

func (e *unusableError) Error() string {
	return "the authorization server issued tokens " + e.Reason()
}

// Reason says what is wrong with the tokens, for a page and a log line; it holds no token.
func (e *unusableError) Reason() string {
	if e.oversize {
		return fmt.Sprintf("in an answer over %d bytes, which the gateway does not read", maxTokenResponseBytes)
	}
	if e.unsendable {
		return fmt.Sprintf("the gateway cannot use: longer than %d bytes, or with characters a header cannot carry", maxTokenBytes)
	}
	return "of type " + e.TokenType + ", which the gateway cannot use: it sends Bearer tokens only"
}

// tokens is what to revoke: the tokens the answer carried, as issued by d's server to c; nil
// when they are not known (oversize).
func (e *unusableError) tokens(d *discovered, c client) *vault.Token {
	if e.oversize {
		return nil
	}
	return &vault.Token{AuthServer: d.as.Issuer, ClientID: c.ID, AccessToken: e.access, RefreshToken: e.refreshTok}
}

// invalidClient reports whether err is the server refusing the gateway as its client (RFC 6749
// §5.2 invalid_client): unknown, or its authentication failed.
func invalidClient(err error) bool {
	var oe *oauthError
	return errors.As(err, &oe) && oe.Code == "invalid_client"
}

// tokenRequest POSTs form (a grant) to the token endpoint with the client's authentication and
// reads the answer. A server that cannot be reached, hangs past ctx, or answers garbage is an
// error wrapping ErrAuthServer; a refusal is an *oauthError.
func (a *asClient) tokenRequest(ctx context.Context, as *asMetadata, c client, form url.Values) (*tokenResponse, error) {
	body, status, err := a.post(ctx, as.TokenEndpoint, as.TokenAuthMethods, c, form)
	switch {
	case errors.Is(err, errOversize) && status == http.StatusOK:
		// Tokens were issued for this grant, in an answer made big perhaps by one caller's
		// claims: that caller's, unless the server does it to everyone (oversizeAnswered).
		return nil, &unusableError{TokenType: "unknown", oversize: true}
	case errors.Is(err, errOversize) && (status >= 500 || status == http.StatusTooManyRequests):
		// The server failing, whatever the body (serverFailure).
		return nil, &oauthError{Status: status, Code: "invalid"}
	case err != nil:
		return nil, err
	}
	var w struct {
		AccessToken  string          `json:"access_token"`
		TokenType    string          `json:"token_type"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
		RefreshToken string          `json:"refresh_token"`
		Scope        json.RawMessage `json:"scope"`
		Error        json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &w) != nil {
		return nil, fmt.Errorf("%w: the token endpoint answered HTTP %d without a JSON object", ErrAuthServer, status)
	}
	if code, refused := errorMember(w.Error); status != http.StatusOK || refused {
		return nil, &oauthError{Status: status, Code: errorCode(code)}
	}
	sendable := tokenChars(w.AccessToken) && (w.RefreshToken == "" || tokenChars(w.RefreshToken))
	switch {
	case w.AccessToken == "":
		return nil, fmt.Errorf("%w: the token response lacks a Bearer access_token", ErrAuthServer)
	case !sendable:
		// Issued, for this grant: an answer about one caller's tokens, not the server failing.
		return nil, &unusableError{TokenType: errorCode(cmp.Or(w.TokenType, "none")), access: w.AccessToken, refreshTok: w.RefreshToken,
			unsendable: true}
	case !strings.EqualFold(w.TokenType, "Bearer"):
		// DPoP or other bound tokens would need proofs the gateway does not make.
		return nil, &unusableError{TokenType: errorCode(cmp.Or(w.TokenType, "none")), access: w.AccessToken, refreshTok: w.RefreshToken}
	}
	tr := &tokenResponse{AccessToken: w.AccessToken, RefreshToken: w.RefreshToken, Scope: scopeOf(w.Scope)}
	if life, ok := expiresin.Parse(w.ExpiresIn); ok {
		tr.Expiry = a.now().Add(life)
	}
	return tr, nil
}

// errorMember reads a token answer's error member: refused is true when it says something, a
// code or any other value; null, "" and false say nothing (serializers that write every field
// of a success answer send them beside the tokens, which are then issued and must be kept, or a
// refresh token the server rotated is lost with the grant).
func errorMember(raw json.RawMessage) (code string, refused bool) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "false" {
		return "", false
	}
	if json.Unmarshal(raw, &code) == nil && code == "" {
		return "", false
	}
	return code, true
}

// tokenExpiry is when a record holding tr's access token and refreshToken takes it to expire:
// what the server said; when it did not, DefaultTokenLifetime from now if the record can
// refresh it, else never (zero: used until the backend refuses it, as servers issuing tokens
// that do not expire, without refresh tokens, mean it).
func tokenExpiry(tr *tokenResponse, refreshToken string, now time.Time) time.Time {
	if tr.Expiry.IsZero() && refreshToken != "" {
		return now.Add(DefaultTokenLifetime)
	}
	return tr.Expiry
}

// scopeOf is a token answer's scope: a string, or a list of strings as some servers send it;
// empty (the scope asked, RFC 6749 §5.1) for anything else.
func scopeOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, " ")
	}
	return ""
}

// revoke asks the server to revoke token (RFC 7009), best effort: a server without a revocation
// endpoint, or one that fails, is reported and the caller goes on.
func (a *asClient) revoke(ctx context.Context, as *asMetadata, c client, token, hint string) error {
	if as.RevocationEndpoint == "" {
		return errNoRevocation
	}
	methods := as.RevocationAuthMethods
	if len(methods) == 0 {
		methods = as.TokenAuthMethods
	}
	_, status, err := a.post(ctx, as.RevocationEndpoint, methods, c, url.Values{"token": {token}, "token_type_hint": {hint}})
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("the revocation endpoint answered HTTP %d", status)
	}
	return nil
}

// post sends form to endpoint authenticated as c: client_secret_basic, or client_secret_post
// when the server names only that, for a confidential client; the client id in the form for a
// public one. It returns the bounded body and the status; redirects are not followed.
func (a *asClient) post(ctx context.Context, endpoint string, methods []string, c client, form url.Values) ([]byte, int, error) {
	basic := c.Secret != "" && (!slices.Contains(methods, "client_secret_post") || slices.Contains(methods, "client_secret_basic"))
	switch {
	case c.Secret == "":
		form.Set("client_id", c.ID)
	case !basic:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	}
	var auth *client
	if basic {
		auth = &c
	}
	return a.send(ctx, endpoint, "application/x-www-form-urlencoded", form.Encode(), auth)
}

// send POSTs body to endpoint, with HTTP Basic authentication as auth when it is set, and
// returns the bounded answer and its status; redirects are not followed (asClient.http), and
// one is an error wrapping egress.ErrRedirected.
func (a *asClient) send(ctx context.Context, endpoint, contentType, body string, auth *client) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: the endpoint URL does not make a request", ErrAuthServer)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	if auth != nil {
		// RFC 6749 §2.3.1: id and secret are form-encoded before Basic encoding.
		req.SetBasicAuth(url.QueryEscape(auth.ID), url.QueryEscape(auth.Secret))
	}
	resp, err := a.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("%w: no answer in time", ErrAuthServer)
		}
		if r := (*egress.RedirectedError)(nil); errors.As(err, &r) {
			// Its status only: the client's error names the target, query and all.
			return nil, 0, fmt.Errorf("%w: %w", ErrAuthServer, r)
		}
		return nil, 0, fmt.Errorf("%w: %s", ErrAuthServer, unreachable(err))
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponseBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: the answer is unreadable", ErrAuthServer)
	}
	if len(out) > maxTokenResponseBytes {
		// With its status, for the token endpoint to tell whose the size is (tokenRequest).
		return nil, resp.StatusCode, fmt.Errorf("%w: %w", ErrAuthServer, errOversize)
	}
	return out, resp.StatusCode, nil
}

// errOversize is an answer over maxTokenResponseBytes (send).
var errOversize = fmt.Errorf("the answer is over %d bytes", maxTokenResponseBytes)

// errorCode keeps an OAuth error code only when it looks like one: letters, digits and _ . : -
// (every code RFC 6749 and its extensions define), at most 64, so a hostile server cannot put
// text into logs or pages, not even the spaces of a sentence that would read as the gateway's.
func errorCode(s string) string {
	if s == "" || len(s) > 64 || strings.IndexFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("_.:-", r)
	}) >= 0 {
		return "invalid"
	}
	return s
}

// maxTokenBytes bounds a token the gateway keeps and sends.
const maxTokenBytes = 16 << 10

// tokenChars reports whether a token is one the gateway can send in a header: visible ASCII
// (RFC 6750 §2.1 b64token and what servers use beyond it), no space or control character.
func tokenChars(t string) bool {
	return len(t) <= maxTokenBytes && strings.IndexFunc(t, func(r rune) bool { return r <= 0x20 || r >= 0x7f }) < 0
}
