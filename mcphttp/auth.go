package mcphttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// authReasons maps authz's failure reasons onto the metrics package's closed set.
var authReasons = map[string]string{
	authz.ReasonNoToken:           metrics.AuthMissing,
	authz.ReasonMalformed:         metrics.AuthMalformed,
	authz.ReasonAlgorithm:         metrics.AuthUnsupportedAlgorithm,
	authz.ReasonIssuer:            metrics.AuthUnknownIssuer,
	authz.ReasonUnknownKey:        metrics.AuthInvalidSignature,
	authz.ReasonSignature:         metrics.AuthInvalidSignature,
	authz.ReasonAudience:          metrics.AuthWrongAudience,
	authz.ReasonExpired:           metrics.AuthExpired,
	authz.ReasonNotYetValid:       metrics.AuthNotYetValid,
	authz.ReasonIssuedInFuture:    metrics.AuthNotYetValid,
	authz.ReasonClaims:            metrics.AuthClaims,
	authz.ReasonIssuerUnavailable: metrics.AuthIdPUnavailable,
	authz.ReasonDPoPProof:         metrics.AuthDPoPProof,
	authz.ReasonDPoPNonce:         metrics.AuthDPoPNonce,
	authz.ReasonDPoPReplay:        metrics.AuthDPoPReplay,
	authz.ReasonDPoPBinding:       metrics.AuthDPoPBinding,
}

// authenticate is stage authenticate: a verified principal from the access token, presented as
// Bearer or, with its proof of possession, as DPoP (RFC 9449, docs/dpop.md), or a 401 challenge
// that tells the client where the protected resource metadata is (docs/protocol.md §4). An
// identity provider or replay store that cannot be reached is 503, never an allow and never a
// 401 that would make a client drop a good token. A token minted for another tool set's
// endpoint is refused here too (checkAudience), so no path that authenticates, in either era,
// takes it.
func (s *Server) authenticate(x *request) error {
	if s.auth == nil {
		return authenticated(x)
	}
	if x.r.URL.RawQuery != "" && queryNamesToken(x.r.URL.RawQuery) {
		// RFC 6750 §2.3 query tokens leak into logs and histories; MCP allows the header only.
		s.metrics.AuthFailure(metrics.AuthMalformed)
		return x.challenge(http.StatusBadRequest, authz.Challenge{Error: "invalid_request",
			Description: "tokens are accepted only in the Authorization header"})
	}
	var tok string
	var err error
	switch h := x.r.Header.Values("Authorization"); len(h) {
	case 0:
		err = authz.ErrNoToken
	case 1:
		ctx := s.clients.authContext(x)
		if t, ok := DPoPToken(h[0]); ok {
			tok, err = t, s.authenticateDPoP(ctx, x, t)
			break
		}
		if tok, err = authz.BearerToken(h[0]); err == nil {
			x.caller.principal, err = s.auth.AuthenticateBearer(ctx, tok)
		}
	default:
		// Which copy a proxy or backend would read is not ours to guess: a malformed request
		// (RFC 6750 §3.1 invalid_request), like a token in the query.
		s.metrics.AuthFailure(metrics.AuthMalformed)
		return x.challenge(http.StatusBadRequest, authz.Challenge{Error: "invalid_request",
			Description: "exactly one Authorization header is accepted"})
	}
	if err == nil {
		if e := authenticated(x); e != nil {
			return e
		}
		// Kept only for backends configured for token exchange, which send it to the identity
		// provider; never forwarded to a backend, bound or not.
		x.caller.token = tok
		if len(s.setResources) > 0 {
			return s.checkAudience(x)
		}
		return nil
	}
	return s.authFailure(x, err)
}

// queryNamesToken reports whether a raw query has an access_token parameter as any query parser
// may read it: pairs split at '&' or ';', the name's valid percent-escapes decoded and '+' read
// as a space. URL.Query alone misses some: it drops a pair holding a ';' or an escape that does
// not decode ("x=1;access_token=…", "access_token=…%zz"), a pair another parser keeps, so such a
// token was neither refused nor noticed and the request went on with the header's. It does not
// allocate.
func queryNamesToken(q string) bool {
	for q != "" {
		var pair string
		if i := strings.IndexAny(q, "&;"); i >= 0 {
			pair, q = q[:i], q[i+1:]
		} else {
			pair, q = q, ""
		}
		name, _, _ := strings.Cut(pair, "=")
		if decodedIs(name, "access_token") {
			return true
		}
	}
	return false
}

// decodedIs reports whether s, its valid percent-escapes decoded and '+' read as a space, is want.
func decodedIs(s, want string) bool {
	j := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			c = ' '
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		}
		if j >= len(want) || want[j] != c {
			return false
		}
		j++
	}
	return j == len(want)
}

