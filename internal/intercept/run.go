package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/logging"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// Call is one call in one phase, as the gateway hands it to a plan.
type Call struct {
	// Method is the call's method, the SEP's event.
	Method string
	// Payload is what is governed: in the request phase RequestPayload's {method, params}, in
	// the response phase the result as the backend returned it (resource URIs namespaced).
	Payload []byte
	// Principal is the verified caller (nil without authentication); an interceptor gets only
	// the claims its configuration names.
	Principal *authz.Principal
	// Caller is the caller's key (authz.Principal.CallerKey), the one the per-caller slots and
	// the interceptor's per-caller circuit count it under, as the upstreams' breakers do. It is
	// required with a Principal: a call that has one and no key is refused whatever failOpen
	// says (ReasonNoCallerKey), since a missing key must not switch the per-caller bounds off.
	// Without a Principal (no authentication) it is the client address's key
	// (callerkey.Client), which the per-caller slots count under; the circuit then counts every
	// failure as the shared circuit's. "" without a Principal: no per-caller slot.
	Caller string
	// TraceParent is the call's traceparent ("" for none), from which the context's traceId and
	// spanId come; Header are the trace headers sent along.
	TraceParent string
	Header      http.Header
	// RequestID, Upstream and Name (the namespaced name or URI the client used, a URI quoted as
	// configerr.URL quotes a URL) label the audit lines.
	RequestID, Upstream, Name string
	// Limits are the strict decoder's limits a mutated request must pass, as the client's did,
	// and MaxBytes the most a client's request may carry (0: no bound): a mutated request
	// larger than the gateway takes from a client is malformed, never forwarded.
	Limits   jsonrpc.Limits
	MaxBytes int64
	// Check, when set, is what a mutation must pass besides the SEP's rules for results: what
	// the gateway can put into effect of this payload (a result the client may be given, a
	// backend's request it can relay). A mutation it refuses is malformed: a failure, routed
	// by the interceptor's failOpen, never applied.
	Check func(mutated []byte) error
}

// Verdict is what a plan decided.
type Verdict struct {
	// Payload is what to go on with: the call's, or the mutation the plan committed.
	Payload []byte
	// Mutated reports that Payload is a mutation.
	Mutated bool
	// Blocked: the call must not go on. By is the interceptor that blocked it and Rule the rule
	// that selected it; Failed says it gave no decision (a failure, fail-closed) rather than a
	// refusal; Reason is its own words, when it shows them (Config.ShowReason).
	Blocked bool
	Failed  bool
	By      string
	Rule    string
	Reason  string
}

// Run runs p on c, in the order the SEP gives the direction of each phase: the request is about
// to be sent to the backend, so the mutations run first and the validations see exactly what
// would be forwarded; a result has been received from the backend, so the validations are the
// first to read it and the mutations run only on a result they let through. A blocking first
// pass skips the second. A nil plan allows everything.
func (s *Set) Run(ctx context.Context, p *Plan, c *Call) Verdict {
	v := Verdict{Payload: c.Payload}
	if p == nil {
		return v
	}
	first, second := s.validate, s.mutate
	if p.phase == PhaseRequest {
		first, second = s.mutate, s.validate
	}
	if first(ctx, p, c, &v); !v.Blocked {
		second(ctx, p, c, &v)
	}
	return v
}

// mutate runs the mutation interceptors one after the other, each on the payload the one before
// committed. A blocking failure discards every change of the pass (the SEP's atomicity): the
// verdict keeps the pass's input.
func (s *Set) mutate(ctx context.Context, p *Plan, c *Call, v *Verdict) {
	current, mutated := v.Payload, false
	for _, st := range p.mutators {
		inv := s.invoke(ctx, st, p.phase, c, current)
		enforced := st.ic.cfg.Mode != ModeAudit
		switch {
		case inv.a == nil:
			s.record(ctx, c, inv, ResultError, enforced)
			if enforced && inv.refuses() {
				v.block(st, true, "")
				return
			}
		case !inv.a.modified:
			s.record(ctx, c, inv, ResultAllowed, enforced)
		default:
			s.record(ctx, c, inv, ResultMutated, enforced)
			if enforced {
				next := inv.a.payload
				if p.phase == PhaseRequest {
					// What it left out is as it was shown it: the next ones see what would be
					// forwarded.
					next = withShown(next, current)
				}
				current, mutated = next, true
			}
		}
	}
	v.Payload, v.Mutated = current, v.Mutated || mutated
}

