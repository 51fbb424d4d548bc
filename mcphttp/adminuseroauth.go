package mcphttp

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// revokeRequest is the body of POST /useroauth/revoke: a caller (issuer and subject), whose
// tokens for every per-user backend go, or a backend, whose every caller's tokens go.
type revokeRequest struct {
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
	Backend string `json:"backend"`
}

// revokeUserTokens is the operator's revocation of per-user OAuth tokens (docs/user-oauth.md):
// each token is revoked at its authorization server where it supports RFC 7009 (best effort)
// and removed from the vault. It answers how many records went.
func (a *Admin) revokeUserTokens(c echo.Context) error {
	var req revokeRequest
	if err := echoJSONDecoder(c).Decode(&req); err != nil {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "body must be JSON: {issuer, subject} or {backend}"})
	}
	bySubject := req.Issuer != "" || req.Subject != ""
	if bySubject == (req.Backend != "") || (bySubject && (req.Issuer == "" || req.Subject == "")) {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "give either issuer and subject, or backend"})
	}
	ctx := c.Request().Context()
	var n int
	var err error
	if bySubject {
		n, err = a.deps.UserOAuth.RevokeSubject(ctx, vault.Caller{Issuer: req.Issuer, Subject: req.Subject})
	} else {
		n, err = a.deps.UserOAuth.RevokeBackend(ctx, req.Backend)
	}
	switch {
	case errors.Is(err, useroauth.ErrUnknownBackend):
		return c.JSON(http.StatusNotFound, map[string]string{"error": "no per-user OAuth backend of that name, nor records of one"})
	case err != nil:
		// Some records may have gone: the operator repeats the revocation, which is idempotent.
		return c.JSON(http.StatusServiceUnavailable, map[string]any{"error": "the token store is unavailable; retry", "revoked": n})
	}
	return c.JSON(http.StatusOK, map[string]int{"revoked": n})
}
