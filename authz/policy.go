package authz

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Kind is the kind of thing a decision is about.
type Kind string

// The kinds a rule can target.
const (
	KindTool     Kind = "tool"
	KindPrompt   Kind = "prompt"
	KindResource Kind = "resource"
)

// Effect is the outcome of a decision.
type Effect int

const (
	// Hidden: the caller may not use the item and must not learn it exists;
	// the gateway answers exactly as for an unknown name. It is the zero
	// value, so an unset Decision denies.
	Hidden Effect = iota
	// Allow: the call may proceed (after confirmation if Decision.Confirm).
	Allow
	// StepUp: a rule would allow the call with more scopes; the gateway
	// answers 403 insufficient_scope naming Decision.RequiredScopes.
	StepUp
)

// String returns "hidden", "allow" or "step_up".
func (e Effect) String() string {
	switch e {
	case Allow:
		return "allow"
	case StepUp:
		return "step_up"
	default:
		return "hidden"
	}
}

// MarshalText encodes the effect as its String form, for JSON output.
func (e Effect) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// Decision reasons: a closed set, safe as a metric label.
const (
	DecisionAllowed           = "allowed"
	DecisionDenied            = "denied_by_rule"
	DecisionInsufficientScope = "insufficient_scope"
	DecisionNoRule            = "no_matching_rule"
	DecisionUnauthenticated   = "unauthenticated"
)

// Decision is the policy's answer for one (principal, kind, upstream, name).
type Decision struct {
	// Effect is Allow, StepUp or Hidden.
	Effect Effect `json:"effect"`
	// RuleID is the deciding rule; empty when no rule matched.
	RuleID string `json:"ruleId,omitempty"`
	// Reason is one of the Decision* constants.
	Reason string `json:"reason"`
	// RequiredScopes, for StepUp and for an Allow with DPoPRequired (whose 401 names them), are
	// all scopes the deciding rule needs. Shared with the compiled policy: do not modify.
	RequiredScopes []string `json:"requiredScopes,omitempty"`
	// Confirm, for Allow, asks the gateway for user confirmation (MRTR).
	Confirm bool `json:"confirm,omitempty"`
	// ConfirmURL, with Confirm, asks on the gateway's approval page (URL elicitation) rather
	// than through a form the client answers.
	ConfirmURL bool `json:"confirmURL,omitempty"`
	// ConfirmFallbackClientForm, with ConfirmURL, lets a client that did not declare URL
	// elicitation confirm through a form it answers itself instead of being refused: the
	// operator's choice of a weaker confirmation (confirmFallback: clientForm).
	ConfirmFallbackClientForm bool `json:"confirmFallbackClientForm,omitempty"`
	// RateLimit, for Allow, is the rule's opaque rate-limit setting.
	RateLimit string `json:"rateLimit,omitempty"`
	// RateItem, with RateLimit, is what the call counts against within the rule, per caller:
	// the name itself when the rule lists it literally, else the rule's first pattern that
	// matches it ("*" for a rule over every item), so that every name a wildcard covers shares
	// one bucket and a caller cannot make the gateway keep a bucket per name it invents.
	RateItem string `json:"rateItem,omitempty"`
	// ListWithoutScopes, for StepUp, is the deciding rule's opt-in to list the item anyway,
	// marked with RequiredScopes, so a host can ask the user for them before calling.
	ListWithoutScopes bool `json:"listWithoutScopes,omitempty"`
	// DPoPRequired, for Allow, says the deciding rule allows only a caller who proved
	// possession of its token's key (dpop: required).
	DPoPRequired bool `json:"dpopRequired,omitempty"`
}

// Rule effects in configuration.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
)

// PolicyConfig is the ordered rule list.
type PolicyConfig struct {
	// Rules are evaluated as described on Policy. Empty: everything hidden.
	Rules []RuleConfig `yaml:"rules"`
}

