package intercept

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// TestValidatorDecides: a validation interceptor's answer decides the call, over each way of
// reaching it (a 2026-07-28 Interceptor Server, a 2025-11-25 one through its session, a
// webhook); the refusal carries the interceptor's words only when it shows them.
func TestValidatorDecides(t *testing.T) {
	deny := intercepttest.DenyIf("forbidden", "no forbidden words, please")
	for _, tc := range answerServers(deny) {
		t.Run(tc.name, func(t *testing.T) {
			srv, cfg := tc.start(t)
			f := newFixture(t, nil, cfg)
			if v := f.run(t, PhaseRequest, toolCall(t, `{"text":"fine"}`)); v.Blocked || v.Mutated {
				t.Fatalf("allowed call: %+v", v)
			}
			v := f.run(t, PhaseRequest, toolCall(t, `{"text":"forbidden"}`))
			if !v.Blocked || v.Failed || v.By != "guard" || v.Rule != "guard-0" || v.Reason != "" {
				t.Fatalf("refused call: %+v", v)
			}
			invs := srv.Invocations()
			if len(invs) != 2 || invs[1].Event != "tools/call" || invs[1].Phase != "request" || invs[1].Name != "guard" {
				t.Fatalf("invocations: %+v", invs)
			}
			var payload struct {
				Method string                     `json:"method"`
				Params map[string]json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(invs[1].Payload, &payload); err != nil || payload.Method != "tools/call" {
				t.Fatalf("payload %s: %v", invs[1].Payload, err)
			}
			// The _meta as the client sent it, which the backend receives too (answers_test.go).
			if string(payload.Params["_meta"]) != `{"progressToken":1}` || string(payload.Params["name"]) != `"alpha__echo"` {
				t.Fatalf("payload params lose the call's members: %s", invs[1].Payload)
			}
			if got := f.metrics.all(); len(got) != 2 || got[0].result != ResultAllowed || got[1].result != ResultDenied {
				t.Fatalf("metrics: %+v", got)
			}
		})
	}
	t.Run("showReason", func(t *testing.T) {
		s := host(t, "guard", TypeValidation, deny)
		cfg := validator("guard", s.URL())
		cfg.ShowReason = true
		f := newFixture(t, nil, cfg)
		if v := f.run(t, PhaseRequest, toolCall(t, `{"text":"forbidden"}`)); v.Reason != "no forbidden words, please" {
			t.Fatalf("reason = %q", v.Reason)
		}
	})
}

// TestSeverity: only valid:false at severity error, missing or unknown blocks (the chain-free
// rewrite's fail-secure rule); warn and info never do.
func TestSeverity(t *testing.T) {
	for _, tc := range []struct {
		severity string
		blocks   bool
	}{{`"error"`, true}, {``, true}, {`"fatal"`, true}, {`"warn"`, false}, {`"info"`, false}} {
		sev := ""
		if tc.severity != "" {
			sev = `,"severity":` + tc.severity
		}
		s := host(t, "guard", TypeValidation, intercepttest.Raw(`{"interceptor":"guard","type":"validation","phase":"request","valid":false`+sev+`}`))
		f := newFixture(t, nil, validator("guard", s.URL()))
		if v := f.run(t, PhaseRequest, toolCall(t, `{}`)); v.Blocked != tc.blocks || v.Failed {
			t.Errorf("severity %s: %+v", tc.severity, v)
		}
	}
}

// TestMutatorOrderAndValidation: in the request phase the mutators run in priority order (ties by
// name), each on the payload the one before committed, and the validators see what would be
// forwarded; in the response phase the validators read the backend's result first.
func TestMutatorOrderAndValidation(t *testing.T) {
	seen := make(chan string, 4)
	appendMark := func(mark string) intercepttest.Handler {
		return intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
			return json.RawMessage(strings.Replace(string(p), `"text":"`, `"text":"`+mark, 1))
		})
	}
	watch := func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		seen <- string(inv.Payload)
		return intercepttest.Validation(inv, true, ""), nil
	}
	s := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "b", Type: TypeMutation, Handle: appendMark("b")},
		{Name: "a", Type: TypeMutation, Handle: appendMark("a")},
		{Name: "z", Type: TypeMutation, Handle: appendMark("z")},
		{Name: "watch", Type: TypeValidation, Handle: watch},
	})
	z := mutator("z", s.URL())
	z.Priority = -10 // first despite its name
	f := newFixture(t, nil, mutator("b", s.URL()), mutator("a", s.URL()), z, validator("watch", s.URL()))
	v := f.run(t, PhaseRequest, toolCall(t, `{"text":"x"}`))
	if !v.Mutated || v.Blocked || !strings.Contains(string(v.Payload), `"text":"bazx"`) {
		t.Fatalf("verdict %+v payload %s", v, v.Payload)
	}
	if got := <-seen; !strings.Contains(got, `"text":"bazx"`) {
		t.Fatalf("the validator saw %s, not what would be forwarded", got)
	}
	result := `{"content":[{"type":"text","text":"x"}]}`
	v = f.run(t, PhaseResponse, &Call{Method: "tools/call", Payload: []byte(result)})
	if got := <-seen; got != result || !strings.Contains(string(v.Payload), `"text":"bazx"`) {
		t.Fatalf("response: the validator saw %s; released %s", got, v.Payload)
	}
}

