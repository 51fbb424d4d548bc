package gateway

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/configerr"
)

// validateRuleUpstreams refuses a policy or guardrail rule whose upstream is a backend name (no
// wildcard) that is not configured: the rule could never apply, so the name is misspelt or the
// backend's old one, and the rule an operator reads as guarding that backend silently guards
// nothing (an allow rule allows nothing, a deny rule or a guardrail protects nothing). A pattern
// ("k8s-*") may match no backend yet: one policy is often shared by deployments that run
// different backends, and its deny rules must not have to be taken out where a backend is absent.
// Interceptor rules and tool sets, which belong to one deployment, refuse patterns too.
func validateRuleUpstreams(c *Config) []error {
	var errs []error
	names := c.upstreamNames()
	for i, r := range c.Auth.Policy.Rules {
		if !strings.ContainsAny(r.Upstream, "*?") {
			errs = append(errs, unmatchedUpstream(names, fmt.Sprintf("auth.policy.rules[%d].upstream", i), r.Upstream)...)
		}
	}
	for i, r := range c.Guardrails.Rules {
		if !strings.ContainsAny(r.Upstream, "*?") {
			errs = append(errs, unmatchedUpstream(names, fmt.Sprintf("guardrails.rules[%d].upstream", i), r.Upstream)...)
		}
	}
	return errs
}

// unmatchedUpstream reports the upstream glob of the rule at path ("" is "*") when it matches
// none of the configured backends (names), with the nearest backend name.
func unmatchedUpstream(names []string, path, glob string) []error {
	if glob == "" {
		glob = "*"
	}
	if len(names) == 0 || slices.ContainsFunc(names, authz.CompileGlob(glob).Match) {
		return nil // no backends at all is reported once, at upstreams
	}
	return []error{configerr.At(path, "%q matches no configured upstream%s: the rule would never apply", glob, didYouMean(glob, names))}
}

// validateRuleNamespacedNames refuses a policy rule pattern written as the namespaced name a
// client sees (github__delete_repo, fs+file:///secret/*) for a backend the rule applies to:
// rules match a backend's own names, before namespacing, so such a pattern matches nothing
// that backend serves, and a deny rule an operator reads as hiding github__delete_repo (the name
// tools/list shows) silently hides nothing. Under namespace.noPrefix both names are one.
func validateRuleNamespacedNames(c *Config) []error {
	if c.Namespace.NoPrefix {
		return nil
	}
	sep := c.Namespace.SeparatorOrDefault()
	var errs []error
	for i, r := range c.Auth.Policy.Rules {
		up := r.Upstream
		if up == "" {
			up = "*"
		}
		g := authz.CompileGlob(up)
		for _, u := range c.Upstreams {
			if !g.Match(u.Name) {
				continue
			}
			for _, kind := range []struct {
				key, join string
				patterns  []string
			}{{"tools", sep, r.Tools}, {"prompts", sep, r.Prompts}, {"resources", "+", r.Resources}} {
				for j, p := range kind.patterns {
					if own, ok := strings.CutPrefix(p, u.Name+kind.join); ok && own != "" {
						errs = append(errs, configerr.At(fmt.Sprintf("auth.policy.rules[%d].%s[%d]", i, kind.key, j),
							"%q is the namespaced name clients see, which no rule matches: rules name a backend's own %s, "+
								"so write %q (with upstream: %s)", p, kind.key, own, u.Name))
					}
				}
			}
		}
	}
	return errs
}
