package mcphttp

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/upstreams"
)

// explainRequest is the body of POST /authz/explain on the admin listener.
type explainRequest struct {
	// Token is a bearer token to verify (as the MCP endpoint would); or
	Token string `json:"token"`
	// Claims are taken as if from a verified token, for what-if questions.
	Claims map[string]any `json:"claims"`
	// Kind is tool, prompt or resource; Upstream the backend; Name the backend-side name or URI.
	Kind     string `json:"kind"`
	Upstream string `json:"upstream"`
	Name     string `json:"name"`
}

// explain answers "would this caller be allowed this item, and which rule decides?" on the admin
// listener, with every rule's match traced. It is mounted only when switched on, and then asks
// for the configured bearer secret, if any. It never logs the token.
func (a *Admin) explain(c echo.Context) error {
	if !a.explainAuthorized(c.Request()) {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="mcp-gateway-admin"`)
		return c.JSON(http.StatusUnauthorized, map[string]string{"error": "the explain endpoint needs its bearer secret"})
	}
	if a.deps.Auth == nil {
		return c.JSON(http.StatusNotFound, map[string]string{"error": "authentication is disabled"})
	}
	var req explainRequest
	dec := echoJSONDecoder(c)
	if err := dec.Decode(&req); err != nil {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "body must be JSON: {token|claims, kind, upstream, name}"})
	}
	kind := authz.Kind(req.Kind)
	if kind != authz.KindTool && kind != authz.KindPrompt && kind != authz.KindResource {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "kind must be tool, prompt or resource"})
	}
	if (req.Token == "") == (req.Claims == nil) || req.Upstream == "" || req.Name == "" {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "give exactly one of token or claims, and upstream and name"})
	}
	if kind == authz.KindResource {
		// Explained as the gateway decides it: on the normal form, or refused.
		n, err := upstreams.NormalizeResource(req.Name)
		if err != nil {
			return c.JSON(http.StatusBadRequest, map[string]string{"error": strings.TrimPrefix(err.Error(), "upstreams: ")})
		}
		req.Name = n
	}
	ex, err := a.deps.Auth.Explain(c.Request().Context(), authz.ExplainRequest{
		Token: req.Token, Claims: req.Claims, Kind: kind, Upstream: req.Upstream, Name: req.Name,
	})
	switch {
	case errors.Is(err, authz.ErrIssuerUnavailable):
		c.Response().Header().Set("Retry-After", issuerRetryAfter(err))
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"error": "issuer unavailable", "reason": authz.Reason(err)})
	case err != nil:
		return c.JSON(http.StatusUnprocessableEntity, map[string]string{"error": "token not accepted", "reason": authz.Reason(err)})
	}
	return c.JSON(http.StatusOK, ex)
}