// TestMalformedMutations: a mutation the SEP calls malformed (or that would smuggle past the
// gateway's checks) is a failure of its interceptor, never applied.
func TestMalformedMutations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		phase  Phase
		mutate func(string) string
	}{
		{"changes the method", PhaseRequest, func(p string) string { return strings.Replace(p, `"tools/call"`, `"prompts/get"`, 1) }},
		{"adds a member", PhaseRequest, func(p string) string { return strings.Replace(p, `{"method"`, `{"id":7,"method"`, 1) }},
		{"sets requestState", PhaseRequest, func(p string) string {
			return strings.Replace(p, `"name":`, `"requestState":"forged","name":`, 1)
		}},
		{"answers for the client", PhaseRequest, func(p string) string {
			return strings.Replace(p, `"name":`, `"inputResponses":{"confirm":{"approve":true}},"name":`, 1)
		}},
		{"duplicate key", PhaseRequest, func(p string) string { return strings.Replace(p, `"name":`, `"name":"x","name":`, 1) }},
		{"folded key", PhaseRequest, func(p string) string { return strings.Replace(p, `"name":`, `"NAME":"x","name":`, 1) }},
		{"name of the wrong type", PhaseRequest, func(p string) string {
			return strings.Replace(p, `"name":"alpha__echo"`, `"name":7`, 1)
		}},
		{"ends a round trip", PhaseResponse, func(p string) string { return strings.Replace(p, `"input_required"`, `"complete"`, 1) }},
		{"forges a round trip", PhaseResponse, func(p string) string { return strings.Replace(p, `"state-1"`, `"state-2"`, 1) }},
		{"not an object", PhaseResponse, func(string) string { return `[1]` }},
		{"ends a round trip in another case", PhaseResponse, func(p string) string {
			return strings.Replace(p, `"resultType"`, `"ResultType":"complete","resultType"`, 1)
		}},
		{"forges a round trip in another spelling", PhaseResponse, func(p string) string {
			return strings.Replace(p, `"requestState"`, `"request_state":"state-2","requestState"`, 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := host(t, "m", TypeMutation, intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
				return json.RawMessage(tc.mutate(string(p)))
			}))
			f := newFixture(t, nil, mutator("m", s.URL()))
			c := toolCall(t, `{"text":"hello"}`)
			if tc.phase == PhaseResponse {
				c = &Call{Method: "tools/call", Payload: []byte(`{"resultType":"input_required","requestState":"state-1","inputRequests":{}}`)}
			}
			v := f.run(t, tc.phase, c)
			if !v.Blocked || !v.Failed || v.Mutated || string(v.Payload) != string(c.Payload) {
				t.Fatalf("verdict %+v", v)
			}
			// A duplicate key is already refused with the JSON-RPC answer it came in.
			if r := f.metrics.last(); r.result != ResultError || (r.reason != ReasonMalformed && r.reason != ReasonBadResponse) {
				t.Fatalf("metrics: %+v", r)
			}
		})
	}
}

// TestModifiedFalse: modified:false leaves the payload as it was; a payload that is the same JSON
// value (its members reordered) is unchanged, a changed one is malformed (M1's companion rule).
func TestModifiedFalse(t *testing.T) {
	same := `{"interceptor":"m","type":"mutation","phase":"request","modified":false,"payload":{"params":{"arguments":{"text":"x"},"_meta":{"progressToken":1},"name":"alpha__echo"},"method":"tools/call"}}`
	s := host(t, "m", TypeMutation, intercepttest.Raw(same))
	f := newFixture(t, nil, mutator("m", s.URL()))
	if v := f.run(t, PhaseRequest, toolCall(t, `{"text":"x"}`)); v.Blocked || v.Mutated {
		t.Fatalf("reordered unchanged payload: %+v", v)
	}
	changed := strings.Replace(same, `"text":"x"`, `"text":"y"`, 1)
	s = host(t, "m", TypeMutation, intercepttest.Raw(changed))
	f = newFixture(t, nil, mutator("m", s.URL()))
	if v := f.run(t, PhaseRequest, toolCall(t, `{"text":"x"}`)); !v.Blocked || !v.Failed {
		t.Fatalf("changed payload under modified:false: %+v", v)
	}
}

// TestMalformedResults: a result that does not echo the call (M1), lacks its decision, or is
// not JSON is a failure, routed by failOpen.
func TestMalformedResults(t *testing.T) {
	for _, raw := range []string{
		`{"interceptor":"other","type":"validation","phase":"request","valid":true}`,
		`{"interceptor":"guard","type":"mutation","phase":"request","modified":false}`,
		`{"interceptor":"guard","type":"validation","phase":"response","valid":true}`,
		`{"interceptor":"guard","type":"validation","phase":"request"}`,
		`{"interceptor":"guard","type":"validation","phase":"request","valid":"yes"}`,
		`{"interceptor":"guard","type":"validation","phase":"request","VALID":true}`,
		`{"interceptor":"guard","type":"validation","phase":"request","valid":true,"valid":false}`,
		`"valid"`,
	} {
		s := host(t, "guard", TypeValidation, intercepttest.Raw(raw))
		closed := newFixture(t, nil, validator("guard", s.URL()))
		if v := closed.run(t, PhaseRequest, toolCall(t, `{}`)); !v.Blocked || !v.Failed {
			t.Errorf("%s, fail-closed: %+v", raw, v)
		}
		if r := closed.metrics.last(); r.reason != ReasonMalformed && r.reason != ReasonBadResponse {
			t.Errorf("%s: reason %q", raw, r.reason)
		}
		open := validator("guard", s.URL())
		open.FailOpen = true
		if v := newFixture(t, nil, open).run(t, PhaseRequest, toolCall(t, `{}`)); v.Blocked {
			t.Errorf("%s, fail-open: %+v", raw, v)
		}
	}
}

