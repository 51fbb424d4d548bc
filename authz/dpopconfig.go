package authz

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/configerr"
)

// DPoP modes of auth.dpop.mode and of an issuer's dpop setting.
const (
	// DPoPOff accepts bearer tokens only; a DPoP-bound token is refused whichever way it comes.
	DPoPOff = "off"
	// DPoPAllowed accepts bearer tokens and DPoP-bound tokens with a proof.
	DPoPAllowed = "allowed"
	// DPoPRequired accepts only DPoP-bound tokens with a proof.
	DPoPRequired = "required"
)

// DPoP defaults.
const (
	// DefaultMaxProofsPerCaller is how many proofs one caller may have recorded against replay
	// in a budget window (twice the iat window): about 16 requests a second, sustained.
	DefaultMaxProofsPerCaller = 10000
)

// DPoPConfig is auth.dpop: sender-constrained tokens (RFC 9449, MCP SEP-1932).
type DPoPConfig struct {
	// Mode is off (default), allowed or required: for every issuer that sets no dpop of its
	// own.
	Mode string `yaml:"mode"`
	// Algorithms are the JWS algorithms proofs may be signed with, published in the protected
	// resource metadata and in challenges. Default every asymmetric algorithm
	// (dpop.DefaultAlgorithms); none and HS* are refused.
	Algorithms []string `yaml:"algorithms"`
	// Window is how far a proof's iat may lie from the gateway's time, either way, and how long
	// its jti is remembered after that. Default and most 5m (MCP allows no wider window);
	// at least 1s.
	Window time.Duration `yaml:"window"`
	// MaxProofsPerCaller bounds the proofs one caller (issuer and subject) may have recorded
	// against replay in twice the window; past it the caller's requests are 429 until the
	// window ends. Default DefaultMaxProofsPerCaller.
	MaxProofsPerCaller int `yaml:"maxProofsPerCaller"`
	// Nonce turns on server nonces (RFC 9449 §8).
	Nonce DPoPNonceConfig `yaml:"nonce"`
}

// DPoPNonceConfig is auth.dpop.nonce.
type DPoPNonceConfig struct {
	// Required makes every proof carry a nonce the gateway issued (sent in DPoP-Nonce with a
	// use_dpop_nonce challenge, and refreshed on responses): stateless, sealed with mrtr.keys,
	// so every replica needs the same keys. Default false.
	Required bool `yaml:"required"`
	// Lifetime is how long a nonce is accepted after it was issued. Default 5m; 10s to 1h.
	Lifetime time.Duration `yaml:"lifetime"`
}

func validMode(m string) bool { return m == DPoPOff || m == DPoPAllowed || m == DPoPRequired }

// validate reports the problems of auth.dpop, relative to the auth block.
func (c DPoPConfig) validate() []error {
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, configerr.At("dpop."+path, format, args...))
	}
	if c.Mode != "" && !validMode(c.Mode) {
		add("mode", "%q: want off, allowed or required", c.Mode)
	}
	for i, a := range c.Algorithms {
		if !dpop.Asymmetric(a) {
			add(fmt.Sprintf("algorithms[%d]", i), "%q: want one of %s (asymmetric JWS algorithms only)", a, strings.Join(dpop.DefaultAlgorithms(), ", "))
		}
	}
	if c.Window != 0 && (c.Window < time.Second || c.Window > dpop.MaxWindow) {
		add("window", "%s: want 1s to %s (MCP allows no wider iat window)", c.Window, dpop.MaxWindow)
	}
	if c.MaxProofsPerCaller < 0 {
		add("maxProofsPerCaller", "must not be negative")
	}
	if l := c.Nonce.Lifetime; l != 0 && (l < dpop.MinNonceLifetime || l > dpop.MaxNonceLifetime) {
		add("nonce.lifetime", "%s: want %s to %s", l, dpop.MinNonceLifetime, dpop.MaxNonceLifetime)
	}
	return errs
}

// dpopMode is the mode for tokens of is: its own, or auth.dpop.mode, or off.
func (c Config) dpopMode(is IssuerConfig) string {
	switch {
	case is.DPoP != "":
		return is.DPoP
	case c.DPoP.Mode != "":
		return c.DPoP.Mode
	}
	return DPoPOff
}

// DPoPUsed reports whether any issuer accepts DPoP-bound tokens.
func (c Config) DPoPUsed() bool {
	return slices.ContainsFunc(c.Issuers, func(is IssuerConfig) bool { return c.dpopMode(is) != DPoPOff })
}

// dpopRequired reports whether some issuer or rule requires DPoP, which the protected resource
// metadata then says (dpop_bound_access_tokens_required).
func (c Config) dpopRequired() bool {
	return slices.ContainsFunc(c.Issuers, func(is IssuerConfig) bool { return c.dpopMode(is) == DPoPRequired }) ||
		slices.ContainsFunc(c.Policy.Rules, func(r RuleConfig) bool { return r.DPoP == DPoPRequired })
}

// validateDPoP checks that what requires DPoP can be met: a rule that requires it needs an
// issuer whose tokens may come with a proof.
func (c Config) validateDPoP() error {
	var errs []error
	for i, r := range c.Policy.Rules {
		if r.DPoP == DPoPRequired && !c.DPoPUsed() {
			errs = append(errs, configerr.At(fmt.Sprintf("policy.rules[%d].dpop", i),
				"no issuer accepts DPoP-bound tokens: set auth.dpop.mode (or an issuer's dpop) to allowed or required"))
		}
	}
	return errors.Join(errs...)
}