// validate runs the validation interceptors at once on the same payload and waits for all of
// them (a pass once begun is complete); the decision is read in plan order, never in the order
// the answers came.
func (s *Set) validate(ctx context.Context, p *Plan, c *Call, v *Verdict) {
	invs := make([]invocation, len(p.validators))
	if len(invs) == 1 {
		invs[0] = s.invoke(ctx, p.validators[0], p.phase, c, v.Payload)
	} else {
		var wg sync.WaitGroup
		for i, st := range p.validators {
			wg.Go(func() { invs[i] = s.invoke(ctx, st, p.phase, c, v.Payload) })
		}
		wg.Wait()
	}
	for i, inv := range invs {
		st := p.validators[i]
		enforced := st.ic.cfg.Mode != ModeAudit
		switch {
		case inv.a == nil:
			s.record(ctx, c, inv, ResultError, enforced)
			if enforced && inv.refuses() && !v.Blocked {
				v.block(st, true, "")
			}
		case inv.a.blocks():
			s.record(ctx, c, inv, ResultDenied, enforced)
			if enforced && !v.Blocked {
				reason := ""
				if st.ic.cfg.ShowReason {
					reason = inv.a.reasons()
				}
				v.block(st, false, reason)
			}
		default:
			s.record(ctx, c, inv, ResultAllowed, enforced)
		}
	}
}

func (v *Verdict) block(st step, failed bool, reason string) {
	v.Blocked, v.Failed, v.By, v.Rule, v.Reason = true, failed, st.ic.cfg.Name, st.rule, reason
}

// invocation is one interceptor's answer, or why there is none.
type invocation struct {
	st     step
	phase  Phase
	a      *answer // nil on failure
	reason string  // the failure reason, "" on success
	d      time.Duration
}

// refuses reports whether a failed invocation refuses its call: always without failOpen, and
// with it when the failure is the caller's own doing and not the interceptor's: its own circuit
// open, its share of the slots taken, a payload past maxPayloadBytes, its share of the answers'
// budget spent by its own answers in flight. failOpen is about the interceptor's outage (the
// shared circuit, which one caller cannot open alone: backend.BreakerConfig.MinCallers), and a
// caller must not switch the check off for itself by holding its slots, padding its payload,
// making its calls fail or provoking answers larger than its share (a mutator that echoes the
// payload).
func (inv invocation) refuses() bool {
	return !inv.st.ic.cfg.FailOpen || callersOwn(inv.reason) || inv.reason == ReasonNoCallerKey
}

// callersOwn reports whether a failure reason is the caller's own doing, not the interceptor's.
func callersOwn(reason string) bool {
	return reason == ReasonCallerCircuit || reason == ReasonCallerLimit || reason == ReasonTooLarge ||
		reason == ReasonCallerShare
}

// invoke calls one interceptor and checks its answer against the SEP's rules for results; any
// failure (transport, timeout, an open circuit, a JSON-RPC error, a malformed result) comes back
// as a reason, for the pass to route by the interceptor's mode and failOpen.
func (s *Set) invoke(ctx context.Context, st step, phase Phase, c *Call, payload []byte) invocation {
	start := s.now()
	a, err := st.ic.call(ctx, phase, c, payload, start)
	if err == nil {
		err = st.ic.check(a, phase, c, payload)
	}
	inv := invocation{st: st, phase: phase, a: a, d: s.now().Sub(start)}
	if err != nil {
		inv.a, inv.reason = nil, reasonOf(ctx, err)
		if inv.reason != ReasonCanceled {
			// The error names the interceptor and the failure, never a payload.
			s.log.LogAttrs(ctx, slog.LevelWarn, "interceptor failed", slog.String("interceptor", st.ic.cfg.Name),
				slog.String("reason", inv.reason), slog.String("error", err.Error()))
		}
	}
	return inv
}