// TestFailures: a slow interceptor times out, an unknown interceptor name is a JSON-RPC error,
// a server answering garbage is a bad response, and so is an answer with another request's id
// (whatever verdict it carries, it is no verdict on this call); each blocks when fail-closed and
// lets the call through when fail-open, and audit mode never blocks.
func TestFailures(t *testing.T) {
	slow := host(t, "slow", TypeValidation, intercepttest.Slow(time.Minute, intercepttest.Allow()))
	garbage := host(t, "garbage", TypeValidation, intercepttest.Allow())
	garbage.SetGarbage(true)
	other := host(t, "other", TypeValidation, intercepttest.Allow())
	other.SetOtherID(true)
	for _, tc := range []struct {
		name, reason string
		cfg          Config
	}{
		{"slow", ReasonTimeout, Config{Name: "slow", URL: slow.URL(), Timeout: 200 * time.Millisecond}},
		{"unknown name", ReasonRPCError, Config{Name: "nobody", URL: slow.URL()}},
		{"garbage", ReasonBadResponse, Config{Name: "garbage", URL: garbage.URL()}},
		{"another request's answer", ReasonBadResponse, Config{Name: "other", URL: other.URL()}},
	} {
		for _, mode := range []string{"closed", "open", "audit"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				cfg := tc.cfg
				cfg.Type, cfg.Rules = TypeValidation, toolRule
				cfg.FailOpen, cfg.Mode = mode == "open", map[bool]string{true: ModeAudit}[mode == "audit"]
				f := newFixture(t, nil, cfg)
				v := f.run(t, PhaseRequest, toolCall(t, `{}`))
				if v.Blocked != (mode == "closed") || (v.Blocked && !v.Failed) {
					t.Fatalf("verdict %+v", v)
				}
				if r := f.metrics.last(); r.result != ResultError || r.reason != tc.reason {
					t.Fatalf("metrics %+v, want reason %s", r, tc.reason)
				}
				if !strings.Contains(f.logs.String(), `"reason":"`+tc.reason+`"`) {
					t.Fatalf("no audit line with the reason:\n%s", f.logs.String())
				}
			})
		}
	}
	if invs := slow.Invocations(); len(invs) == 0 || invs[0].TimeoutMs <= 0 || invs[0].TimeoutMs > 200 {
		t.Fatalf("the slow interceptor was not told its timeout: %+v", invs)
	}
}

// TestTooLarge: a payload above maxPayloadBytes is never sent; it is a failure.
func TestTooLarge(t *testing.T) {
	s := host(t, "guard", TypeValidation, intercepttest.Allow())
	cfg := validator("guard", s.URL())
	cfg.MaxPayloadBytes = 64
	f := newFixture(t, nil, cfg)
	v := f.run(t, PhaseRequest, toolCall(t, `{"text":"`+strings.Repeat("x", 100)+`"}`))
	if !v.Blocked || !v.Failed || len(s.Invocations()) != 0 || f.metrics.last().reason != ReasonTooLarge {
		t.Fatalf("verdict %+v, invocations %d, metrics %+v", v, len(s.Invocations()), f.metrics.last())
	}
}

// TestFailOpenNotTheCallersToSkip: with failOpen, the failures a caller makes itself, without
// the interceptor being asked (a payload above maxPayloadBytes, its share of the slots taken),
// refuse the call as they do fail-closed: a caller cannot switch the check off for itself by
// padding its arguments or holding its slots. Another caller is decided meanwhile.
func TestFailOpenNotTheCallersToSkip(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	hold := func(ctx context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		if strings.Contains(string(inv.Payload), "hold") {
			holdUntil(ctx, entered, release)
		}
		return intercepttest.Validation(inv, !strings.Contains(string(inv.Payload), "forbidden"), "no"), nil
	}
	s := host(t, "guard", TypeValidation, hold)
	cfg := validator("guard", s.URL())
	cfg.FailOpen = true
	cfg.MaxPayloadBytes, cfg.MaxConcurrent, cfg.MaxConcurrentPerCaller, cfg.Timeout = 256, 8, 1, time.Minute
	f := newFixture(t, nil, cfg)
	as := func(sub, args string) *Call {
		c := toolCall(t, args)
		c.Principal = &authz.Principal{Issuer: "https://idp", Subject: sub}
		c.Caller = c.Principal.CallerKey()
		return c
	}
	if v := f.run(t, PhaseRequest, as("alice", `{"text":"forbidden `+strings.Repeat("x", 300)+`"}`)); !v.Blocked || !v.Failed ||
		f.metrics.last().reason != ReasonTooLarge {
		t.Fatalf("a padded payload, fail-open: blocked %v, failed %v, %+v; want refused (too_large)", v.Blocked, v.Failed, f.metrics.last())
	}
	var wg sync.WaitGroup
	wg.Go(func() { f.run(t, PhaseRequest, as("alice", `{"text":"hold"}`)) })
	<-entered
	if v := f.run(t, PhaseRequest, as("alice", `{"text":"forbidden"}`)); !v.Blocked || !v.Failed || f.metrics.last().reason != ReasonCallerLimit {
		t.Fatalf("past her share, fail-open: blocked %v, failed %v, %+v; want refused (caller_limit)", v.Blocked, v.Failed, f.metrics.last())
	}
	if v := f.run(t, PhaseRequest, as("bob", `{"text":"fine"}`)); v.Blocked {
		t.Fatalf("bob: failed %v, %+v", v.Failed, f.metrics.last())
	}
	close(release)
	wg.Wait()
	if n := len(s.Invocations()); n != 2 {
		t.Fatalf("%d invocations; want 2 (alice's held call and bob's): the refused ones are never sent", n)
	}
}