// RuleConfig is one policy rule. Patterns are globs: '*' matches any run of
// characters (including '/'), '?' one character (one UTF-8 encoded rune, not one byte).
type RuleConfig struct {
	// ID names the rule in decisions and logs. Default "rule-<index>".
	ID string `yaml:"id"`
	// Upstream is a glob over backend names. Default "*". Written as a name (no '*' or
	// '?'), it must be a configured backend's.
	Upstream string `yaml:"upstream"`
	// Tools are globs over backend tool names (before namespacing: delete_repo, not
	// github__delete_repo, which the configuration check refuses for a backend the rule
	// applies to). A rule that lists no tools, prompts or resources applies to all of them; an
	// empty list is refused.
	Tools []string `yaml:"tools"`
	// Prompts are globs over backend prompt names.
	Prompts []string `yaml:"prompts"`
	// Resources are globs over backend resource URIs in normal form; '*' and '**' mean
	// different things in allow and deny rules (see uriGlobs).
	Resources []string `yaml:"resources"`
	// AnyScope: at least one of these scopes is required.
	AnyScope []string `yaml:"anyScope"`
	// AllScopes: every one of these scopes is required.
	AllScopes []string `yaml:"allScopes"`
	// Claims maps a claim name to accepted values: each listed claim must
	// have (or, for arrays, contain) one of its values.
	Claims map[string][]string `yaml:"claims"`
	// Issuers are the configured issuers (exact "issuer" values) whose tokens
	// the rule applies to; "*" alone means every configured issuer. Empty:
	// every issuer. With more than one issuer configured an allow rule must
	// say which it trusts (Config.Validate refuses it otherwise): claims such
	// as sub and groups mean something only relative to their issuer, so an
	// unbound rule would let a less trusted issuer's tokens satisfy it.
	Issuers []string `yaml:"issuers"`
	// Effect is "allow" (default) or "deny".
	Effect string `yaml:"effect"`
	// Confirm requires user confirmation before an allowed tools/call: true
	// (ConfirmForm) through a form the client answers, url (ConfirmURL) on the
	// gateway's approval page. The gateway confirms tool calls only, so a rule
	// with Confirm must list tools and no prompts or resources (Validate
	// refuses it otherwise, rather than let the setting be silently ignored
	// for them).
	Confirm ConfirmMode `yaml:"confirm"`
	// ConfirmFallback, only with confirm: url, is "clientForm" to let a client
	// that did not declare URL elicitation confirm through a form it answers
	// itself instead of being refused with -32021. That form can be answered
	// by the client without the user, so such a rule no longer has confirm:
	// url's guarantee for those clients. Empty: no fallback.
	ConfirmFallback string `yaml:"confirmFallback"`
	// RateLimit is carried opaquely into Decision.RateLimit (e.g. "60/m").
	RateLimit string `yaml:"rateLimit"`
	// ListWithoutScopes lists what the rule targets to a caller whose claims hold but who
	// lacks its scopes, instead of hiding it, marked with the scopes a call needs (see
	// Policy.Listing), so the host can step up before calling; the call itself is still
	// 403 insufficient_scope until the token has them. Default false: lists show only what
	// a call allows. Only an allow rule that requires scopes takes it.
	ListWithoutScopes bool `yaml:"listWithoutScopes"`
	// DPoP is "required" to allow what the rule targets only to callers who present a
	// DPoP-bound token with a proof of possession (RFC 9449); others get 401 with a DPoP
	// challenge, and lists (tools/list, find_tools) do not show them what the rule allows, as
	// lists show only what a call allows. Empty: the issuer's auth.dpop mode decides. Only an
	// allow rule takes it.
	DPoP string `yaml:"dpop"`
}

// validate reports every problem of the rules, their key paths relative to the auth block
// (policy.rules[2].effect).
func (pc PolicyConfig) validate() error {
	var errs []error
	ids := map[string]int{}
	for i, r := range pc.Rules {
		errs = append(errs, configerr.Under(fmt.Sprintf("policy.rules[%d]", i), nil, r.noted(r.validate())...)...)
		id := ruleID(r, i)
		if first, dup := ids[id]; dup {
			errs = append(errs, configerr.At(fmt.Sprintf("policy.rules[%d].id", i), "%q is already the id of rule %d; ids are unique", id, first))
		} else {
			ids[id] = i
		}
	}
	return errors.Join(errs...)
}

