package intercept

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// stallOn is a validator that allows every payload but one holding needle, on which it gives
// no answer, whatever the timeout it was told, until release is called.
func stallOn(needle string) (h intercepttest.Handler, release func()) {
	end := make(chan struct{})
	return func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		if strings.Contains(string(inv.Payload), needle) {
			<-end
		}
		return intercepttest.Validation(inv, true, ""), nil
	}, func() { close(end) }
}

// TestOneCallerCannotOpenCircuit: one authenticated caller whose payloads make an interceptor
// time out (an Interceptor Server of 2026-07-28 and of 2025-11-25, a webhook; fail-closed and
// fail-open) opens its own circuit only: its next calls are refused at once, unsent, even where
// the interceptor fails open (it must not switch the check off for itself), while another
// caller's calls are still decided by the interceptor and the shared circuit stays closed. Failures of a second and a
// third caller, each adding at most its share, then do open the shared circuit for everyone.
func TestOneCallerCannotOpenCircuit(t *testing.T) {
	for _, transport := range []string{"mcp", "mcp-2025-11-25", "webhook"} {
		for _, failOpen := range []bool{false, true} {
			name := transport + map[bool]string{false: "/closed", true: "/open"}[failOpen]
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each waits out its stalls' timeouts; nothing is shared
				testOneCaller(t, transport, failOpen)
			})
		}
	}
}

func testOneCaller(t *testing.T, transport string, failOpen bool) {
	stall, release := stallOn("stall")
	ics := []intercepttest.Interceptor{{Name: "guard", Type: TypeValidation, Handle: stall}}
	var s *intercepttest.Server
	webhook := transport == "webhook"
	switch transport {
	case "webhook":
		s = intercepttest.StartWebhook(t, ics)
	case "mcp-2025-11-25":
		s = intercepttest.Start(t, ics, intercepttest.Legacy())
	default:
		s = intercepttest.Start(t, ics)
	}
	clock := mcptest.NewClock(time.Unix(1_800_000_000, 0))
	cfg := validator("guard", s.URL())
	// Long enough that a call meant to be decided is, on a loaded machine; the stalls wait it out.
	cfg.Webhook, cfg.FailOpen, cfg.Timeout = webhook, failOpen, time.Second
	cfg.Breaker = backend.BreakerConfig{Failures: 2, Cooldown: time.Minute}
	f := newFixture(t, clock.Now, cfg)
	// Runs first: the Set's close ends a pre-2026 server's session, and the server's close,
	// which both wait for its handlers.
	t.Cleanup(release)
	as := func(sub, text string) *Call {
		c := toolCall(t, `{"text":"`+text+`"}`)
		c.Principal = &authz.Principal{Issuer: "https://idp.example", Subject: sub}
		c.Caller = c.Principal.CallerKey()
		return c
	}
	expect := func(who string, c *Call, blocked bool, reason string) {
		t.Helper()
		v := f.run(t, PhaseRequest, c)
		if r := f.metrics.last(); v.Blocked != blocked || r.reason != reason {
			t.Fatalf("%s: verdict %+v, metrics %+v; want blocked %v, reason %q", who, v, r, blocked, reason)
		}
	}
	// A first call by someone else opens the interceptor's session and connection, so no later
	// call meant to be decided pays for them within its timeout.
	expect("zed, first", as("zed", "fine"), false, "")
	// alice's payloads stall the interceptor: each call waits out the timeout, then her own
	// circuit opens and refuses her next calls without sending them, fail-open or not.
	for range 2 {
		expect("alice stalling", as("alice", "stall"), !failOpen, ReasonTimeout)
	}
	sent := len(s.Invocations())
	expect("alice with her circuit open", as("alice", "fine"), true, ReasonCallerCircuit)
	if n := len(s.Invocations()); n != sent {
		t.Fatalf("alice's refused call reached the interceptor (%d invocations, was %d)", n, sent)
	}
	// bob is still checked: his payloads reach the interceptor, and its verdict decides.
	expect("bob", as("bob", "fine"), false, "")
	if n := len(s.Invocations()); n != sent+1 {
		t.Fatalf("bob's call was not decided by the interceptor (%d invocations, was %d)", n, sent)
	}
	if st := f.metrics.circuits["guard"]; slices.Contains(st, backend.CircuitOpen) {
		t.Fatalf("one caller's failures opened the shared circuit: states %v", st)
	}
	// bob's own failures add at most his share (one of two here); carol's make two callers.
	expect("bob stalling", as("bob", "stall"), !failOpen, ReasonTimeout)
	expect("carol stalling", as("carol", "stall"), !failOpen, ReasonTimeout)
	expect("dave, the circuit open", as("dave", "fine"), !failOpen, ReasonCircuitOpen)
	// After the cooldown, alice's own circuit lets her try again; a success forgets her record.
	clock.Advance(time.Minute + time.Second)
	expect("dave's trial", as("dave", "fine"), false, "")
	expect("alice after the cooldown", as("alice", "fine"), false, "")
	expect("alice again", as("alice", "fine"), false, "")
}