// TestConcurrencyBound: with maxConcurrent 1, a second invocation waits for the slot while the
// first holds it and is never sent if its call ends first (fail-closed, so blocked); once the
// slot is free the next one goes through.
func TestConcurrencyBound(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	hold := func(ctx context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		holdUntil(ctx, entered, release)
		return intercepttest.Validation(inv, true, ""), nil
	}
	s := host(t, "guard", TypeValidation, hold)
	cfg := validator("guard", s.URL())
	cfg.MaxConcurrent, cfg.Timeout = 1, time.Minute
	f := newFixture(t, nil, cfg)
	var wg sync.WaitGroup
	var first Verdict
	wg.Go(func() { first = f.run(t, PhaseRequest, toolCall(t, `{}`)) })
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	p := f.set.Plan(PhaseRequest, "tools/call", "alpha", "echo")
	second := f.set.Run(ctx, p, toolCall(t, `{}`))
	close(release)
	wg.Wait()
	if !second.Blocked || !second.Failed || len(s.Invocations()) != 1 || f.metrics.all()[0].reason != ReasonCanceled {
		t.Fatalf("second: %+v; invocations %d; metrics %+v", second, len(s.Invocations()), f.metrics.all())
	}
	if first.Blocked {
		t.Fatalf("first: %+v", first)
	}
	if third := f.run(t, PhaseRequest, toolCall(t, `{}`)); third.Blocked || len(s.Invocations()) != 2 {
		t.Fatalf("third: %+v", third)
	}
}

// TestClaimsAllowlist: the interceptor learns only the claims the operator allows; the subject
// is its id only when "sub" is one of them.
func TestClaimsAllowlist(t *testing.T) {
	s := host(t, "guard", TypeValidation, intercepttest.Allow())
	p := &authz.Principal{Issuer: "https://idp", Subject: "alice",
		Claims: map[string]any{"sub": "alice", "email": "alice@example.com", "groups": []any{"sre"}, "secret": "x"}}
	for _, tc := range []struct {
		claims []string
		want   string
		anon   bool // no authentication: the call carries no principal
	}{
		{nil, `{"type":"anonymous"}`, true},
		{[]string{"sub", "groups"}, `{"type":"anonymous"}`, true},
		{nil, `{"type":"user"}`, false},
		{[]string{"groups"}, `{"type":"user","claims":{"groups":["sre"]}}`, false},
		{[]string{"sub", "email", "missing"}, `{"type":"user","id":"alice","claims":{"email":"alice@example.com","sub":"alice"}}`, false},
	} {
		s.Reset()
		cfg := validator("guard", s.URL())
		cfg.Claims = tc.claims
		f := newFixture(t, nil, cfg)
		c := toolCall(t, `{}`)
		if !tc.anon {
			c.Principal, c.Caller = p, p.CallerKey()
		}
		c.TraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		f.run(t, PhaseRequest, c)
		var ctx struct {
			Principal json.RawMessage `json:"principal"`
			TraceID   string          `json:"traceId"`
			SpanID    string          `json:"spanId"`
			Timestamp string          `json:"timestamp"`
		}
		if err := json.Unmarshal(s.Invocations()[0].Context, &ctx); err != nil {
			t.Fatal(err)
		}
		if string(ctx.Principal) != tc.want || ctx.TraceID != "0af7651916cd43dd8448eb211c80319c" ||
			ctx.SpanID != "b7ad6b7169203331" || ctx.Timestamp == "" {
			t.Errorf("claims %v: context %s", tc.claims, s.Invocations()[0].Context)
		}
	}
}

// TestAuditMode: an audit-mode interceptor is called and its decision recorded, but it never
// blocks and its mutation is not applied.
func TestAuditMode(t *testing.T) {
	s := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "deny", Type: TypeValidation, Handle: intercepttest.Deny("no")},
		{Name: "up", Type: TypeMutation, Handle: intercepttest.Mutate(upper)},
	})
	d, m := validator("deny", s.URL()), mutator("up", s.URL())
	d.Mode, m.Mode = ModeAudit, ModeAudit
	f := newFixture(t, nil, d, m)
	c := toolCall(t, `{"text":"hello"}`)
	v := f.run(t, PhaseRequest, c)
	if v.Blocked || v.Mutated || string(v.Payload) != string(c.Payload) || len(s.Invocations()) != 2 {
		t.Fatalf("verdict %+v, invocations %d", v, len(s.Invocations()))
	}
	if !strings.Contains(f.logs.String(), `"decision":"denied"`) || !strings.Contains(f.logs.String(), `"enforced":false`) {
		t.Fatalf("audit lines:\n%s", f.logs.String())
	}
}

// TestFirstPassGates: a refusal in the response phase's validation pass keeps the mutation pass
// from running; a blocking failure of a request-phase mutator keeps the validators from being
// called and releases nothing of the pass.
func TestFirstPassGates(t *testing.T) {
	s := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "deny", Type: TypeValidation, Handle: intercepttest.Deny("no")},
		{Name: "up", Type: TypeMutation, Handle: intercepttest.Mutate(upper)},
		{Name: "broken", Type: TypeMutation, Handle: intercepttest.Raw(`{}`)},
	})
	f := newFixture(t, nil, validator("deny", s.URL()), mutator("up", s.URL()))
	if v := f.run(t, PhaseResponse, &Call{Method: "tools/call", Payload: []byte(`{"content":[]}`)}); !v.Blocked || len(s.Invocations()) != 1 {
		t.Fatalf("response: %+v, invocations %+v", v, s.Invocations())
	}
	s.Reset()
	up := mutator("up", s.URL())
	up.Priority = -1
	f = newFixture(t, nil, validator("deny", s.URL()), up, mutator("broken", s.URL()))
	c := toolCall(t, `{"text":"hello"}`)
	v := f.run(t, PhaseRequest, c)
	if !v.Blocked || !v.Failed || v.By != "broken" || string(v.Payload) != string(c.Payload) || len(s.Invocations()) != 2 {
		t.Fatalf("request: %+v, invocations %d", v, len(s.Invocations()))
	}
}

