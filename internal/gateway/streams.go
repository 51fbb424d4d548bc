package gateway

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// The long-lived streams a configuration serves and who may keep them across a reload
// (docs/deploy.md, "Changing the configuration"). A pre-2026 client's GET stream runs on the
// configuration it was opened on until that one's server.shutdownTimeout, as a call in flight
// does. When the reload changed whom that stream may be served to, that is not good enough: a
// stream opened anonymously keeps receiving notifications after authentication was turned on,
// one opened with a token the new issuers' settings refuse (an audience taken away) after they
// changed, and one opened on a tool set's endpoint after the set was removed or its audience
// changed. At the reload each stream is judged as its opening request (its path, origin and
// credentials) would be now: when the new configuration would refuse it, or when
// authentication was turned off or on (the identity it runs under is one the new configuration
// does not make), it ends at once, cleanly, and its client opens it again under the new rules. A
// stream the new configuration still accepts runs on, and from then on filters what it relays by
// the new configuration's policy and tool set for its caller as the new configuration
// authenticates it (mcphttp.StreamPolicy), not by the replaced one's. A subscriptions/listen
// ends at every reload anyway (EndListens).

// errAuthReplaced ends a stream whose opening request the configuration that replaced its own
// would refuse.
var errAuthReplaced = errors.New("the configuration that replaced this stream's no longer accepts its opening request")

// streamSet are the GET streams open on one component set.
type streamSet struct {
	mu   sync.Mutex
	open map[*openStream]struct{}
	// accepts is set when the set is replaced: a stream whose opening request it refuses
	// ends, also one registered later (admitted just before the replacement).
	accepts acceptance
}

// acceptance judges a stream by its opening request, within ctx: whether the set replacing the
// stream's accepts it, and the caller it authenticates it as (nil without authentication).
type acceptance struct {
	accepts func(ctx context.Context, r *http.Request) (ok bool, p *authz.Principal)
	timeout time.Duration // the bound of one judgement, or of all those made at once
	// srv is the endpoint of the set replacing the stream's: an accepted stream filters by its
	// policy from then on (mcphttp.StreamPolicy). Nil: the stream keeps its own.
	srv *mcphttp.Server
}

// judge reports whether a accepts r, given the time a's timeout allows, and no longer than r
// lasts (the drain on SIGTERM cuts it).
func (a acceptance) judge(r *http.Request) (bool, *authz.Principal) {
	ctx, cancel := context.WithTimeout(r.Context(), a.timeout)
	defer cancel()
	return a.accepts(ctx, r)
}

// keep lets st run on, filtering by the policy of a's endpoint for p from now on.
func (a acceptance) keep(st *openStream, p *authz.Principal) {
	if a.srv != nil {
		st.policy.Follow(a.srv, st.r, p)
	}
}

// openStream is one GET stream: its opening request (which net/http keeps for as long as the
// stream lasts anyway, and whose header no handler changes; never logged), what ends it, and the
// policy it filters by.
type openStream struct {
	r      *http.Request
	end    context.CancelCauseFunc
	policy *mcphttp.StreamPolicy
}

// isStream reports whether r opens a GET stream: a GET for a session that accepts an event
// stream, which is what the pre-2026 edge serves one to. Anything else is no stream: a browser's
// GET of the gateway's pages (an approval, a sign-in's callback) accepts "*/*", and tracked, it
// would be cancelled at the next reload, its sign-in's token request with it.
func isStream(r *http.Request) bool {
	return r.Method == http.MethodGet && len(r.Header.Values(mcpheader.SessionID)) > 0 &&
		mcphttp.AcceptsEventStream(r.Header.Values("Accept"))
}

// track returns r with a context the set can end, and the func that forgets it once served.
func (s *streamSet) track(r *http.Request) (*http.Request, func()) {
	ctx, end := context.WithCancelCause(r.Context())
	st := &openStream{r: r, end: end, policy: &mcphttp.StreamPolicy{}}
	ctx = mcphttp.WithStreamPolicy(ctx, st.policy)
	s.mu.Lock()
	if s.open == nil {
		s.open = map[*openStream]struct{}{}
	}
	s.open[st] = struct{}{}
	accepts := s.accepts
	s.mu.Unlock()
	if accepts.accepts != nil {
		if ok, p := accepts.judge(r); ok {
			accepts.keep(st, p)
		} else {
			end(errAuthReplaced)
		}
	}
	return r.WithContext(ctx), func() {
		s.mu.Lock()
		delete(s.open, st)
		s.mu.Unlock()
		end(nil)
	}
}

