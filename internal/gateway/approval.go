package gateway

import (
	"fmt"
	"slices"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/metrics"
)

// ApprovalConfig is the approval page that `confirm: url` rules send users to
// (docs/approval.md), with its client secret given as a secret.
type ApprovalConfig struct {
	approval.Config `yaml:",inline"`
	// ClientSecret authenticates the gateway at the issuer's token endpoint (file, env or
	// value). Empty for a public client, which PKCE alone protects.
	ClientSecret Secret `yaml:"clientSecret"`
}

// approvalConfig is the page's configuration with its defaults: where server.publicURL places
// the gateway's pages (publicBase), and the only configured issuer.
func (c *Config) approvalConfig() approval.Config {
	a := c.Approval.Config.WithDefaults()
	if a.BaseURL == "" {
		a.BaseURL = c.publicBase()
	}
	if a.Issuer == "" && len(c.Auth.Issuers) == 1 {
		a.Issuer = c.Auth.Issuers[0].Issuer
	}
	return a
}

// validateApproval: a `confirm: url` rule needs the page, the page needs authentication and
// signs users in with one of the issuers whose tokens the gateway accepts.
func (c *Config) validateApproval() []error {
	if !c.Approval.Enabled() {
		if i := slices.IndexFunc(c.Auth.Policy.Rules, func(r authz.RuleConfig) bool { return r.Confirm == authz.ConfirmURL }); i >= 0 {
			return []error{configerr.At(fmt.Sprintf("auth.policy.rules[%d].confirm", i),
				"url, but the approval page is not configured (approval.clientID and the issuer's client)")}
		}
		return nil
	}
	var errs []error
	if c.Auth.Disabled {
		errs = append(errs, configerr.At("approval", "the approval page needs authentication (auth.disabled is set)"))
	}
	a := c.approvalConfig()
	if err := a.Validate(); err != nil {
		errs = append(errs, err)
	}
	if a.Issuer != "" && !slices.ContainsFunc(c.Auth.Issuers, func(i authz.IssuerConfig) bool { return i.Issuer == a.Issuer }) {
		errs = append(errs, configerr.At("approval.issuer", "%q: must be one of auth.issuers (written exactly as there)", a.Issuer))
	}
	return errs
}

// buildApproval builds the approval page when it is configured. Its records and cookies are
// sealed with the requestState keys, derived for their own purposes and allowed to be larger.
// The first page built derives those keys and registers its metrics; every later one (a
// reload) reuses them, so records and cookies sealed before a reload still open.
func (g *gateway) buildApproval(cfg *Config) (*approval.Service, error) {
	if !cfg.Approval.Enabled() {
		return nil, nil
	}
	a := cfg.approvalConfig()
	if !cfg.Approval.ClientSecret.IsZero() {
		v, err := cfg.Approval.ClientSecret.resolve(g.getenv)
		if err != nil {
			return nil, fmt.Errorf("approval.clientSecret: %w", err)
		}
		a.ClientSecret = v
	}
	if g.approvalKeys == nil {
		keys := cfg.MRTR
		keys.MaxTokenBytes = approval.MaxRecordBytes * 2
		ring, _, err := keys.keyRing(g.getenv)
		if err != nil {
			return nil, err
		}
		obs, err := metrics.NewApproval(g.registry)
		if err != nil {
			return nil, err
		}
		g.approvalKeys, g.approvalObs = ring, obs
	}
	return approval.New(a, approval.Deps{Store: g.store, Keys: g.approvalKeys, Logger: g.log, Observer: g.approvalObs})
}