// TestPlanSelects: rules select by phase, backend glob and the method's item globs; a call no
// rule selects has no plan, at no allocation.
func TestPlanSelects(t *testing.T) {
	cfg := Config{Name: "guard", URL: "http://127.0.0.1:1/mcp", Type: TypeValidation, Rules: []RuleConfig{
		{Upstream: "git*", Tools: []string{"create_*"}, Phases: []string{PhaseNameRequest}},
		{Upstream: "docs", Prompts: []string{"summarize"}, Resources: []string{"file:///secret/*", "https://docs.example/secret/*"}},
	}}
	f := newFixture(t, nil, cfg)
	for _, tc := range []struct {
		phase                  Phase
		method, upstream, name string
		want                   bool
	}{
		{PhaseRequest, "tools/call", "github", "create_issue", true},
		{PhaseResponse, "tools/call", "github", "create_issue", false},
		{PhaseRequest, "tools/call", "github", "list_issues", false},
		{PhaseRequest, "tools/call", "docs", "create_issue", false},
		{PhaseResponse, "prompts/get", "docs", "summarize", true},
		{PhaseRequest, "resources/read", "docs", "file:///secret/a", true},
		{PhaseRequest, "resources/read", "docs", "file:///public/a", false},
		{PhaseRequest, "resources/read", "docs", "https://ada@docs.example/secret/a", true},
		{PhaseRequest, "resources/read", "docs", "https://ada@docs.example/public/a", false},
		{PhaseRequest, "completion/complete", "docs", "summarize", false},
	} {
		if got := f.set.Plan(tc.phase, tc.method, tc.upstream, tc.name) != nil; got != tc.want {
			t.Errorf("%v %s %s %s: planned %v", tc.phase, tc.method, tc.upstream, tc.name, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { f.set.Plan(PhaseRequest, "tools/call", "github", "list_issues") }); n != 0 {
		t.Fatalf("an unselected call allocates %v times", n)
	}
	var none *Set
	if none.Plan(PhaseRequest, "tools/call", "a", "b") != nil || none.Run(context.Background(), nil, &Call{Payload: []byte(`{}`)}).Blocked {
		t.Fatal("a nil set governs something")
	}
}

// TestCrashOpensBreaker: an interceptor that keeps dropping its connections opens its circuit,
// after which calls fail fast without reaching it (fail-closed: refused; fail-open: let
// through); once it is back, the first call after the cooldown closes the circuit again.
func TestCrashOpensBreaker(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		s := host(t, "guard", TypeValidation, intercepttest.Deny("no"))
		clock := mcptest.NewClock(time.Unix(1_800_000_000, 0))
		cfg := validator("guard", s.URL())
		cfg.FailOpen = failOpen
		cfg.Breaker = backend.BreakerConfig{Failures: 2, Cooldown: time.Minute}
		f := newFixture(t, clock.Now, cfg)
		s.SetCrashed(true)
		for i := range 3 {
			v := f.run(t, PhaseRequest, toolCall(t, `{}`))
			want := []string{ReasonUnavailable, ReasonUnavailable, ReasonCircuitOpen}[i]
			if r := f.metrics.last(); r.reason != want || v.Blocked == failOpen {
				t.Fatalf("failOpen %v, call %d: %+v, metrics %+v", failOpen, i, v, r)
			}
		}
		if n := len(s.Headers()); n != 0 {
			t.Fatalf("a crashed server recorded %d invocations", n)
		}
		s.SetCrashed(false)
		if v := f.run(t, PhaseRequest, toolCall(t, `{}`)); f.metrics.last().reason != ReasonCircuitOpen || v.Blocked == failOpen {
			t.Fatalf("failOpen %v: still open before the cooldown: %+v, %+v", failOpen, v, f.metrics.last())
		}
		clock.Advance(time.Minute + time.Second)
		for range 2 {
			// Back: the trial closes the circuit, and its refusal is a decision again.
			if v := f.run(t, PhaseRequest, toolCall(t, `{}`)); !v.Blocked || v.Failed || f.metrics.last().result != ResultDenied {
				t.Fatalf("failOpen %v: after recovery: %+v, %+v", failOpen, v, f.metrics.last())
			}
		}
		states := f.metrics.circuits["guard"]
		if len(states) < 3 || states[len(states)-1] != backend.CircuitClosed || !slices.Contains(states, backend.CircuitOpen) {
			t.Fatalf("circuit states %v", states)
		}
	}
}

// TestPerCallerBound: a caller holding its share of an interceptor's slots (maxConcurrentPerCaller)
// has its next call fail at once, not sent (fail-closed, so blocked), while another caller's call
// is decided; once its invocation ends the caller is forgotten and may call again. Without
// authentication the share applies to each client address (the gateway passes callerkey.Client
// as Call.Caller): before, a call without a Principal took no share, so one client could hold
// every slot.
func TestPerCallerBound(t *testing.T) {
	authenticated := func(t *testing.T, who, args string) *Call {
		c := toolCall(t, args)
		c.Principal = &authz.Principal{Issuer: "https://idp", Subject: who}
		c.Caller = c.Principal.CallerKey()
		return c
	}
	fromAddress := func(t *testing.T, who, args string) *Call {
		c := toolCall(t, args)
		c.Caller = callerkey.Client(netip.MustParsePrefix(who))
		return c
	}
	for _, tc := range []struct {
		name       string
		as         func(t *testing.T, who, args string) *Call
		first, two string
	}{
		{"authenticated", authenticated, "alice", "bob"},
		{"client address", fromAddress, "192.0.2.1/32", "192.0.2.2/32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			entered := make(chan struct{}, 1)
			hold := func(ctx context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
				if strings.Contains(string(inv.Payload), "hold") {
					holdUntil(ctx, entered, release)
				}
				return intercepttest.Validation(inv, true, ""), nil
			}
			s := host(t, "guard", TypeValidation, hold)
			cfg := validator("guard", s.URL())
			cfg.MaxConcurrent, cfg.MaxConcurrentPerCaller, cfg.Timeout = 8, 1, time.Minute
			f := newFixture(t, nil, cfg)
			var wg sync.WaitGroup
			var first Verdict
			wg.Go(func() { first = f.run(t, PhaseRequest, tc.as(t, tc.first, `{"text":"hold"}`)) })
			<-entered
			if v := f.run(t, PhaseRequest, tc.as(t, tc.first, `{"text":"again"}`)); !v.Blocked || !v.Failed || f.metrics.last().reason != ReasonCallerLimit {
				t.Fatalf("%s past its share: %+v, %+v", tc.first, v, f.metrics.last())
			}
			if v := f.run(t, PhaseRequest, tc.as(t, tc.two, `{"text":"fine"}`)); v.Blocked {
				t.Fatalf("%s: %+v, %+v", tc.two, v, f.metrics.last())
			}
			close(release)
			wg.Wait()
			if first.Blocked || len(s.Invocations()) != 2 {
				t.Fatalf("first: %+v; %d invocations", first, len(s.Invocations()))
			}
			if v := f.run(t, PhaseRequest, tc.as(t, tc.first, `{"text":"again"}`)); v.Blocked {
				t.Fatalf("%s after its call ended: %+v", tc.first, v)
			}
			if n := len(f.set.all[0].callers); n != 0 {
				t.Fatalf("%d callers still counted", n)
			}
		})
	}
}

