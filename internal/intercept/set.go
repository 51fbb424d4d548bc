// Package intercept calls out-of-process interceptors on the calls the gateway forwards: an
// Interceptor Server reached over MCP (SEP-2624's interceptor/invoke), or a plain HTTP webhook
// with the same contract. Per rule (backend, item globs) and phase (the request before the
// backend receives it, the result before the client does), each interceptor allows, refuses or
// returns a mutation; its timeout, concurrency bound, circuit breaker and fail-open or
// fail-closed choice (closed by default) decide what a failure does.
//
// The package runs the invocations and says what they decided (Set.Run); the request path
// (package mcphttp) puts the decision into effect: a refusal answered, a mutated request
// authorized, pinned and confirmed again before it is forwarded.
package intercept

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Phase is where a call is intercepted.
type Phase uint8

// The two phases.
const (
	// PhaseRequest: after authorization and pinning, before the backend receives the call.
	PhaseRequest Phase = iota
	// PhaseResponse: the backend's result, before the client receives it.
	PhaseResponse
)

func (p Phase) String() string {
	if p == PhaseResponse {
		return PhaseNameResponse
	}
	return PhaseNameRequest
}

// Metrics receives what the interceptors do. Its methods must not block.
type Metrics interface {
	// Invocation records one invocation: its phase, its result (one of the Result
	// constants), the failure reason ("" unless failed) and how long it took.
	Invocation(interceptor, phase, result, reason string, d time.Duration)
	// CircuitState records an interceptor's circuit state (the backend.Circuit constants).
	CircuitState(interceptor string, state int)
}

// Results of one invocation, for metrics and audit lines.
const (
	ResultAllowed = "allowed"
	ResultDenied  = "denied"
	ResultMutated = "mutated"
	ResultError   = "error"
)

// Deps are what a Set needs.
type Deps struct {
	// Log receives one audit line per invocation (never a payload, an argument value, or the
	// interceptor's messages) and the interceptors' failures. Required.
	Log *slog.Logger
	// Now returns the current time. Default time.Now.
	Now func() time.Time
	// Metrics records the invocations; nil records nothing.
	Metrics Metrics
	// UserAgent is sent to the interceptors. Empty: the backend client's default.
	UserAgent string
	// CaseInsensitive are the backends whose resource paths are case-insensitive: rules select
	// their resources case-folded, as policy matches them.
	CaseInsensitive []string
	// CallerCircuit, when set, hears the backend.Caller events of the interceptors' per-caller
	// circuits; it runs under a breaker's lock and must not block.
	CallerCircuit func(interceptor, event string)
	// MaxAnswerBytesInFlight bounds the interceptors' answers being read at once on the
	// replica, each caller's within an eighth of it (ValidateAnswerBudget). 0: the default,
	// DefaultMaxAnswerBytesInFlight or eight shares of one largest answer, whichever is more.
	MaxAnswerBytesInFlight int64
}

// Set is the configured interceptors, compiled. It is safe for concurrent use.
type Set struct {
	// all is every interceptor in the order a plan lists them: the mutation interceptors in the
	// order they run (priority, then name by code point), then the validation interceptors in
	// configuration order. Sorted once by New, so Plan only filters.
	all     []*interceptor
	log     *slog.Logger
	now     func() time.Time
	metrics Metrics
	// results bounds the interceptors' answers being read at once, over every transport; each
	// caller's within its share of it (shares).
	results *bodyread.Budget
	shares  *bodyread.Shares
	// caseless are the backends whose resource paths are case-insensitive (Deps).
	caseless authz.Caseless
}

// interceptor is one configured interceptor with its client.
type interceptor struct {
	cfg    Config
	b      *backend.Backend
	t      transport
	slots  chan struct{}
	shares *bodyread.Shares // the Set's
	config []byte           // Settings as JSON, nil without
	rules  []rule
	// callers counts each authenticated caller's invocations in flight (MaxConcurrentPerCaller);
	// an entry lives while its count is above zero, so the map holds at most the callers in
	// flight.
	mu      sync.Mutex
	callers map[string]int
}

// rule is a compiled RuleConfig.
type rule struct {
	id                       string
	upstream                 authz.Glob
	tools, prompts, resource []authz.Glob
	// foldedResource is resource case-folded, for backends with case-insensitive paths.
	foldedResource []authz.Glob
	phases         [2]bool
}

// DefaultMaxAnswerBytesInFlight is the least budget of the interceptors' answers being read at
// once on a replica (Deps.MaxAnswerBytesInFlight); the default is raised to hold
// answerShareDivisor shares when the answers configured need larger shares.
const DefaultMaxAnswerBytesInFlight = 64 << 20

