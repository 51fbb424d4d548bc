package gateway

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// UserOAuthConfig is the `userOAuth:` block: the connect pages and the token vault of the
// backends whose auth.type is userOAuth (docs/user-oauth.md), with the vault's keys given as
// secrets.
type UserOAuthConfig struct {
	useroauth.Config `yaml:",inline"`
	// Keys seal the token records (AES-256-GCM), oldest first: the last that is not openOnly
	// seals, every one opens. Each secret is at least 32 bytes of random text; every replica
	// needs the same. Rotate by adding a key openOnly, then letting it seal (docs/deploy.md);
	// remove the old one once every record was sealed again (each use or refresh of a token
	// does). Required when a backend uses userOAuth.
	Keys []KeyConfig `yaml:"keys"`
}

// userOAuthBackends returns the indexes of the backends configured for per-user OAuth.
func (c *Config) userOAuthBackends() []int {
	var out []int
	for i, u := range c.Upstreams {
		if u.Auth.Type == upstreams.AuthUserOAuth {
			out = append(out, i)
		}
	}
	return out
}

// userOAuthBackendList is every per-user OAuth backend's client settings, in configuration
// order, with its client secret from secrets (resolveSecrets; nil leaves them empty): the
// backends a Service serves, and so the hosts its client trusts as the operator's. serve and
// check-config --online both take the list from here.
func userOAuthBackendList(c *Config, secrets map[string]map[string]string) []useroauth.Backend {
	var out []useroauth.Backend
	for _, i := range c.userOAuthBackends() {
		out = append(out, c.userOAuthBackend(i, secrets[c.Upstreams[i].Name][clientSecretKey]))
	}
	return out
}

// userOAuthBackend is backend i's per-user OAuth client settings, with its client secret. The
// timeout and refresh margin left unset take the defaults upstreams[].auth documents for every
// type of backend authentication, not the useroauth package's own.
func (c *Config) userOAuthBackend(i int, secret string) useroauth.Backend {
	u := c.Upstreams[i]
	timeout, refreshBefore := u.Auth.Timeout, u.Auth.RefreshBefore
	durDefault(&timeout, upstreams.DefaultTokenTimeout)
	durDefault(&refreshBefore, upstreams.DefaultTokenRefreshBefore)
	return useroauth.Backend{Name: u.Name, URL: u.URL, Resource: u.Auth.Resource, AuthServer: u.Auth.AuthServer,
		Scopes: u.Auth.Scopes, Registration: useroauth.Registration(u.Auth.Registration), ClientID: u.Auth.ClientID,
		ClientSecret: secret, Timeout: timeout, RefreshBefore: refreshBefore}
}

// validateUserOAuth: a userOAuth backend needs authenticated callers (whose tokens the vault
// keys), the approval page's sign-in (users sign in to the gateway on the connect page), the
// vault's keys, and a client of its authorization server.
//
// Without such a backend the block's own settings are still checked (not the keys' presence,
// which only a backend needs): a value out of range is reported now, not first when a backend
// is switched to userOAuth, perhaps in the middle of an incident.
func (c *Config) validateUserOAuth() []error {
	idx := c.userOAuthBackends()
	if len(idx) == 0 {
		u := c.userOAuthConfig(placeholderKeys(max(1, len(c.UserOAuth.Keys))))
		errs := append(validateKeyIDs("userOAuth.keys", c.UserOAuth.Keys), sealKeys("userOAuth.keys", c.UserOAuth.Keys)...)
		if err := u.Validate(); err != nil {
			errs = append(errs, err)
		}
		return errs
	}
	var errs []error
	if c.Auth.Disabled {
		errs = append(errs, configerr.At(fmt.Sprintf("upstreams[%d].auth.type", idx[0]),
			"userOAuth keeps each caller's own tokens: it needs authenticated callers (auth.disabled is set)"))
	}
	if !c.Approval.Enabled() {
		errs = append(errs, configerr.At("approval", "the connect page of userOAuth backends signs users in with the approval page's sign-in: configure approval"))
	}
	u := c.userOAuthConfig(placeholderKeys(len(c.UserOAuth.Keys)))
	if err := u.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateKeyIDs("userOAuth.keys", c.UserOAuth.Keys)...)
	errs = append(errs, sealKeys("userOAuth.keys", c.UserOAuth.Keys)...)
	for _, i := range idx {
		secret := ""
		if !c.Upstreams[i].Auth.ClientSecret.IsZero() {
			secret = "placeholder"
		}
		b := c.userOAuthBackend(i, secret)
		errs = append(errs, configerr.Under(fmt.Sprintf("upstreams[%d].auth", i), nil, b.Problems()...)...)
	}
	return errs
}