// TestFailOpenMutator: a fail-open mutator that gives no decision changes nothing and stops
// nothing: the call goes on with the payload of the mutators before it, and the validators
// still see it.
func TestFailOpenMutator(t *testing.T) {
	s := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "up", Type: TypeMutation, Handle: intercepttest.Mutate(upper)},
		{Name: "broken", Type: TypeMutation, Handle: intercepttest.Raw(`{"interceptor":"broken"}`)},
		{Name: "watch", Type: TypeValidation, Handle: intercepttest.DenyIf("HELLO", "no shouting")},
	})
	up, broken := mutator("up", s.URL()), mutator("broken", s.URL())
	up.Priority, broken.FailOpen = -1, true
	f := newFixture(t, nil, up, broken, validator("watch", s.URL()))
	v := f.run(t, PhaseRequest, toolCall(t, `{"text":"hello"}`))
	if !v.Blocked || v.Failed || v.By != "watch" || len(s.Invocations()) != 3 {
		t.Fatalf("verdict %+v; %d invocations", v, len(s.Invocations()))
	}
	if r := f.metrics.all()[1]; r.interceptor != "broken" || r.result != ResultError || r.reason != ReasonMalformed {
		t.Fatalf("metrics %+v", f.metrics.all())
	}
}

// TestAnswersWithinBudget: an interceptor's answer is read within the replica's budget of
// answers in flight, whichever transport brings it: past it the invocation fails (fail-closed by
// default), and a read answer gives its charge back.
func TestAnswersWithinBudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) Config
	}{
		{"mcp", func(t *testing.T) Config {
			return validator("guard", host(t, "guard", TypeValidation, intercepttest.Allow()).URL())
		}},
		{"webhook", func(t *testing.T) Config {
			s := intercepttest.StartWebhook(t, []intercepttest.Interceptor{{Name: "guard", Type: TypeValidation, Handle: intercepttest.Allow()}})
			c := validator("guard", s.URL())
			c.Webhook = true
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil, tc.start(t))
			budget := f.set.results
			taken := budget.Max() - 8 // room for no answer at all
			if !budget.Take(taken) {
				t.Fatal("the budget is in use before any call")
			}
			v := f.run(t, PhaseRequest, toolCall(t, `{"text":"fine"}`))
			if !v.Blocked || !v.Failed {
				t.Fatalf("an answer past the budget: %+v", v)
			}
			if r := f.metrics.last(); r.result != ResultError {
				t.Fatalf("metrics: %+v", r)
			}
			budget.Return(taken)
			if v := f.run(t, PhaseRequest, toolCall(t, `{"text":"fine"}`)); v.Blocked {
				t.Fatalf("an answer within the budget: %+v", v)
			}
			if n := budget.InUse(); n != 0 {
				t.Fatalf("%d bytes still charged after the answers were read", n)
			}
		})
	}
}

// TestValidatorsDecideInConfigurationOrder: when several validators refuse, the verdict names
// the first of them in configuration order, wherever the mutators sit among them in the
// configuration and whatever their names.
func TestValidatorsDecideInConfigurationOrder(t *testing.T) {
	refuse := func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		return intercepttest.Validation(inv, false, "no"), nil
	}
	s := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "z", Type: TypeValidation, Handle: refuse},
		{Name: "m", Type: TypeMutation, Handle: intercepttest.Mutate(upper)},
		{Name: "a", Type: TypeValidation, Handle: refuse},
	})
	f := newFixture(t, nil, validator("z", s.URL()), mutator("m", s.URL()), validator("a", s.URL()))
	for _, phase := range []Phase{PhaseRequest, PhaseResponse} {
		c := toolCall(t, `{"text":"x"}`)
		if phase == PhaseResponse {
			c = &Call{Method: "tools/call", Payload: []byte(`{"content":[{"type":"text","text":"x"}]}`)}
		}
		if v := f.run(t, phase, c); !v.Blocked || v.Failed || v.By != "z" {
			t.Fatalf("%s: verdict %+v, want blocked by z", phase, v)
		}
	}
}