func ishex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// DPoPToken returns the token of an `Authorization: DPoP <token>` value (the scheme is
// case-insensitive, RFC 9110 §11.1), false for any other scheme: how stage authenticate reads
// the header, and so how anything that judges a request's credentials again must read it.
func DPoPToken(h string) (string, bool) {
	const scheme = dpop.Scheme + " "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	return strings.TrimLeft(h[len(scheme):], " "), true
}

// authenticateDPoP checks a DPoP-bound token and its proof against this request: its method and
// the public URL of the endpoint it came to (a tool set's own). A fresh server nonce, when
// authz has one, goes out on the response (RFC 9449 §8.2).
func (s *Server) authenticateDPoP(ctx context.Context, x *request, tok string) error {
	p, nonce, err := s.auth.AuthenticateDPoP(ctx, authz.DPoPRequest{Token: tok,
		Proofs: x.r.Header.Values(dpop.Header), Method: x.r.Method, URL: x.endpointURL()})
	if nonce != "" {
		x.client.w.Header().Set(dpop.NonceHeader, nonce)
	}
	if err == nil {
		x.caller.principal, x.caller.dpop = p, true
	}
	return err
}

// endpointURL is the normalised public URL of the endpoint the request came to, which a DPoP
// proof's htu must name: the tool set's, or the gateway's.
func (x *request) endpointURL() string {
	if x.set != nil && x.set.htu != "" {
		return x.set.htu
	}
	return x.s.htu
}

// msgProofBudget answers a caller over its budget of DPoP proofs remembered against replay
// (authz.ErrProofBudget), 429 with the time left of the budget's window (twice the proof
// window, opened by the caller's first proof) as Retry-After: trying sooner is refused again.
const msgProofBudget = "Too many DPoP proofs from this caller; retry later"

// authFailure answers a failed authentication: 503 when the identity provider or the replay
// store cannot answer, 429 for a caller over its proof budget (in server.draftErrors' shape),
// else 401 with the challenges.
func (s *Server) authFailure(x *request, err error) error {
	if e := s.clients.failed(x, err); e != nil {
		return e
	}
	s.metrics.AuthFailure(authReasons[authz.Reason(err)])
	switch {
	case errors.Is(err, authz.ErrIssuerUnavailable):
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUnavailable, "Authorization server unavailable; retry later"))
		e.Header = http.Header{"Retry-After": {issuerRetryAfter(err)}}
		e.Outcome = outcomeUnavailable
		return e
	case errors.Is(err, authz.ErrReplayUnavailable):
		s.log.LogAttrs(x.ctx, slog.LevelWarn, "DPoP replay store unavailable", slog.String("error", err.Error()))
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUnavailable, "Proof replay check unavailable; retry later"))
		e.Header = http.Header{"Retry-After": {"1"}}
		e.Outcome = outcomeUnavailable
		return e
	case errors.Is(err, authz.ErrProofBudget):
		return s.drafts.limited(authz.RetryAfter(err), msgProofBudget)
	}
	e := x.challenge(http.StatusUnauthorized, s.auth.Unauthorized(err)...)
	if n := authz.DPoPNonce(err); n != "" {
		e.Header.Set(dpop.NonceHeader, n)
	}
	return e
}

// issuerRetryAfter is the Retry-After for an unavailable issuer: when the gateway will ask it
// again, between 1 and 60 seconds, or 5 seconds when that is not known.
func issuerRetryAfter(err error) string {
	d := authz.RetryAfter(err)
	if d <= 0 {
		return "5"
	}
	return strconv.FormatInt(int64(min((d+time.Second-1)/time.Second, 60)), 10)
}

// challenge is the error of a 400, 401 or 403 with its WWW-Authenticate challenges, one header
// line each, in order. Every challenge names resource_metadata and a scope to ask for (MCP
// authorization): one that names none, decided by no rule (a token for another endpoint, a
// malformed request), gets scopes_supported, like a missing token's.
func (s *Server) challenge(status int, cs ...authz.Challenge) *Error {
	values := make([]string, len(cs))
	for i, c := range cs {
		if c.ResourceMetadata == "" {
			c.ResourceMetadata = s.auth.MetadataURL()
		}
		if len(c.Scopes) == 0 {
			c.Scopes = s.auth.ScopesSupported()
		}
		values[i] = c.Header()
	}
	// The message says what the first challenge says: a refusal written in-band (a message of a
	// 2025-03-26 batch) has no headers of its own, so the challenge is all the client reads.
	msg := "Unauthorized: a valid access token is required"
	switch {
	case status == http.StatusForbidden:
		msg = "Forbidden: insufficient scope"
		if len(cs[0].Scopes) > 0 {
			msg += "; this operation needs the scopes: " + strings.Join(cs[0].Scopes, " ")
		}
	case status == http.StatusBadRequest:
		msg = "Bad request: " + cs[0].Description
	case cs[0].Description != "":
		msg = "Unauthorized: " + cs[0].Description
	}
	return &Error{
		Status:  status,
		RPC:     jsonrpc.NewError(jsonrpc.CodeUnauthorized, msg),
		Header:  http.Header{"Www-Authenticate": values},
		Outcome: outcomeDenied,
	}
}

