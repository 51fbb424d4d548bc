package mcphttp

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/authz"
)

// The admin listener's credential. /metrics, /pins, the detail of /readyz (backend names, URLs
// and errors), the policy explainer and pprof reveal configuration, tool inventory or process
// internals: they need AdminDeps.Token as a bearer, or, when no token is configured, a
// loopback-only listener. /healthz and the bare status of /readyz stay open, because kubelet
// probes carry no credential. The gateway's configuration refuses a listener that is not
// loopback-only without a token, and pprof anywhere but on loopback; the checks below hold
// the same line if a caller of NewAdmin does not.

// authorized reports whether r may see what the admin listener reveals.
func (a *Admin) authorized(r *http.Request) bool {
	if a.deps.Token == "" {
		return a.deps.Loopback
	}
	return bearerIs(r, a.deps.Token)
}

// requireAdmin refuses a request that is not authorized: 401 with a Bearer challenge when a
// token is configured, 403 when there is none to present (a listener that is not loopback-only
// and has no token).
func (a *Admin) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if a.authorized(c.Request()) {
			return next(c)
		}
		if a.deps.Token == "" {
			return c.JSON(http.StatusForbidden, map[string]string{
				"error": "this endpoint needs admin.token on an admin listener that is not loopback-only"})
		}
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="mcp-gateway-admin"`)
		return c.JSON(http.StatusUnauthorized, map[string]string{
			"error": "this endpoint needs the admin token: Authorization: Bearer <admin.token>"})
	}
}

// requireLoopback keeps pprof to loopback-only listeners: a CPU profile or trace runs for as
// long as the caller asks and exposes the process's internals, whatever the credential.
func (a *Admin) requireLoopback(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !a.deps.Loopback {
			return c.JSON(http.StatusForbidden, map[string]string{"error": "pprof is served on a loopback-only admin listener only"})
		}
		return next(c)
	}
}

// explainAuthorized: the explainer's own secret when one is configured (or the admin token),
// else the admin credential.
func (a *Admin) explainAuthorized(r *http.Request) bool {
	if a.deps.ExplainSecret == "" {
		return a.authorized(r)
	}
	return bearerIs(r, a.deps.ExplainSecret) || (a.deps.Token != "" && bearerIs(r, a.deps.Token))
}

// bearerIs reports whether r carries exactly one Authorization header with secret as its bearer
// token. The comparison is over fixed-length digests, so its time does not depend on where
// they differ.
func bearerIs(r *http.Request, secret string) bool {
	h := r.Header.Values("Authorization")
	if len(h) != 1 {
		return false
	}
	tok, err := authz.BearerToken(h[0])
	if err != nil {
		return false
	}
	got, want := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}