// TestPlanSelectsCaseFolded: for a backend with case-insensitive paths a rule's resource
// patterns select case-folded, so an interceptor guarding file:///secret/* sees
// file:///SECRET/a too; other backends are matched exactly.
func TestPlanSelectsCaseFolded(t *testing.T) {
	cfgs := []Config{{Name: "guard", URL: "http://127.0.0.1:1/mcp", Type: TypeValidation,
		Rules: []RuleConfig{{Resources: []string{"file:///secret/*"}}}}}
	if err := Validate(cfgs); err != nil {
		t.Fatal(err)
	}
	set, err := New(cfgs, Deps{Log: slog.New(slog.DiscardHandler), CaseInsensitive: []string{"mac"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	for _, tc := range []struct {
		upstream, name string
		want           bool
	}{
		{"mac", "file:///SECRET/a", true},
		{"mac", "file:///Secret/A", true},
		{"mac", "file:///public/a", false},
		{"lin", "file:///SECRET/a", false},
		{"lin", "file:///secret/a", true},
	} {
		if got := set.Plan(PhaseRequest, "resources/read", tc.upstream, tc.name) != nil; got != tc.want {
			t.Errorf("%s %s: planned %v, want %v", tc.upstream, tc.name, got, tc.want)
		}
	}
}

// TestNoCallerKeyRefused: an authenticated call that comes without its caller key is refused,
// unsent, even by a fail-open interceptor: a missing key must not switch the per-caller bounds
// off. Without authentication there is no key to pass, and the call is governed as before.
func TestNoCallerKeyRefused(t *testing.T) {
	s := host(t, "guard", TypeValidation, func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		return intercepttest.Validation(inv, true, ""), nil
	})
	cfg := validator("guard", s.URL())
	cfg.FailOpen = true
	f := newFixture(t, nil, cfg)
	c := toolCall(t, `{}`)
	c.Principal = &authz.Principal{Issuer: "https://idp", Subject: "alice"}
	if v := f.run(t, PhaseRequest, c); !v.Blocked || !v.Failed || f.metrics.last().reason != ReasonNoCallerKey {
		t.Fatalf("no caller key, fail-open: blocked %v, failed %v, %+v; want refused (no_caller_key)", v.Blocked, v.Failed, f.metrics.last())
	}
	if n := len(s.Invocations()); n != 0 {
		t.Fatalf("%d invocations, want none", n)
	}
	if v := f.run(t, PhaseRequest, toolCall(t, `{}`)); v.Blocked || len(s.Invocations()) != 1 {
		t.Fatalf("anonymous call: %+v, %d invocations", v, len(s.Invocations()))
	}
}

// TestAnswersShareOneCallerCannotFailOthers: one caller's answers are read within its own share
// of the replica's budget of answers (answerShareDivisor), so a caller whose answers are large
// and slow to arrive, holding every one of its slots, cannot fill the budget that another
// caller's invocations are read within; its own invocations past its share fail (caller_share)
// and refuse their calls even where the interceptor is failOpen (the caller's own doing, as its
// slots are: a caller must not switch a check off for itself by provoking large answers), and
// every byte is given back after.
//
// The interceptor's maxResponseBytes is 1 MiB and the budget the least Validate allows for it
// (answerShareDivisor shares of answerHold answers), so every size below stands in the same
// proportion to the share as with the defaults (8 MiB answers, 24 MiB shares) at an eighth of
// the bytes: the SDK's server encodes, and the gateway reads, about 60 MiB of answers per case
// with the defaults, which took 25-50 s a case under -race on a loaded 2-core machine and ran
// past the invocation's own timeouts there. TestLargestAnswerFitsShare keeps the defaults.
func TestAnswersShareOneCallerCannotFailOthers(t *testing.T) {
	const (
		maxAnswer  = 1 << 20           // the interceptor's maxResponseBytes
		bigAnswer  = maxAnswer * 6 / 8 // each of the first caller's answers
		stallAfter = maxAnswer * 5 / 8 // where they stop arriving
		otherSize  = maxAnswer * 7 / 8 // the other caller's answer
		budgetSize = answerShareDivisor * answerHold * maxAnswer
	)
	big, other := answerOf(bigAnswer), answerOf(otherSize)
	handler := func(ctx context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		if strings.Contains(string(inv.Payload), "stall") {
			return big(ctx, inv)
		}
		return other(ctx, inv)
	}
	for _, tc := range answerServers(handler) {
		for _, failOpen := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/failOpen=%v", tc.name, failOpen), func(t *testing.T) {
				srv, cfg := tc.start(t)
				cfg.FailOpen = failOpen
				cfg.Timeout = 5 * time.Minute // the stalled answers are released by the test, not timed out
				cfg.MaxResponseBytes = maxAnswer
				f := newFixtureWith(t, Deps{MaxAnswerBytesInFlight: budgetSize}, cfg)
				if share := f.set.shares.Max(); share != answerHold*maxAnswer {
					t.Fatalf("a caller's share is %d bytes, want %d", share, answerHold*maxAnswer)
				}
				budget := f.set.results
				perCaller := cfg.WithDefaults().MaxConcurrentPerCaller
				settled, release := srv.Stall("stall", stallAfter)
				defer release()

				// The first caller fills every one of its slots with answers that stop arriving.
				plan := f.set.Plan(PhaseRequest, "tools/call", "alpha", "echo")
				var wg sync.WaitGroup
				var running atomic.Int64
				running.Store(int64(perCaller))
				verdicts := make([]Verdict, perCaller)
				for i := range perCaller {
					c := toolCall(t, `{"text":"stall"}`)
					c.Caller = callerkey.Client(netip.MustParsePrefix("192.0.2.1/32"))
					wg.Go(func() {
						defer running.Add(-1)
						verdicts[i] = f.set.Run(context.Background(), plan, c)
					})
				}
				// Every one of its answers has stopped arriving (or was refused first), and each
				// still being read holds at least what arrived of it.
				for range perCaller {
					<-settled
				}
				for budget.InUse() < running.Load()*stallAfter {
					time.Sleep(5 * time.Millisecond)
				}
				if held, share := budget.InUse(), f.set.shares.Max(); held > share {
					t.Errorf("one caller's answers hold %d bytes of the budget, past its share of %d", held, share)
				}

				// The other caller's invocation is read within its own share: allowed.
				c := toolCall(t, `{"text":"plain"}`)
				c.Caller = callerkey.Client(netip.MustParsePrefix("192.0.2.2/32"))
				if v := f.run(t, PhaseRequest, c); v.Blocked || v.Failed {
					t.Errorf("another caller's invocation while the first holds its answers: blocked %v, failed %v, by %s, metrics %+v",
						v.Blocked, v.Failed, v.By, f.metrics.last())
				}

				release()
				wg.Wait()
				failed := 0
				for _, v := range verdicts {
					if v.Blocked {
						if !v.Failed {
							t.Errorf("the first caller's invocation refused, not failed: %+v", v)
						}
						failed++
					}
				}
				if failed == 0 {
					t.Error("every one of the first caller's answers fit: its share bounded nothing")
				}
				refused := 0
				for _, r := range f.metrics.all() {
					if r.result == ResultError {
						if r.reason != ReasonCallerShare {
							t.Errorf("an invocation past its share is counted %+v, want %q", r, ReasonCallerShare)
						}
						refused++
					}
				}
				if refused != failed {
					t.Errorf("%d invocations failed, %d counted so", failed, refused)
				}
				if n := budget.InUse(); n != 0 {
					t.Errorf("%d bytes still charged after the answers were read", n)
				}
				if left := f.set.shares.Held(); left != 0 {
					t.Errorf("%d callers' shares kept with no invocation in flight", left)
				}
			})
		}
	}
}