var authzKinds = map[upstreams.Kind]authz.Kind{
	upstreams.KindTool:     authz.KindTool,
	upstreams.KindPrompt:   authz.KindPrompt,
	upstreams.KindResource: authz.KindResource,
}

// authorize is stage authorize: may this caller use target? Policy is written in backend terms
// (backend name, backend-side tool name). Step-up is a 403 naming every scope the operation
// needs; a name no rule could grant is answered exactly like an unknown name.
func (x *request) authorize(kind upstreams.Kind, target upstreams.Target) error {
	s := x.s
	if s.auth == nil {
		return nil
	}
	d := s.auth.Decide(x.ctx, x.caller.principal, authzKinds[kind], target.Upstream, target.Name)
	x.route.decision = d
	switch d.Effect {
	case authz.Allow:
		if d.DPoPRequired && !x.caller.dpop {
			// The rule allows only a caller who proved possession of its token's key.
			s.metrics.AuthFailure(metrics.AuthDPoPBinding)
			return x.challenge(http.StatusUnauthorized, s.auth.DPoPChallenge(d))
		}
		s.metrics.AuthzDecision(metrics.DecisionAllow, target.Upstream)
		return nil
	case authz.StepUp:
		s.metrics.AuthzDecision(metrics.DecisionStepUp, target.Upstream)
		return x.challenge(http.StatusForbidden, s.auth.InScheme(s.auth.Forbidden(d), x.caller.dpop))
	}
	s.metrics.AuthzDecision(metrics.DecisionHidden, target.Upstream)
	return errUnknownName(kindNoun(kind))
}

// visibility returns the list filter for this caller and whether it depends on identity: lists
// show exactly what the caller may use, so tools/list and tools/call agree.
func (x *request) visibility() (func(upstreams.Kind, upstreams.Target) bool, bool) {
	s := x.s
	if s.auth == nil {
		return x.set.narrow(nil), false
	}
	p := x.caller.principal
	return x.set.narrow(func(k upstreams.Kind, t upstreams.Target) bool {
		return s.auth.Visible(p, authzKinds[k], t.Upstream, t.Name)
	}), true
}

// discoverable returns, for lists, the scopes a call of an item the caller may not use yet
// needs, when the policy rule deciding it opts in to listing it (listWithoutScopes); nil when
// no rule does, or without authentication. The endpoint's set narrows it as it narrows
// visibility.
func (x *request) discoverable() func(upstreams.Kind, upstreams.Target) []string {
	s := x.s
	if s.auth == nil || !s.auth.Policy().ListsWithoutScopes() {
		return nil
	}
	p, ts := x.caller.principal, x.set
	return func(k upstreams.Kind, t upstreams.Target) []string {
		if ts != nil && ts.include != nil && !ts.selects(k, t) {
			return nil
		}
		_, scopes := s.auth.Listing(p, authzKinds[k], t.Upstream, t.Name)
		return scopes
	}
}

// registerMetadata serves the RFC 9728 protected resource metadata at the path-specific and the
// root well-known URIs (docs/protocol.md §4), readable cross-origin so browser-based clients can discover
// the authorization server.
func (s *Server) registerMetadata(e *echo.Echo) {
	if s.auth == nil {
		return
	}
	doc := s.auth.Metadata()
	registerMetadataAt(e, s.log, doc, s.auth.MetadataURL(), rootMetadataURL(doc.Resource))
}

// registerMetadataAt serves doc, a protected resource metadata document, at the paths of urls.
// A function, not a method: Server is at its bound of methods.
func registerMetadataAt(e *echo.Echo, log *slog.Logger, doc authz.ProtectedResourceMetadata, urls ...string) {
	d, err := metadataDocument(doc)
	if err != nil {
		log.Error("protected resource metadata not served", "resource", doc.Resource, "error", err)
		return
	}
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil && u.Path != "" {
			d.register(e, u.Path)
		}
	}
}

func rootMetadataURL(resource string) string {
	u, err := authz.RootMetadataURL(resource)
	if err != nil {
		return ""
	}
	return u
}