// validateKeyIDs checks the ids of a list of sealing keys: valid and unique.
func validateKeyIDs(path string, keys []KeyConfig) []error {
	var errs []error
	seen := map[string]bool{}
	for i, k := range keys {
		if !seal.ValidKeyID(k.ID) || seen[k.ID] {
			errs = append(errs, configerr.At(fmt.Sprintf("%s[%d].id", path, i), "%q: want 1 to %d characters of [A-Za-z0-9_-], unique", k.ID, seal.MaxKeyIDBytes))
		}
		seen[k.ID] = true
	}
	return errs
}

func placeholderKeys(n int) []seal.Key {
	out := make([]seal.Key, n)
	for i := range out {
		out[i] = seal.Key{ID: fmt.Sprintf("k%d", i), Secret: make([]byte, seal.MinSecretBytes)}
	}
	return out
}

// userOAuthConfig is the service's configuration with its defaults and the given keys (nil for
// check-config --online, whose probes seal nothing): serve and the probes both build it here.
func (c *Config) userOAuthConfig(keys []seal.Key) useroauth.Config {
	u := c.UserOAuth.Config.WithDefaults()
	u.Keys = keys
	return u
}

// publicBase is where users reach the gateway's pages by default: server.publicURL's scheme and
// host, and the path prefix it puts before server.path (mcphttp.PublicBase), as for a tool set
// at a path of its own.
func (c *Config) publicBase() string {
	return mcphttp.PublicBase(c.Server.PublicURL, c.Server.WithDefaults().Path)
}

// buildUserOAuth builds per-user OAuth when a backend uses it. Its links, states and cookies
// are sealed with the approval page's keys (every replica holds them); the first service built
// registers the metrics, which every later one (a reload) reuses.
func (g *gateway) buildUserOAuth(cfg *Config, approvals *approval.Service) (*useroauth.Service, error) {
	idx := cfg.userOAuthBackends()
	if len(idx) == 0 || approvals == nil {
		return nil, nil
	}
	var keys []seal.Key
	for i, k := range cfg.UserOAuth.Keys {
		v, err := k.Secret.resolve(g.getenv)
		if err != nil {
			return nil, fmt.Errorf("userOAuth.keys[%d].secret: %w", i, err)
		}
		keys = append(keys, seal.Key{ID: k.ID, Secret: []byte(v), OpenOnly: k.OpenOnly})
	}
	secrets, err := cfg.resolveSecrets(g.getenv)
	if err != nil {
		return nil, err
	}
	backends := userOAuthBackendList(cfg, secrets)
	if g.userOAuthObs == nil {
		names := make([]string, 0, len(backends))
		for _, b := range backends {
			names = append(names, b.Name)
		}
		if g.userOAuthObs, err = metrics.NewUserOAuth(g.registry, names); err != nil {
			return nil, err
		}
		g.vaultSize = metrics.NewVaultSize()
		if err := g.registry.Register(g.vaultSize); err != nil {
			return nil, err
		}
	}
	if g.records == nil {
		return nil, fmt.Errorf("userOAuth: the store keeps no records")
	}
	return useroauth.New(cfg.userOAuthConfig(keys), backends, useroauth.Deps{Records: g.records, Store: g.store, Replay: g.replay,
		Keys: g.approvalKeys, SignIn: approvals.SignIn(), BaseURL: cfg.publicBase(), Logger: g.log, Observer: g.userOAuthObs})
}

// userOAuthKeyPaths lists the key paths of the vault's key secrets, for secretRefs and the
// length check.
func (c *Config) userOAuthKeyPaths() []string {
	if len(c.userOAuthBackends()) == 0 {
		return nil
	}
	out := make([]string, len(c.UserOAuth.Keys))
	for i := range c.UserOAuth.Keys {
		out[i] = fmt.Sprintf("userOAuth.keys[%d].secret", i)
	}
	return slices.Clip(out)
}

// userTokens is s as the backends' source of callers' tokens: nil (not a nil *Service) when no
// backend uses per-user OAuth.
func userTokens(s *useroauth.Service) upstreams.UserTokens {
	if s == nil {
		return nil
	}
	return s
}

// userOAuthNote is what check-config says about per-user OAuth: which backends use it and,
// without redis, that the vault lives in this process's memory, so such a deployment must run
// one replica and its users connect again after a restart.
func (c *Config) userOAuthNote() string {
	idx := c.userOAuthBackends()
	if len(idx) == 0 {
		return ""
	}
	names := make([]string, 0, len(idx))
	for _, i := range idx {
		names = append(names, c.Upstreams[i].Name)
	}
	path := c.userOAuthConfig(nil).Path
	note := "per-user OAuth: " + strings.Join(names, ", ") + " (connect pages at " + path + "/)" +
		"; each backend has its own redirect URI to register at its authorization server, " + path + "/callback/<backend> (" +
		path + "/callback/" + names[0] + ") after the public URL's scheme, host and path prefix"
	if !c.Redis.enabled() {
		note += "; without redis the tokens are kept in this process's memory: run a single replica, and users connect again after a restart"
	}
	return note + "\n"
}