// validate reports one rule's problems, their paths relative to the rule.
func (r RuleConfig) validate() []error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	switch r.Effect {
	case "", EffectAllow:
	case EffectDeny:
		if len(r.AnyScope)+len(r.AllScopes) > 0 || r.Confirm.Enabled() || r.RateLimit != "" || r.ListWithoutScopes || r.DPoP != "" {
			add("effect", "a deny rule takes no anyScope, allScopes, confirm, rateLimit, listWithoutScopes or dpop")
		}
	default:
		add("effect", "%q: want allow or deny", r.Effect)
	}
	if r.DPoP != "" && r.DPoP != DPoPRequired {
		add("dpop", "%q: want %s, or leave it out", r.DPoP, DPoPRequired)
	}
	if r.ListWithoutScopes && r.Effect != EffectDeny && len(r.AnyScope)+len(r.AllScopes) == 0 {
		add("listWithoutScopes", "needs anyScope or allScopes: without scopes to ask for there is nothing to list the item for")
	}
	for key, scopes := range map[string][]string{"anyScope": r.AnyScope, "allScopes": r.AllScopes} {
		for j, sc := range scopes {
			if !validScope(sc) {
				add(fmt.Sprintf("%s[%d]", key, j), "%q is not a scope (printable ASCII without spaces, quotes or backslashes)", sc)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Claims)) {
		if name == "" || len(r.Claims[name]) == 0 {
			add("claims."+name, "a claim condition needs a name and at least one value")
		}
	}
	for key, patterns := range map[string][]string{"tools": r.Tools, "prompts": r.Prompts, "resources": r.Resources} {
		for j, p := range patterns {
			if p == "" {
				add(fmt.Sprintf("%s[%d]", key, j), "empty pattern")
			}
		}
	}
	if len(r.Tools)+len(r.Prompts)+len(r.Resources) == 0 {
		// A rule naming no targets applies to every tool, prompt and resource, so an empty
		// list, which reads as "none" (and means none in a tool set), would mean "all" here.
		for key, patterns := range map[string][]string{"tools": r.Tools, "prompts": r.Prompts, "resources": r.Resources} {
			if patterns != nil {
				add(key, "an empty list, and no tools, prompts or resources listed: the rule would apply to all of them; "+
					"list what it is for (tools: [\"*\"] for every tool), or leave the key out")
			}
		}
	}
	for j, p := range r.Resources {
		if err := checkResourcePattern(p); err != nil {
			add(fmt.Sprintf("resources[%d]", j), "%v", err)
		}
	}
	switch {
	case r.ConfirmFallback == fallbackFormRenamed:
		add("confirmFallback", "form is now written clientForm: the client answers that form itself, without the user "+
			"if it wants, so a rule with it no longer guarantees what confirm: url does for clients without URL "+
			"elicitation; write confirmFallback: clientForm only if that is acceptable, or remove it")
	case r.ConfirmFallback != "" && r.ConfirmFallback != FallbackClientForm:
		add("confirmFallback", "%q: want %s, or leave it out", r.ConfirmFallback, FallbackClientForm)
	case r.ConfirmFallback != "" && r.Confirm != ConfirmURL:
		add("confirmFallback", "applies to confirm: url only")
	}
	if r.Confirm.Enabled() && (len(r.Tools) == 0 || len(r.Prompts)+len(r.Resources) > 0) {
		add("confirm", "applies to tool calls only; list tools (for example tools: [\"*\"]) and put prompts and resources, which cannot be confirmed, in another rule")
	}
	if slices.Contains(r.Issuers, "*") && len(r.Issuers) > 1 {
		add("issuers", "\"*\" (every configured issuer) stands alone")
	}
	slices.SortStableFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// validateIssuers checks the rules' issuers against the configured ones: each
// named issuer must be configured, and with more than one issuer every allow
// rule must name the issuers it trusts.
func (pc PolicyConfig) validateIssuers(issuers []IssuerConfig) error {
	configured := make(map[string]bool, len(issuers))
	for _, is := range issuers {
		configured[is.Issuer] = true
	}
	var errs []error
	for i, r := range pc.Rules {
		at := fmt.Sprintf("policy.rules[%d].issuers", i)
		for j, name := range r.Issuers {
			if name != "*" && !configured[name] {
				errs = append(errs, r.noted([]error{configerr.At(fmt.Sprintf("%s[%d]", at, j), "%q is not one of auth.issuers (write it exactly as there)", name)})...)
			}
		}
		if len(issuers) > 1 && len(r.Issuers) == 0 && r.Effect != EffectDeny {
			errs = append(errs, r.noted([]error{configerr.At(at, "required: with %d issuers configured, an allow rule must say whose tokens it trusts: add issuers: [<issuer>, …], or [\"*\"] for all of them", len(issuers))})...)
		}
	}
	return errors.Join(errs...)
}

// noted names the rule in its problems when it has an id, which says more than its index.
func (r RuleConfig) noted(errs []error) []error {
	if r.ID == "" {
		return errs
	}
	return configerr.Note(fmt.Sprintf("rule %q", r.ID), errs...)
}

func ruleID(r RuleConfig, i int) string {
	if r.ID != "" {
		return r.ID
	}
	return fmt.Sprintf("rule-%d", i)
}

type claimCond struct {
	claimPath
	accepted []string
}

type rule struct {
	index     int // position in the configuration
	id        string
	deny      bool
	upstream  glob
	anyTarget bool // no tools/prompts/resources listed: every name of every kind
	tools     globs
	prompts   globs
	resources uriGlobs
	// foldedResources are resources case-folded, for backends with case-insensitive paths.
	foldedResources uriGlobs
	anyScope        []string
	allScopes       []string
	required        []string
	claims          []claimCond
	issuers         []string // nil: every issuer
	confirm         ConfirmMode
	fallback        bool // confirm: url may fall back to a form the client answers
	rateLimit       string
	listed          bool // listWithoutScopes
	dpop            bool // dpop: required
}

func compileRule(r RuleConfig, i int) rule {
	up := r.Upstream
	if up == "" {
		up = "*"
	}
	cr := rule{
		index: i, id: ruleID(r, i), deny: r.Effect == EffectDeny, upstream: compileGlob(up),
		anyTarget: len(r.Tools)+len(r.Prompts)+len(r.Resources) == 0,
		tools:     compileGlobs(r.Tools), prompts: compileGlobs(r.Prompts), resources: compileURIGlobs(r.Resources),
		foldedResources: compileURIGlobs(foldAll(r.Resources)),
		anyScope:        slices.Clone(r.AnyScope), allScopes: slices.Clone(r.AllScopes),
		confirm: r.Confirm, fallback: r.ConfirmFallback == FallbackClientForm, rateLimit: r.RateLimit,
		listed: r.ListWithoutScopes, dpop: r.DPoP == DPoPRequired,
	}
	if len(r.Issuers) > 0 && !slices.Contains(r.Issuers, "*") {
		cr.issuers = slices.Clone(r.Issuers)
	}
	cr.required = slices.Clone(r.AllScopes)
	for _, s := range r.AnyScope {
		if !slices.Contains(cr.required, s) {
			cr.required = append(cr.required, s)
		}
	}
	names := make([]string, 0, len(r.Claims))
	for n := range r.Claims {
		names = append(names, n)
	}
	slices.Sort(names) // deterministic evaluation and Explain output
	for _, n := range names {
		cr.claims = append(cr.claims, claimCond{claimPath: compileClaimPath(n), accepted: slices.Clone(r.Claims[n])})
	}
	return cr
}

// kindGlobs are the rule's patterns for items of kind k (a resource's as a deny rule reads them).
func (r *rule) kindGlobs(k Kind) globs {
	switch k {
	case KindTool:
		return r.tools
	case KindPrompt:
		return r.prompts
	case KindResource:
		return r.resources.deny
	}
	return nil
}

// names reports whether the rule applies to some items of kind k: it names no item (every one),
// or lists patterns of that kind.
func (r *rule) names(k Kind) bool { return r.anyTarget || len(r.kindGlobs(k)) > 0 }

// takesEvery reports whether the rule applies to every item of kind k: it names no item, or one
// of its patterns of that kind matches every name (TakesEveryName).
func (r *rule) takesEvery(k Kind) bool {
	return r.anyTarget || slices.ContainsFunc(r.kindGlobs(k), func(g glob) bool { return TakesEveryName(g.pattern) })
}

// targets reports whether the rule applies to the item; folded says name is a case-folded
// resource URI, to be matched with the case-folded patterns.
func (r *rule) targets(kind Kind, upstream, name string, folded bool) bool {
	if !r.upstream.match(upstream, r.deny) {
		return false
	}
	if r.anyTarget {
		return true
	}
	switch kind {
	case KindTool:
		return r.tools.match(name, r.deny)
	case KindPrompt:
		return r.prompts.match(name, r.deny)
	case KindResource:
		if folded {
			return r.foldedResources.match(name, r.deny)
		}
		return r.resources.match(name, r.deny)
	default:
		return false
	}
}

// rateItem is Decision.RateItem for a call of name that the rule targets (name and folded as
// targets had them); "" without a rate limit. It returns strings the policy or the caller
// already hold: nothing is allocated.
func (r *rule) rateItem(kind Kind, name string, folded bool) string {
	if r.rateLimit == "" {
		return ""
	}
	if r.anyTarget {
		return "*"
	}
	var gs globs
	switch kind {
	case KindTool:
		gs = r.tools
	case KindPrompt:
		gs = r.prompts
	case KindResource:
		u := r.resources
		if folded {
			u = r.foldedResources
		}
		for i := range u.allow {
			if u.allow[i].match(name) {
				if u.allow[i].form == uriLiteral {
					return name
				}
				return u.deny[i].pattern
			}
		}
		return "*"
	}
	for _, g := range gs {
		if g.match(name, false) {
			if g.form == globLiteral {
				return name
			}
			return g.pattern
		}
	}
	return "*"
}

// issuerHolds reports whether the rule trusts p's issuer.
func (r *rule) issuerHolds(p *Principal) bool {
	return r.issuers == nil || slices.Contains(r.issuers, p.Issuer)
}

func (r *rule) claimsHold(p *Principal) bool {
	for _, c := range r.claims {
		v, ok := c.lookup(p.Claims)
		if !ok || !claimMatches(v, c.accepted) {
			return false
		}
	}
	return true
}

// scopesHold reports whether p has every scope the rule needs.
func (r *rule) scopesHold(p *Principal) bool {
	for _, s := range r.allScopes {
		if !p.Scopes.Has(s) {
			return false
		}
	}
	if len(r.anyScope) == 0 {
		return true
	}
	for _, s := range r.anyScope {
		if p.Scopes.Has(s) {
			return true
		}
	}
	return false
}