// One caller's share of the budget of answers: an eighth of it (answerShareDivisor, the fixed
// share the gateway gives a caller of its caches and of tool search's texts too:
// sharelru.CallerShareDivisor), so that seven
// callers holding their shares still leave another caller's answers room; and at least
// answerHold times the largest maxResponseBytes configured, what one answer may hold for a
// moment while it is read (an event's line and its data, each grown past the bytes that
// arrived), so that a share always holds one answer the configuration allows. The budget holds
// eight such shares: 64 MiB, or 24 times the largest maxResponseBytes when that is more, 192
// MiB with the default 8 MiB. Without shares one caller's slots alone (8 answers of up to 8 MiB
// by default) could fill the budget and fail every other caller's invocations.
const (
	answerShareDivisor = sharelru.CallerShareDivisor
	answerHold         = 3
)

// answerBudget returns the budget of answers being read and one caller's share of it, for the
// configured budget limit (0: the default) and the interceptors cs.
func answerBudget(limit int64, cs []Config) (total, share int64) {
	hold := answerHoldOf(cs)
	total = limit
	if total <= 0 {
		total = DefaultMaxAnswerBytesInFlight
		if total < answerShareDivisor*hold {
			total = answerShareDivisor * hold
		}
	}
	share = total / answerShareDivisor
	if share < hold {
		share = hold // a budget Validate refuses; one answer still fits a share
	}
	if share > total {
		share = total
	}
	return total, share
}

// answerHoldOf is what one answer may hold while it is read, for the largest maxResponseBytes
// of cs.
func answerHoldOf(cs []Config) int64 {
	var hold int64
	for _, c := range cs {
		if h := answerHold * c.WithDefaults().MaxResponseBytes; h > hold {
			hold = h
		}
	}
	return hold
}

// ValidateAnswerBudget checks a configured budget of answers being read (0: the default)
// against the interceptors cs: it must hold eight callers' shares, each one answer as large as
// cs allows (the smallest such budget in the error).
func ValidateAnswerBudget(limit int64, cs []Config) error {
	least := answerShareDivisor * answerHoldOf(cs)
	switch {
	case limit < 0:
		return fmt.Errorf("%d: want 0 (the default) or at least %d", limit, least)
	case limit > 0 && limit < least:
		return fmt.Errorf("%d: want at least %d, %d callers' shares each holding one answer of the largest maxResponseBytes (%d times it)", limit, least, answerShareDivisor, answerHold)
	}
	return nil
}

// New compiles validated configurations (Validate) into a Set; nil when cs is empty, so that a
// gateway without interceptors carries nothing. It fails only when TLS files cannot be read.
func New(cs []Config, deps Deps) (*Set, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	if deps.Log == nil {
		return nil, errors.New("intercept: Deps.Log is required")
	}
	total, share := answerBudget(deps.MaxAnswerBytesInFlight, cs)
	s := &Set{log: deps.Log, now: deps.Now, metrics: deps.Metrics, results: bodyread.NewBudget(total),
		caseless: authz.NewCaseless(deps.CaseInsensitive)}
	if s.now == nil {
		s.now = time.Now
	}
	s.shares = bodyread.NewShares(s.results, share)
	env := &backend.Env{Log: deps.Log, Now: s.now, Names: names.New("__", false, nil),
		Results: s.results, UserAgent: deps.UserAgent, CallerCircuit: deps.CallerCircuit}
	if m := deps.Metrics; m != nil {
		env.CircuitState = m.CircuitState
	}
	for _, c := range cs {
		ic, err := newInterceptor(c.WithDefaults(), env, s.shares)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.all = append(s.all, ic)
	}
	slices.SortStableFunc(s.all, runOrder)
	return s, nil
}

func newInterceptor(c Config, env *backend.Env, sh *bodyread.Shares) (*interceptor, error) {
	b, err := backend.New(c.backendConfig(), env)
	if err != nil {
		return nil, fmt.Errorf("interceptor %s: %w", c.Name, err)
	}
	ic := &interceptor{cfg: c, b: b, slots: make(chan struct{}, c.MaxConcurrent), shares: sh, callers: map[string]int{}}
	if c.Webhook {
		ic.t = webhookTransport{b: b, max: c.MaxResponseBytes, now: env.Now}
	} else {
		ic.t = mcpTransport{b: b}
	}
	if c.Settings != nil {
		if ic.config, err = json.Marshal(c.Settings); err != nil {
			b.Close()
			return nil, fmt.Errorf("interceptor %s: config: %w", c.Name, err)
		}
	}
	for i, r := range c.Rules {
		ic.rules = append(ic.rules, compileRule(c.ruleID(i), r))
	}
	return ic, nil
}