// record counts an invocation and writes its audit line: the rule and the decision, never a
// payload, an argument value or the interceptor's messages.
func (s *Set) record(ctx context.Context, c *Call, inv invocation, result string, enforced bool) {
	name, phase := inv.st.ic.cfg.Name, inv.phase.String()
	if s.metrics != nil {
		s.metrics.Invocation(name, phase, result, inv.reason, inv.d)
	}
	logging.LogAttrs(ctx, s.log, slog.LevelInfo, "interceptor",
		slog.String("request_id", c.RequestID),
		slog.String("interceptor", name),
		slog.String("rule", inv.st.rule),
		slog.String("phase", phase),
		slog.String("method", c.Method),
		slog.String("upstream", c.Upstream),
		slog.String("name", c.Name),
		slog.String("decision", result),
		slog.String("reason", inv.reason),
		slog.Bool("enforced", enforced),
		slog.Duration("duration", inv.d),
	)
}

// errTooLarge: the payload is larger than the interceptor takes; it is not sent.
var errTooLarge = errors.New("the payload is larger than maxPayloadBytes")

// errSlotTimeout: no slot became free within the interceptor's timeout.
var errSlotTimeout = errors.New("no free slot within the timeout")

// errCallerLimit: the caller has MaxConcurrentPerCaller invocations of this interceptor in
// flight already.
var errCallerLimit = errors.New("the caller's share of the interceptor's slots is taken")

// errNoCallerKey: an authenticated call came without its caller key (Call.Caller), a
// programming error the call is refused for rather than run outside the per-caller bounds.
var errNoCallerKey = errors.New("an authenticated call without its caller key")

// call sends one invocation within the interceptor's timeout and concurrency bounds.
func (ic *interceptor) call(ctx context.Context, phase Phase, c *Call, payload []byte, now time.Time) (*answer, error) {
	if int64(len(payload)) > ic.cfg.MaxPayloadBytes {
		return nil, errTooLarge
	}
	caller := c.Caller
	if c.Principal != nil && caller == "" {
		return nil, errNoCallerKey
	}
	if caller != "" {
		if !ic.enter(caller) {
			return nil, errCallerLimit
		}
		defer ic.leave(caller)
	}
	// The answer is read within the caller's share of the replica's budget: one caller's
	// answers cannot fill what every caller's are read within.
	results := ic.shares.Take(caller)
	defer ic.shares.Give(caller)
	// The circuit is charged to an authenticated caller only: without authentication nothing
	// tells callers apart that a client could not change at will, so every failure counts for
	// the shared circuit, as a backend's do (backend.BreakerConfig.MinCallers).
	charge := caller
	if c.Principal == nil {
		charge = ""
	}
	// Its expiry is the interceptor's timeout, which its circuit breaker counts as the backend
	// client's own timeout would be.
	ctx, cancel := context.WithTimeoutCause(ctx, ic.cfg.Timeout, backend.ErrCallTimeout)
	defer cancel()
	select {
	case ic.slots <- struct{}{}:
		defer func() { <-ic.slots }()
	case <-ctx.Done():
		return nil, errors.Join(errSlotTimeout, context.Cause(ctx))
	}
	left := ic.cfg.Timeout
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	var meta []byte
	if !ic.cfg.Webhook {
		meta = []byte(modernMeta)
	}
	params := appendParams(make([]byte, 0, len(payload)+512), ic.cfg.Interceptor, c.Method, phase.String(),
		payload, ic.config, left, ic.context(c, now), meta)
	raw, err := ic.t.invoke(ctx, params, c.Header, charge, results)
	if err != nil {
		return nil, err
	}
	return readAnswer(raw, resultLimits)
}

// enter counts one more invocation of the caller key in flight, unless it has its share already.
func (ic *interceptor) enter(key string) bool {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.callers[key] >= ic.cfg.MaxConcurrentPerCaller {
		return false
	}
	ic.callers[key]++
	return true
}