// answerServers are the three ways to reach an interceptor (a 2026-07-28 Interceptor Server, a
// 2025-11-25 one through its session, a webhook), each hosting handler as the validator "guard".
func answerServers(handler intercepttest.Handler) []struct {
	name  string
	start func(t *testing.T) (*intercepttest.Server, Config)
} {
	return []struct {
		name  string
		start func(t *testing.T) (*intercepttest.Server, Config)
	}{
		{"mcp", func(t *testing.T) (*intercepttest.Server, Config) {
			s := host(t, "guard", TypeValidation, handler)
			return s, validator("guard", s.URL())
		}},
		{"legacy", func(t *testing.T) (*intercepttest.Server, Config) {
			s := host(t, "guard", TypeValidation, handler, intercepttest.Legacy())
			return s, validator("guard", s.URL())
		}},
		{"webhook", func(t *testing.T) (*intercepttest.Server, Config) {
			s := intercepttest.StartWebhook(t, []intercepttest.Interceptor{{Name: "guard", Type: TypeValidation, Handle: handler}})
			c := validator("guard", s.URL())
			c.Webhook = true
			return s, c
		}},
	}
}

// TestLargestAnswerFitsShare: a caller's share of the budget of answers holds one answer as
// large as maxResponseBytes allows, however it arrives (JSON, an event stream, a webhook's
// body): the share bounds a caller's answers together, never one answer the configuration
// allows.
func TestLargestAnswerFitsShare(t *testing.T) {
	handler := answerOf(DefaultMaxResponseBytes - 64<<10)
	for _, tc := range answerServers(handler) {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := tc.start(t)
			// The bound under test is the answer's size, not its time: 8 MiB written and read
			// under -race on a loaded machine took longer than the default 2 s once.
			cfg.Timeout = time.Minute
			f := newFixture(t, nil, cfg)
			c := toolCall(t, `{"text":"large"}`)
			c.Caller = callerkey.Client(netip.MustParsePrefix("192.0.2.1/32"))
			if v := f.run(t, PhaseRequest, c); v.Blocked {
				t.Fatalf("an answer within maxResponseBytes: blocked (failed %v), metrics %+v", v.Failed, f.metrics.last())
			}
			if n := f.set.results.InUse(); n != 0 {
				t.Fatalf("%d bytes still charged", n)
			}
		})
	}
}

// answerOf is a validator allowing every call with an answer of about n bytes: a member the
// gateway does not read, in strings of 64 KiB (a longer one is past the scanner's bound for a
// token).
func answerOf(n int) intercepttest.Handler {
	chunk := `"` + strings.Repeat("x", 64<<10-3) + `"`
	note := strings.Repeat(chunk+",", n/len(chunk)) + `""`
	return func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		return json.RawMessage(`{"interceptor":"` + inv.Name + `","type":"validation","phase":"` + inv.Phase +
			`","valid":true,"note":[` + note + `]}`), nil
	}
}

// holdUntil is an interceptor busy on a call: it says so on entered, then waits until release
// is closed or the call's ctx ends.
func holdUntil(ctx context.Context, entered chan<- struct{}, release <-chan struct{}) {
	entered <- struct{}{}
	select {
	case <-release:
	case <-ctx.Done():
	}
}
