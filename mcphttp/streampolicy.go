package mcphttp

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/upstreams"
)

// StreamPolicy is the policy a pre-2026 client's GET stream filters what it relays by: the
// resources/updated of resources the caller may read, the list_changed of backends it reaches. A stream runs on the configuration it was opened on until that one's
// server.shutdownTimeout (a go-sdk client whose GET stream ends may fail its whole session), and
// it filtered by that configuration's policy all along: a URI the configuration now serving
// denies kept being announced. Once a reload replaced the configuration and accepted the stream
// (the caller authenticated again by the new one), Follow makes it filter by the new
// configuration's policy and tool set for that caller; until then, by its own. A backend the
// new policy gives the caller nothing of is no longer one whose list_changed it hears; a backend
// it newly reaches is not listened to until the client opens its stream again.
type StreamPolicy struct {
	now atomic.Pointer[streamVisibility]
}

// streamVisibility is one configuration's visibility for a stream's caller; a nil visible
// shows everything (no authentication, no narrowing set), a nil reaches every backend.
type streamVisibility struct {
	visible func(upstreams.Kind, upstreams.Target) bool
	reaches func(upstream string) bool
}

type streamPolicyKey struct{}

// WithStreamPolicy gives the requests served with ctx (a GET stream's) sp to follow.
func WithStreamPolicy(ctx context.Context, sp *StreamPolicy) context.Context {
	return context.WithValue(ctx, streamPolicyKey{}, sp)
}

// Follow makes the stream opened by r filter by s's policy for p, as s serves r's endpoint (its
// path: the gateway's or a tool set's). s must accept the stream (Server.AcceptsStream); a path
// it no longer serves hides everything.
func (sp *StreamPolicy) Follow(s *Server, r *http.Request, p *authz.Principal) {
	set := s.defaultSet
	if path := echo.GetPath(r); path != s.cfg.Path {
		if set = s.sets[path]; set == nil {
			sp.now.Store(&streamVisibility{visible: func(upstreams.Kind, upstreams.Target) bool { return false },
				reaches: func(string) bool { return false }})
			return
		}
	}
	var byPolicy func(upstreams.Kind, upstreams.Target) bool
	if auth := s.auth; auth != nil {
		byPolicy = func(k upstreams.Kind, t upstreams.Target) bool {
			return auth.Visible(p, authzKinds[k], t.Upstream, t.Name)
		}
	}
	sp.now.Store(&streamVisibility{visible: set.narrow(byPolicy), reaches: reachesFor(set, s.auth, p)})
}

// followed is visible, the filter of the stream's own configuration, made to follow the policy
// of ctx's stream (Follow) once it has one. ctx without a StreamPolicy keeps visible.
func followed(ctx context.Context, visible func(upstreams.Kind, upstreams.Target) bool) func(upstreams.Kind, upstreams.Target) bool {
	sp, ok := ctx.Value(streamPolicyKey{}).(*StreamPolicy)
	if !ok || sp == nil {
		return visible
	}
	return func(k upstreams.Kind, t upstreams.Target) bool {
		if v := sp.now.Load(); v != nil {
			return v.visible == nil || v.visible(k, t)
		}
		return visible == nil || visible(k, t)
	}
}

// followedReaches is reaches, the backends the stream's own configuration lets its caller hear
// of, made to follow ctx's stream's policy (Follow) once it has one, as followed does for
// visible. ctx without a StreamPolicy keeps reaches.
func followedReaches(ctx context.Context, reaches func(string) bool) func(string) bool {
	sp, ok := ctx.Value(streamPolicyKey{}).(*StreamPolicy)
	if !ok || sp == nil {
		return reaches
	}
	return func(upstream string) bool {
		if v := sp.now.Load(); v != nil {
			return v.reaches == nil || v.reaches(upstream)
		}
		return reaches == nil || reaches(upstream)
	}
}
