package main

import (
	"crypto/rand"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/demo"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/gateway"
	"github.com/mcp-gateway/gateway/upstreams"
)

const (
	// demoTokenTTL keeps the printed demo tokens usable for a working day.
	demoTokenTTL = 8 * time.Hour
	// approvalClientID is the approval page's client at the development issuer: a public
	// client (PKCE alone), registered with the page's callback on the demo's own port.
	approvalClientID = "gateway-demo-approval"
)

// demoUser is a user of the demo: the scopes of their token, and the token once minted.
type demoUser struct{ Name, Scopes, Token string }

// demoUserList is who the demo's issuer knows: alice may do everything, bob only read notes.
func demoUserList() []demoUser {
	return []demoUser{
		{Name: "alice", Scopes: "notes:read notes:write tools:use"},
		{Name: "bob", Scopes: "notes:read"},
	}
}

// demoSite is the demo's gateway configuration and the development issuer behind it.
type demoSite struct {
	cfg        *gateway.Config
	iss        *devissuer.Issuer // nil with --no-auth
	mcp, admin string            // the listeners' addresses
	backends   []demo.Backend
	users      []demoUser // with their tokens; nil with --no-auth
}

// newDemoSite configures the gateway on the listeners at mcp and admin in front of backends,
// with the development issuer, its users and the demo's policy unless noAuth. The
// configuration starts from NewConfig and is completed as `serve` completes a file's, so the
// demo runs with serve's defaults (pre-2026 clients served among them).
func newDemoSite(mcp, admin string, backends []demo.Backend, noAuth bool) (*demoSite, error) {
	c := gateway.NewConfig()
	s := &demoSite{cfg: &c, mcp: mcp, admin: admin, backends: backends}
	c.Log = gateway.LogConfig{Level: "warn", Format: "text"}
	c.Server.Listen, c.Admin.Listen = mcp, admin
	c.Server.PublicURL = "http://" + mcp + "/mcp"
	// Nothing balances load in front of the demo: Ctrl-C stops it at once.
	c.Server.DrainDelay = 0
	// Loopback only (checked on the flags), so the policy explainer needs no secret here.
	c.Admin.Explain.Enabled = true
	// One process: a sealing key of its own, made now, rather than the warning that a
	// configuration without keys gets (several replicas need the same keys).
	c.MRTR.Keys = []gateway.KeyConfig{{ID: "demo", Secret: gateway.Secret{Value: rand.Text() + rand.Text()}}}
	for _, b := range backends {
		c.Upstreams = append(c.Upstreams, gateway.UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: b.Name, URL: b.URL}})
	}
	if noAuth {
		c.Auth.Disabled = true
	} else if err := s.withAuth(); err != nil {
		s.close()
		return nil, err
	}
	if err := c.Complete(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// withAuth starts the development issuer, with the approval page as its web client and the
// demo's users, trusts it, and mints each user's token.
func (s *demoSite) withAuth() error {
	users := demoUserList()
	claims := make(map[string]devissuer.Claims, len(users))
	for _, u := range users {
		claims[u.Name] = devissuer.Claims{"scope": u.Scopes}
	}
	callback := "http://" + s.mcp + approval.DefaultPath + "/callback"
	iss, err := devissuer.New(devissuer.Options{
		Audience: s.cfg.Server.PublicURL, TTL: demoTokenTTL, Users: claims,
		WebClients: map[string]devissuer.WebClient{approvalClientID: {RedirectURIs: []string{callback}}},
	})
	if err != nil {
		return err
	}
	s.iss = iss
	demoPolicy(s.cfg, iss.URL())
	s.cfg.Approval.ClientID = approvalClientID
	for i := range users {
		if users[i].Token, err = iss.Mint(devissuer.Claims{"sub": users[i].Name, "scope": users[i].Scopes}); err != nil {
			return err
		}
	}
	s.users = users
	return nil
}

// close stops the issuer.
func (s *demoSite) close() {
	if s.iss != nil {
		_ = s.iss.Close()
	}
}

// demoPolicy is the demo's authorization: reading notes needs notes:read; writing needs
// notes:write, and the writing tools are listed to readers too, marked with that scope, so a
// host can step up; deleting also asks the user to approve on the gateway's page (a client
// without URL elicitation gets a form it answers itself instead: the weaker fallback, chosen so
// every demo client can delete); the toolbox needs tools:use and stays hidden
// from those without it.
func demoPolicy(cfg *gateway.Config, issuer string) {
	cfg.Auth.Issuers = []authz.IssuerConfig{{Issuer: issuer}}
	cfg.Auth.ResourceMetadata.ScopesSupported = []string{"notes:read", "notes:write", "tools:use"}
	cfg.Auth.ResourceMetadata.ResourceName = "mcp-gateway demo"
	cfg.Auth.Policy.Rules = []authz.RuleConfig{
		{ID: "notes-read", Upstream: demo.NotesName, Tools: []string{"list_notes", "search_notes", "get_note"},
			Prompts: []string{"*"}, Resources: []string{"*"}, AnyScope: []string{"notes:read"}},
		{ID: "notes-write", Upstream: demo.NotesName, Tools: []string{"add_note"}, AllScopes: []string{"notes:write"},
			ListWithoutScopes: true},
		{ID: "notes-delete", Upstream: demo.NotesName, Tools: []string{"delete_note"}, AllScopes: []string{"notes:write"},
			ListWithoutScopes: true, Confirm: authz.ConfirmURL, ConfirmFallback: authz.FallbackClientForm},
		{ID: "toolbox", Upstream: demo.ToolboxName, Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
	}
}