// leave ends one invocation of the caller key, forgetting the caller at zero.
func (ic *interceptor) leave(key string) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.callers[key]--; ic.callers[key] <= 0 {
		delete(ic.callers, key)
	}
}

// context is the invocation context: the caller as far as the configuration allows (its
// allowlisted claims; its subject as id only when "sub" is one), the trace, the time.
func (ic *interceptor) context(c *Call, now time.Time) *invokeContext {
	out := &invokeContext{Timestamp: now.UTC().Format(time.RFC3339Nano), Principal: principal{Type: principalAnonymous}}
	if tp := c.TraceParent; len(tp) >= 55 {
		out.TraceID, out.SpanID = tp[3:35], tp[36:52]
	}
	if p := c.Principal; p != nil {
		out.Principal.Type = principalUser
		for _, name := range ic.cfg.Claims {
			v, ok := p.Claims[name]
			if !ok {
				continue
			}
			if out.Principal.Claims == nil {
				out.Principal.Claims = make(map[string]any, len(ic.cfg.Claims))
			}
			out.Principal.Claims[name] = v
			if name == "sub" {
				out.Principal.ID = p.Subject
			}
		}
	}
	return out
}

// check applies the SEP's rules for results: the answer must echo the interceptor's name, its
// expected type and the phase (M1); a validation result must say valid; a mutation result must
// say modified, and its payload must be a valid payload of the same event and phase (a
// modified:false that changes the payload is malformed too) that passes the call's Check.
func (ic *interceptor) check(a *answer, phase Phase, c *Call, payload []byte) error {
	switch {
	case a.interceptor != ic.cfg.Interceptor:
		return malformed("the result names another interceptor")
	case a.typ != ic.cfg.Type:
		return malformed("a %s result from a %s interceptor", a.typ, ic.cfg.Type)
	case a.phase != phase.String():
		return malformed("a result for phase %q", a.phase)
	case ic.cfg.Type == TypeValidation && !a.hasValid:
		return malformed("a validation result without valid")
	case ic.cfg.Type == TypeValidation:
		return nil
	case !a.hasModified:
		return malformed("a mutation result without modified")
	case !a.modified:
		if a.payload != nil && !sameJSON(a.payload, payload) {
			return malformed("modified is false but the payload changed")
		}
		return nil
	case a.payload == nil:
		return malformed("modified is true without a payload")
	}
	var err error
	if phase == PhaseRequest {
		err = checkRequestMutation(c, a.payload, payload)
	} else {
		err = checkResultMutation(payload, a.payload)
	}
	if err == nil && c.Check != nil {
		if err = c.Check(a.payload); err != nil {
			err = malformed("%v", err)
		}
	}
	return err
}

// checkRequestMutation checks a mutated request-phase payload as c's client's request was
// checked: exactly {method, params}, the same method, no larger than a client's request may be,
// params that decode strictly (no duplicate keys, none that differ only in case, within the
// client's limits) and read as the gateway reads params, and none of the members the gateway
// owns but the answers it was shown (sent, the payload sent), given back unchanged.
func checkRequestMutation(c *Call, payload, sent []byte) error {
	if len(payload) < 2 || payload[0] != '{' {
		return malformed("the mutated request is not an object")
	}
	// As a message: Decode refuses any member but method and params besides the framing.
	msg := append([]byte(`{"jsonrpc":"2.0","id":1,`), payload[1:]...)
	// Measured as forwarded: with the client's members it leaves out put back (withShown).
	if c.MaxBytes > 0 && int64(len(msg)-len(payload)+len(withShown(payload, sent))) > c.MaxBytes {
		return malformed("the mutated request is larger than a client's request may be (%d bytes)", c.MaxBytes)
	}
	req, err := jsonrpc.Decode(msg, c.Limits)
	if err != nil {
		return malformed("the mutated request: %s", failureText(err))
	}
	if req.Method != c.Method || req.Params == nil {
		return malformed("the mutated request changes the method or has no params")
	}
	if _, err := jsonrpc.ParseParams(req.Params); err != nil {
		return malformed("the mutated params: %s", failureText(err))
	}
	var answers, meta []byte
	if params := member(sent, "params"); params != nil {
		answers, meta = member(params, shownOwned), member(params, metaKey)
	}
	return jsonrpc.Members(req.Params, func(key, val []byte) error {
		switch {
		case string(key) == shownOwned && answers != nil && sameJSON(val, answers):
		case string(key) == shownOwned:
			return malformed("the mutated params change %q, which are the client's", key)
		case string(key) == metaKey:
			return checkMutatedMeta(val, meta)
		case isOwned(key):
			return malformed("the mutated params set %q, which the gateway owns", key)
		}
		return nil
	})
}