// judge ends the streams open now, and those registered later, whose opening request a
// refuses, and returns how many of those open now it ended. Those open now share one timeout,
// and the judging ends with ctx, the process's: it runs under the reload lock, and a SIGTERM
// must start the drain at once, not after auth.fetchTimeout. A stream not judged by then is
// refused, as on the timeout (fail closed; the drain ends it anyway).
func (s *streamSet) judge(ctx context.Context, a acceptance) int {
	s.mu.Lock()
	s.accepts = a
	open := make([]*openStream, 0, len(s.open))
	for st := range s.open {
		open = append(open, st)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	n := 0
	for _, st := range open {
		if ok, p := a.accepts(ctx, st.r); ok {
			a.keep(st, p)
			continue
		}
		st.end(errAuthReplaced)
		n++
	}
	return n
}

// endRefusedStreams ends prev's streams whose opening request c, replacing it, would refuse
// (streamAcceptance), and logs how many ended. ctx is the process's (streamSet.judge).
func (g *gateway) endRefusedStreams(ctx context.Context, prev, c *components) {
	if n := prev.streams.judge(ctx, streamAcceptance(prev, c)); n > 0 {
		g.log.Info("streams the replaced configuration opened and the new one refuses ended; their clients open them again under the new one",
			"streams", n)
	}
}

// streamAcceptance is how a stream of prev is judged once c replaces it: refusing every
// stream when authentication was turned on or off; else as c's endpoint would serve its
// opening request now (mcphttp.Server.AcceptsStream), with its token verified as c verifies a
// request's, within c's issuer fetch timeout, after which a stream is refused (fail closed: its
// client reconnects).
func streamAcceptance(prev, c *components) acceptance {
	srv := c.mcpServer
	switch {
	case prev.auth == nil && c.auth == nil:
		return acceptance{accepts: func(_ context.Context, r *http.Request) (bool, *authz.Principal) {
			return srv.AcceptsStream(r, nil), nil
		}, timeout: time.Second, srv: srv}
	case prev.auth == nil || c.auth == nil:
		return acceptance{accepts: func(context.Context, *http.Request) (bool, *authz.Principal) { return false, nil },
			timeout: time.Second}
	}
	auth := c.auth
	return acceptance{accepts: func(ctx context.Context, r *http.Request) (bool, *authz.Principal) {
		p, ok := principalOf(ctx, auth, srv, r)
		return ok && srv.AcceptsStream(r, p), p
	}, timeout: cmp.Or(c.cfg.Auth.FetchTimeout, authz.DefaultFetchTimeout), srv: srv}
}

// principalOf is the caller auth verifies the credentials of r, a GET stream's request, as,
// read as stage authenticate reads them (mcphttp.DPoPToken, authz.BearerToken): a Bearer token as
// a request presents it; a DPoP-bound one with the stream's proof, checked as srv's endpoint
// would check it now but for its iat and nonce (authz.Service.AuthenticateProven), so a
// configuration that no longer takes the token with DPoP, the proof's algorithm or its htu
// refuses it. ok is false when auth refuses them.
func principalOf(ctx context.Context, auth *authz.Service, srv *mcphttp.Server, r *http.Request) (p *authz.Principal, ok bool) {
	var err error
	authorization := r.Header.Get("Authorization")
	if tok, bound := mcphttp.DPoPToken(authorization); bound {
		p, err = auth.AuthenticateProven(ctx, authz.DPoPRequest{Token: tok, Proofs: r.Header.Values(dpop.Header),
			Method: r.Method, URL: mcphttp.StreamURL(srv, r)})
		return p, err == nil
	}
	tok, err := authz.BearerToken(authorization)
	if err != nil {
		return nil, false
	}
	p, err = auth.AuthenticateBearer(ctx, tok)
	return p, err == nil
}
