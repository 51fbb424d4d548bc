package authz

import (
	"context"
	"log/slog"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/logging"
)

// Policy is the compiled, immutable rule set. Decisions follow these rules:
//
//   - A rule applies to (kind, upstream, name) when its upstream glob matches
//     and, for the kind asked about, one of its name globs matches. A rule
//     that lists no tools, prompts or resources applies to every name of
//     every kind on its upstreams. A rule that lists issuers applies only to
//     callers whose token one of them issued.
//   - Deny wins: if any deny rule applies and its claim conditions hold, the
//     result is Hidden, wherever the rule sits in the list.
//   - Otherwise the first allow rule (in order) that applies and whose claims
//     and scopes are all satisfied gives Allow, with its Confirm and
//     RateLimit.
//   - Otherwise, if an allow rule applies and its claims hold but scopes are
//     missing, the first such rule gives StepUp with every scope it needs
//     (allScopes plus the anyScope list), so one 403 challenge lets the client
//     ask for all of them.
//     Lists leave such an item out unless that rule says ListWithoutScopes
//     (see Listing).
//   - Otherwise Hidden: deny by default, answered like an unknown name so a
//     caller cannot probe which tools exist.
//
// Scopes are compared after ScopeHierarchy expansion (see Principal.Scopes).
// Claim conditions: every listed claim must hold one of its accepted values.
type Policy struct {
	order []*rule // all rules in configuration order, for Explain
	// byUpstream holds, for each upstream some rule names literally, the
	// rules whose upstream pattern matches it; other upstreams can only be
	// matched by wildcard patterns, in wild. Decide then looks at the rules
	// of one upstream instead of all of them.
	byUpstream map[string]ruleLists
	wild       ruleLists
	logger     *slog.Logger
	// listsWithoutScopes: some rule says listWithoutScopes, so lists must ask Listing.
	listsWithoutScopes bool
	// caseless are the backends whose resource paths are case-insensitive (SetCaseInsensitive).
	caseless Caseless
}

// ruleLists are rules split by effect, each in configuration order.
type ruleLists struct {
	denies []*rule
	allows []*rule
}

func (l *ruleLists) add(r *rule) {
	if r.deny {
		l.denies = append(l.denies, r)
	} else {
		l.allows = append(l.allows, r)
	}
}

// NewPolicy validates and compiles cfg. Decisions are logged to logger, one
// line each; a nil logger logs nothing.
func NewPolicy(cfg PolicyConfig, logger *slog.Logger) (*Policy, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Policy{logger: logger, byUpstream: map[string]ruleLists{}}
	for i, rc := range cfg.Rules {
		r := compileRule(rc, i)
		p.order = append(p.order, &r)
		p.listsWithoutScopes = p.listsWithoutScopes || r.listed
		if r.upstream.form == globLiteral {
			p.byUpstream[r.upstream.pattern] = ruleLists{}
		}
	}
	for up := range p.byUpstream {
		var l ruleLists
		for _, r := range p.order {
			if r.upstream.match(up, r.deny) {
				l.add(r)
			}
		}
		p.byUpstream[up] = l
	}
	for _, r := range p.order {
		if r.upstream.form != globLiteral {
			p.wild.add(r)
		}
	}
	return p, nil
}

// Decide returns the decision for principal p using (kind, upstream, name)
// and logs it. upstream and name are the backend's own names, before
// namespacing; for resources name is the backend URI.
func (p *Policy) Decide(ctx context.Context, pr *Principal, kind Kind, upstream, name string) Decision {
	d := p.evaluate(pr, kind, upstream, name)
	p.log(ctx, pr, kind, upstream, name, d)
	return d
}

// Visible reports whether the item belongs in a list for pr: exactly when Decide would return
// Allow and the call would pass, so not for a caller without a DPoP-bound token where the
// deciding rule requires one (dpop: required), whose call is refused as a step-up's is. It does
// not log.
func (p *Policy) Visible(pr *Principal, kind Kind, upstream, name string) bool {
	return usable(p.evaluate(pr, kind, upstream, name), pr)
}

