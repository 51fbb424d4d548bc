package legacyclient

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// Expect is what Check holds a run to besides the step results themselves.
type Expect struct {
	// Version is the version the client asked for, which the target must agree.
	Version string
	// NoSession expects no Mcp-Session-Id, as from a stateless server; by default a target
	// must mint one at initialize.
	NoSession bool
	// RoundsConfirmed expects the target to ask for a confirmation (one approve form) before
	// the rounds of ask_rounds, as a policy that confirms it does.
	RoundsConfirmed bool
	// Deploys counts the deploy tool's real runs at the backend; DeploysBefore is its value
	// before the client ran. A confirmation approved must run deploy exactly once, one declined
	// not at all.
	Deploys       *atomic.Int64
	DeploysBefore int64
}

// Check asserts every step of sc a client ran, as subtests named after the steps. A failed
// connect stops the test: nothing else can have run.
func Check(t *testing.T, sc Scenario, steps map[string]Step, want Expect) {
	t.Helper()
	checkSteps(t, sc.steps(), steps, func(t *testing.T, s Step) { checkStep(t, sc, s, want) })
	// The steps ran before this check, so only the total is known: the approved deploy ran
	// once (its text came back) and the declined one never reached the backend.
	approved, declined := steps["confirm_approve"], steps["confirm_decline"]
	if want.Deploys == nil || (!approved.OK && !declined.OK) {
		return
	}
	wantRuns := int64(0)
	if approved.OK {
		wantRuns = 1
	}
	if n := want.Deploys.Load() - want.DeploysBefore; n != wantRuns {
		t.Errorf("deploy ran %d times at the backend, want %d (approved once, declined never)", n, wantRuns)
	}
}

// checkSteps asserts each step of names with check, as subtests named after the steps, once it
// ran and completed. A failed connect stops the test: nothing else can have run.
func checkSteps(t *testing.T, names []string, steps map[string]Step, check func(*testing.T, Step)) {
	t.Helper()
	for _, name := range names {
		s, ran := steps[name]
		t.Run(name, func(t *testing.T) {
			if !ran {
				t.Fatal("the step did not run")
			}
			if !s.OK {
				t.Fatalf("failed: %s", s.Error)
			}
			check(t, s)
		})
		if name == "connect" && !s.OK {
			t.Fatalf("no session, so the other %d steps did not run", len(names)-1)
		}
	}
}

// checkStep asserts one step's result.
func checkStep(t *testing.T, sc Scenario, s Step, want Expect) {
	t.Helper()
	if checkSharedStep(t, s, sc.Prompt) {
		return
	}
	wantElicited := func(property, typ string) {
		if len(s.Elicited) != 1 || s.Elicited[0].Properties[property] != typ {
			t.Errorf("%s: want one elicitation/create asking for %s (%s), got %+v", s.Step, property, typ, s.Elicited)
		}
	}
	switch s.Step {
	case "connect":
		if s.ProtocolVersion != want.Version || s.Session == want.NoSession {
			t.Errorf("connect: negotiated %q with a session id %v, want %s with one %v", s.ProtocolVersion, s.Session, want.Version, !want.NoSession)
		}
	case "list_tools":
		wantNames(t, s, sc.Tools.Echo, sc.Tools.Progress, sc.Tools.Ask, sc.Tools.Confirm)
	case "elicitation":
		wantElicited("name", "string")
		if s.IsError || s.Text != "Hello, "+askedName {
			t.Errorf("elicitation: %s", s)
		}
	case "confirm_approve":
		wantElicited("approve", "boolean")
		if s.IsError || s.Text != approvedText {
			t.Errorf("confirm_approve: %s", s)
		}
	case "confirm_decline":
		wantElicited("approve", "boolean")
		if !s.IsError {
			t.Errorf("confirm_decline: want an isError result, got %s", s)
		}
	case "rounds_1", "rounds_2", "rounds_3":
		checkRounds(t, s, want.RoundsConfirmed)
	}
}

// checkSharedStep asserts a step both SDK clients' scenarios run alike (client.mjs of either
// revision, and RunGo), prompt being the scenario's prompt; false for any other step.
func checkSharedStep(t *testing.T, s Step, prompt string) bool {
	t.Helper()
	switch s.Step {
	case "list_prompts":
		wantNames(t, s, prompt)
	case "list_resources":
		wantNames(t, s, resourceMatch)
	case "list_resource_templates":
		wantNames(t, s, templateMatch)
	case "call_tool":
		if s.IsError || s.Text != echoArgument {
			t.Errorf("call_tool: %s", s)
		}
	case "get_prompt":
		if len(s.Messages) == 0 || !strings.Contains(s.Messages[0], askedName) {
			t.Errorf("get_prompt: %s", s)
		}
	case "read_resource":
		if len(s.Contents) != 1 || s.Contents[0].Text != mcptest.ReadmeText {
			t.Errorf("read_resource: %s", s)
		}
	case "progress":
		if s.IsError || s.Text != fmt.Sprintf("done %d", ProgressSteps) || len(s.Progress) != ProgressSteps {
			t.Errorf("progress: want done %d after %d progress notifications, got %s", ProgressSteps, ProgressSteps, s)
		}
	default:
		return false
	}
	return true
}

// wantNames asserts that each of want is part of a name the step s listed.
func wantNames(t *testing.T, s Step, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(s.Names, func(n string) bool { return strings.Contains(n, w) }) {
			t.Errorf("%s lacks %s: %v", s.Step, w, s.Names)
		}
	}
}

// checkRounds asserts a rounds_N step: N names asked for one after the other (after the
// target's confirmation, when it asks for one), and all N in the result.
func checkRounds(t *testing.T, s Step, confirmed bool) {
	t.Helper()
	n, _ := strconv.Atoi(strings.TrimPrefix(s.Step, "rounds_"))
	var props []string
	for _, e := range s.Elicited {
		for p := range e.Properties {
			props = append(props, p)
		}
	}
	want := slices.Repeat([]string{"name"}, n)
	if confirmed {
		want = append([]string{"approve"}, want...)
	}
	if !slices.Equal(props, want) {
		t.Errorf("%s: asked for %v, want %v", s.Step, props, want)
	}
	if wantText := "names: " + strings.Join(slices.Repeat([]string{askedName}, n), ","); s.IsError || s.Text != wantText {
		t.Errorf("%s: %s, want %q", s.Step, s, wantText)
	}
}

// ServedBy returns the replicas that answered the run's requests, in order, from the
// balancer's X-Served-By header (requests answered without one are left out).
func ServedBy(steps map[string]Step) []string { return servedBy(steps, AllSteps()) }

// servedBy is ServedBy over the steps named in order.
func servedBy(steps map[string]Step, order []string) []string {
	var out []string
	for _, name := range order {
		for _, ex := range steps[name].HTTP {
			if ex.ServedBy != "" {
				out = append(out, ex.ServedBy)
			}
		}
	}
	return out
}