func compileRule(id string, r RuleConfig) rule {
	up := r.Upstream
	if up == "" {
		up = "*"
	}
	out := rule{id: id, upstream: authz.CompileGlob(up), tools: globs(r.Tools), prompts: globs(r.Prompts),
		resource: globs(r.Resources), foldedResource: authz.FoldGlobs(r.Resources)}
	if len(r.Phases) == 0 {
		out.phases = [2]bool{true, true}
	}
	for _, p := range r.Phases {
		out.phases[phaseOf(p)] = true
	}
	return out
}

func phaseOf(name string) Phase {
	if name == PhaseNameResponse {
		return PhaseResponse
	}
	return PhaseRequest
}

func globs(ps []string) []authz.Glob {
	out := make([]authz.Glob, 0, len(ps))
	for _, p := range ps {
		out = append(out, authz.CompileGlob(p))
	}
	return out
}

// Close releases the interceptors' connections.
func (s *Set) Close() {
	if s == nil {
		return
	}
	bs := make([]*backend.Backend, 0, len(s.all))
	for _, ic := range s.all {
		bs = append(bs, ic.b)
	}
	backend.CloseAll(bs)
}

// step is one interceptor of a plan and the rule that selected it.
type step struct {
	ic   *interceptor
	rule string
}

// Plan is what governs one call in one phase: its mutation interceptors in the order they run
// (priority, then name by code point, then configuration order) and its validation
// interceptors. A nil Plan governs nothing.
type Plan struct {
	phase      Phase
	mutators   []step
	validators []step
}

// Plan selects the interceptors whose rules match a call of method on upstream's item name
// (backend-side), in phase; nil when none does, without allocating. The selection depends on
// the configuration and the call's target only, never on the payload.
func (s *Set) Plan(phase Phase, method, upstream, name string) *Plan {
	if s == nil {
		return nil
	}
	folded := false
	if method == "resources/read" {
		name, folded = s.caseless.Fold(upstream, name)
	}
	var p *Plan
	for _, ic := range s.all {
		r, ok := ic.match(phase, method, upstream, name, folded)
		if !ok {
			continue
		}
		if p == nil {
			p = &Plan{phase: phase}
		}
		if ic.cfg.Type == TypeMutation {
			p.mutators = append(p.mutators, step{ic, r})
		} else {
			p.validators = append(p.validators, step{ic, r})
		}
	}
	return p
}

// runOrder orders the interceptors as a plan lists them (Set.all): mutations before
// validations; mutations by priority, then name; validations left in configuration order (the
// sort is stable).
func runOrder(a, b *interceptor) int {
	am, bm := a.cfg.Type == TypeMutation, b.cfg.Type == TypeMutation
	switch {
	case am != bm && am:
		return -1
	case am != bm:
		return 1
	case !am:
		return 0
	}
	if c := cmp.Compare(a.cfg.Priority, b.cfg.Priority); c != 0 {
		return c
	}
	return strings.Compare(a.cfg.Name, b.cfg.Name) // byte order of UTF-8 is code point order
}

// match reports the first rule of ic that selects the call, by id; folded says name is a
// case-folded resource URI, matched with the case-folded patterns.
func (ic *interceptor) match(phase Phase, method, upstream, name string, folded bool) (string, bool) {
	for i := range ic.rules {
		r := &ic.rules[i]
		if !r.phases[phase] || !r.upstream.Covers(upstream) {
			continue
		}
		var gs []authz.Glob
		switch method {
		case "tools/call":
			gs = r.tools
		case "prompts/get":
			gs = r.prompts
		case "resources/read":
			gs = r.resource
			if folded {
				gs = r.foldedResource
			}
		}
		if authz.CoversAny(gs, name, method == "resources/read") {
			return r.id, true
		}
	}
	return "", false
}

// Same reports whether p and q invoke the same interceptors: a call renamed by a mutation needs
// no second pass of a plan whose validators have already seen the payload it carries.
func (p *Plan) Same(q *Plan) bool {
	if p == nil || q == nil {
		return p == q
	}
	same := func(a, b []step) bool {
		return slices.EqualFunc(a, b, func(x, y step) bool { return x.ic == y.ic })
	}
	return same(p.mutators, q.mutators) && same(p.validators, q.validators)
}