// usable reports whether d lets pr call the item: an Allow whose rule, if it requires DPoP, has
// a caller who proved possession of its token's key (a principal with cnf.jkt authenticated
// only with a proof: a bound token as Bearer is refused).
func usable(d Decision, pr *Principal) bool {
	return d.Effect == Allow && (!d.DPoPRequired || pr.JKT != "")
}

// Callable reports whether a call of the item by pr is answered as the item's own, allowed or
// a step-up naming scopes (Decide returns Allow or StepUp), rather than as an unknown name. It
// does not log.
func (p *Policy) Callable(pr *Principal, kind Kind, upstream, name string) bool {
	return p.evaluate(pr, kind, upstream, name).Effect != Hidden
}

// Listing reports whether the item belongs in a list for pr and, for an item listed only
// because the rule deciding its step-up says listWithoutScopes, the scopes a call needs (every
// one the rule requires, as the 403 challenge names them; shared, do not modify). An item a
// call allows is listed with nil scopes; one whose rule requires DPoP, only to a caller with a
// DPoP-bound token (Visible). It does not log.
func (p *Policy) Listing(pr *Principal, kind Kind, upstream, name string) (listed bool, requiredScopes []string) {
	d := p.evaluate(pr, kind, upstream, name)
	switch {
	case usable(d, pr):
		return true, nil
	case d.Effect == StepUp && d.ListWithoutScopes:
		return true, d.RequiredScopes
	}
	return false, nil
}

// Reaches reports whether pr may use anything of upstream, judged on the policy alone: of some
// kind (tools, prompts, resources), an allow rule for the backend naming items of that kind holds
// for pr (its issuers, claims and scopes, and a DPoP-bound token where it requires one; or it
// lists items without the scopes, listWithoutScopes), and no deny rule holding for pr takes every
// item of that kind (a rule naming no item, or a '*' in that kind's list). So a deny rule of
// tools: ["*"] closes a backend whose allow rules give only tools, as one naming nothing closes
// any. It needs no backend's list, so it decides what is said of a backend as a whole
// (server/discover's instructions): a backend it is false for is one the caller must not learn
// of. It does not log.
func (p *Policy) Reaches(pr *Principal, upstream string) bool {
	if pr == nil {
		return false
	}
	rules, ok := p.byUpstream[upstream]
	if !ok {
		rules = p.wild
	}
	for _, k := range [...]Kind{KindTool, KindPrompt, KindResource} {
		if reachesKind(rules, pr, upstream, k) {
			return true
		}
	}
	return false
}

// reachesKind is Reaches for items of kind k alone. A function, not a method: Policy's methods
// are its API.
func reachesKind(rules ruleLists, pr *Principal, upstream string, k Kind) bool {
	for _, r := range rules.denies {
		if r.takesEvery(k) && r.upstream.match(upstream, r.deny) && r.issuerHolds(pr) && r.claimsHold(pr) {
			return false
		}
	}
	for _, r := range rules.allows {
		if r.names(k) && r.upstream.match(upstream, r.deny) && r.issuerHolds(pr) && r.claimsHold(pr) && reachedBy(r, pr) {
			return true
		}
	}
	return false
}

// reachedBy reports whether allow rule r gives pr something to list: its scopes hold and, where
// it requires DPoP, pr's token is bound and came with its proof (as Visible has it); or its
// scopes do not hold and it lists its items without them (listWithoutScopes, as Listing has it).
// A function, not a method: rule's methods are the matching it is compiled for.
func reachedBy(r *rule, pr *Principal) bool {
	if r.scopesHold(pr) {
		return !r.dpop || pr.JKT != ""
	}
	return r.listed
}

// ListsWithoutScopes reports whether any rule says listWithoutScopes, so callers can skip
// Listing where Visible says everything.
func (p *Policy) ListsWithoutScopes() bool { return p.listsWithoutScopes }

