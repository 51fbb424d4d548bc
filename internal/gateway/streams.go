package gateway

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// The long-lived streams a configuration serves and who may keep them across a reload
// (docs/deploy.md, "Changing the configuration"). A pre-2026 client's GET stream runs on the
// configuration it was opened on until that one's server.shutdownTimeout, as a call in flight
// does. When the reload changed how callers are authenticated, that is not good enough: a stream
// opened anonymously keeps receiving notifications after authentication was turned on, and one
// opened with a token the new issuers' settings refuse (an audience taken away) after they
// changed. At the reload each such stream is judged as its opening request would be now: when
// the new configuration would refuse its credentials, or when authentication was turned off or
// on (the identity it runs under is one the new configuration does not make), it ends at once,
// cleanly, and its client opens it again under the new rules. A stream the new configuration
// still accepts runs on. A subscriptions/listen ends at every reload anyway (EndListens).

// errAuthReplaced ends a stream whose caller the configuration that replaced its own would not
// accept.
var errAuthReplaced = errors.New("the configuration's authentication changed and no longer accepts this stream's caller")

// streamSet are the GET streams open on one component set.
type streamSet struct {
	mu   sync.Mutex
	open map[*openStream]struct{}
	// accepts is set when the set is replaced: a stream for whose Authorization header it
	// reports false ends, also one that opens later (admitted just before the replacement).
	accepts acceptance
}

// acceptance judges a stream by its Authorization header, within ctx.
type acceptance struct {
	accepts func(ctx context.Context, authorization string) bool
	timeout time.Duration // the bound of one judgement, or of all those made at once
}

// judge reports whether a accepts authorization, given the time a's timeout allows.
func (a acceptance) judge(authorization string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	return a.accepts(ctx, authorization)
}

// openStream is one GET stream: its Authorization header as it came (kept by the request for
// as long as the stream lasts anyway, and never logged) and what ends it.
type openStream struct {
	authorization string
	end           context.CancelCauseFunc
}

// isStream reports whether r opens a GET stream.
func isStream(r *http.Request) bool {
	return r.Method == http.MethodGet && mcphttp.AcceptsEventStream(r.Header.Values("Accept"))
}

// track returns r with a context the set can end, and the func that forgets it once served.
func (s *streamSet) track(r *http.Request) (*http.Request, func()) {
	ctx, end := context.WithCancelCause(r.Context())
	st := &openStream{authorization: r.Header.Get("Authorization"), end: end}
	s.mu.Lock()
	if s.open == nil {
		s.open = map[*openStream]struct{}{}
	}
	s.open[st] = struct{}{}
	accepts := s.accepts
	s.mu.Unlock()
	if accepts.accepts != nil && !accepts.judge(st.authorization) {
		end(errAuthReplaced)
	}
	return r.WithContext(ctx), func() {
		s.mu.Lock()
		delete(s.open, st)
		s.mu.Unlock()
		end(nil)
	}
}

// judge ends the streams open now, and those opened later, whose Authorization header a
// refuses, and returns how many of those open now it ended. Those open now share one timeout.
func (s *streamSet) judge(a acceptance) int {
	s.mu.Lock()
	s.accepts = a
	open := make([]*openStream, 0, len(s.open))
	for st := range s.open {
		open = append(open, st)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	n := 0
	for _, st := range open {
		if !a.accepts(ctx, st.authorization) {
			st.end(errAuthReplaced)
			n++
		}
	}
	return n
}

// endRefusedStreams ends prev's streams whose caller c, replacing it, would not accept
// (streamAcceptance), and logs how many ended.
func (g *gateway) endRefusedStreams(prev, c *components) {
	a := streamAcceptance(prev, c)
	if a.accepts == nil {
		return
	}
	if n := prev.streams.judge(a); n > 0 {
		g.log.Info("streams opened under the replaced authentication ended; their clients open them again under the new one",
			"streams", n)
	}
}

// streamAcceptance is how a stream of prev is judged once c replaces it: not at all when both
// serve without authentication; refusing every stream when authentication was turned on or
// off; else verifying the stream's token as c does a request's now, within c's issuer fetch
// timeout, after which a stream is refused (fail closed: its client reconnects).
func streamAcceptance(prev, c *components) acceptance {
	switch {
	case prev.auth == nil && c.auth == nil:
		return acceptance{}
	case prev.auth == nil || c.auth == nil:
		return acceptance{accepts: func(context.Context, string) bool { return false }, timeout: time.Second}
	}
	auth := c.auth
	return acceptance{accepts: func(ctx context.Context, authorization string) bool { return acceptsToken(ctx, auth, authorization) },
		timeout: cmp.Or(c.cfg.Auth.FetchTimeout, authz.DefaultFetchTimeout)}
}

// acceptsToken reports whether auth accepts the token of an Authorization header, read as stage
// authenticate reads it (mcphttp.DPoPToken, authz.BearerToken): a Bearer token as a request
// presents it, a DPoP-bound one as its token (its proof of possession was checked
// when the stream opened, for the key the token stays bound to).
func acceptsToken(ctx context.Context, auth *authz.Service, authorization string) bool {
	if tok, ok := mcphttp.DPoPToken(authorization); ok {
		_, err := auth.Authenticate(ctx, tok)
		return err == nil
	}
	tok, err := authz.BearerToken(authorization)
	if err != nil {
		return false
	}
	_, err = auth.AuthenticateBearer(ctx, tok)
	return err == nil
}