// checkMutatedMeta checks the _meta of a mutated request against the one the interceptor was
// shown (sent, nil when the client sent none): the client's own members are the mutation's to
// change, like its arguments, but the members the gateway reads itself (the protocol version,
// capabilities, progress token, trace context: jsonrpc.ReservedMetaKey) must come back as they
// were, none added or left out, and no member may be a spelling variant of one of them.
func checkMutatedMeta(mut, sent []byte) error {
	if _, err := jsonrpc.ParseMeta(mut); err != nil {
		return malformed("the mutated _meta: %s", failureText(err))
	}
	reserved := 0
	err := jsonrpc.Members(mut, func(key, val []byte) error {
		if !jsonrpc.ReservedMetaKey(key) {
			return nil
		}
		reserved++
		if was := metaMember(sent, key); was == nil || !sameJSON(val, was) {
			return malformed("the mutated _meta changes %q, which the gateway reads", key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if reserved != countReserved(sent) {
		return malformed("the mutated _meta leaves out a member the gateway reads")
	}
	return nil
}

// metaMember is the value of the member key of the _meta object meta, nil when absent.
func metaMember(meta, key []byte) []byte {
	if meta == nil {
		return nil
	}
	return member(meta, string(key))
}

// countReserved counts the members of the _meta object meta that the gateway reads itself.
func countReserved(meta []byte) int {
	n := 0
	if meta != nil {
		_ = jsonrpc.Members(meta, func(key, _ []byte) error {
			if jsonrpc.ReservedMetaKey(key) {
				n++
			}
			return nil
		})
	}
	return n
}

// roundTripKeys are the members of a result that carry a backend's round trip.
var roundTripKeys = []string{"resultType", "requestState"}

// checkResultMutation checks a mutated result: an object whose resultType and requestState are
// the original's, so a mutation can neither forge a backend's round trip nor end one. A member
// that differs from one of them only in case or punctuation is refused too: the gateway reads
// the exact name, but a client whose decoder folds case would read the variant as that member.
func checkResultMutation(orig, mutated []byte) error {
	if err := jsonrpc.Scan(mutated, resultLimits); err != nil || mutated[0] != '{' {
		return malformed("the mutated result is not a JSON object")
	}
	for _, k := range roundTripKeys {
		if !bytes.Equal(member(orig, k), member(mutated, k)) {
			return malformed("the mutated result changes %s", k)
		}
	}
	return jsonrpc.Members(mutated, func(key, _ []byte) error {
		for _, k := range roundTripKeys {
			if string(key) != k && jsonrpc.FoldEqual(key, []byte(k)) {
				return malformed("the mutated result sets %q, a spelling of %s", key, k)
			}
		}
		return nil
	})
}

// failureText is err's text up to its first quoted part: a decoder's error may quote a member
// name of what it read (a duplicate key, in the arguments say), which is the call's content and
// not the failure's, while the failure's warning names the interceptor and the failure only.
func failureText(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '"'); i >= 0 {
		s = strings.TrimRight(s[:i], " :")
	}
	return s
}

// member returns the raw value of obj's member key, nil when absent.
func member(obj []byte, key string) []byte {
	var out []byte
	_ = jsonrpc.Members(obj, func(k, v []byte) error {
		if string(k) == key {
			out = v
		}
		return nil
	})
	return out
}

// sameJSON reports whether a and b are the same JSON value, whatever their spacing and member
// order.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if decodeNumbers(a, &x) != nil || decodeNumbers(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func decodeNumbers(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