func (p *Policy) evaluate(pr *Principal, kind Kind, upstream, name string) Decision {
	if pr == nil {
		return Decision{Reason: DecisionUnauthenticated}
	}
	rules, ok := p.byUpstream[upstream]
	if !ok {
		rules = p.wild
	}
	name, folded := p.subject(kind, upstream, name)
	for _, r := range rules.denies {
		if r.targets(kind, upstream, name, folded) && r.issuerHolds(pr) && r.claimsHold(pr) {
			return Decision{RuleID: r.id, Reason: DecisionDenied}
		}
	}
	var stepUp *rule
	for _, r := range rules.allows {
		if !r.targets(kind, upstream, name, folded) || !r.issuerHolds(pr) || !r.claimsHold(pr) {
			continue
		}
		if r.scopesHold(pr) {
			var dpopScopes []string
			if r.dpop {
				dpopScopes = r.required // what a DPoP-bound token must carry (Service.DPoPChallenge)
			}
			return Decision{Effect: Allow, RuleID: r.id, Reason: DecisionAllowed, Confirm: r.confirm.Enabled(),
				ConfirmURL: r.confirm == ConfirmURL, ConfirmFallbackClientForm: r.fallback, RateLimit: r.rateLimit,
				RateItem: r.rateItem(kind, name, folded), DPoPRequired: r.dpop, RequiredScopes: dpopScopes}
		}
		if stepUp == nil {
			stepUp = r
		}
	}
	if stepUp != nil {
		return Decision{Effect: StepUp, RuleID: stepUp.id, Reason: DecisionInsufficientScope, RequiredScopes: stepUp.required,
			ListWithoutScopes: stepUp.listed}
	}
	return Decision{Reason: DecisionNoRule}
}

// log writes the decision line. A resource URI is named as configerr.URL quotes a URL, as
// every line does: a URI carries a credential where a URL does (user information, a presigned
// query, a token as a path segment). A tool or prompt name holds no "://" and is written as it
// is, without allocating.
func (p *Policy) log(ctx context.Context, pr *Principal, kind Kind, upstream, name string, d Decision) {
	if !p.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	var sub, iss string
	if pr != nil {
		sub, iss = pr.Subject, pr.Issuer
	}
	logging.LogAttrs(ctx, p.logger, slog.LevelInfo, "authz decision",
		slog.String("effect", d.Effect.String()), slog.String("rule", d.RuleID), slog.String("reason", d.Reason),
		slog.String("subject", sub), slog.String("issuer", iss),
		slog.String("upstream", upstream), slog.String("kind", string(kind)), slog.String("name", configerr.URL(name)))
}

// RuleTrace says how one rule related to a request, for Explain.
type RuleTrace struct {
	// RuleID is the rule's id.
	RuleID string `json:"ruleId"`
	// Effect is the rule's configured effect, "allow" or "deny".
	Effect string `json:"effect"`
	// TargetMatched: the upstream and name globs matched.
	TargetMatched bool `json:"targetMatched"`
	// IssuerMatched: the rule trusts the caller's issuer.
	IssuerMatched bool `json:"issuerMatched"`
	// ClaimsMatched: every claim condition held (true when there are none).
	ClaimsMatched bool `json:"claimsMatched"`
	// ScopesMatched: the scope requirements held (true when there are none).
	ScopesMatched bool `json:"scopesMatched"`
	// RequiredScopes are all scopes the rule needs.
	RequiredScopes []string `json:"requiredScopes,omitempty"`
}

// trace evaluates every rule in configuration order without short-cuts.
func (p *Policy) trace(pr *Principal, kind Kind, upstream, name string) []RuleTrace {
	out := make([]RuleTrace, 0, len(p.order))
	name, folded := p.subject(kind, upstream, name)
	for _, r := range p.order {
		t := RuleTrace{RuleID: r.id, Effect: EffectAllow, RequiredScopes: r.required}
		if r.deny {
			t.Effect = EffectDeny
		}
		t.TargetMatched = r.targets(kind, upstream, name, folded)
		if pr != nil {
			t.IssuerMatched = r.issuerHolds(pr)
			t.ClaimsMatched = r.claimsHold(pr)
			t.ScopesMatched = r.scopesHold(pr)
		}
		out = append(out, t)
	}
	return out
}
