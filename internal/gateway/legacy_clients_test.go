package gateway

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// The legacy-client tests: real pre-2026 clients (internal/testsupport/legacyclient: the TypeScript SDK v1
// and the go-sdk client pinned to a 2025 version) run the same scenario against two targets.
// "direct" is a go-sdk server serving 2025-11-25 itself (stateful, with sessions): the clients
// must pass there, which proves the harness. "gateway" is the gateway in front of a 2026-07-28
// go-sdk backend, with real tokens and a confirmation policy: what the legacy edge must serve
// (issue 17): sealed sessions, translated results, and the backend's and the gateway's own
// requests for input turned into elicitation/create requests to the client.
//
//	go test -race -count=1 -run 'TestLegacyClients/direct' ./internal/gateway
//	go test -race -count=1 -run 'TestLegacyClients/gateway' ./internal/gateway

// legacyTarget is one MCP endpoint the legacy clients run against, and what lets a test see
// what reached the backend behind it.
type legacyTarget struct {
	url      string
	tokenFor func(t *testing.T, sub string) string // a token for the caller sub, "" without authentication
	tools    legacyclient.Tools
	prompt   string
	deploys  *atomic.Int64 // how many times deploy really ran (after an approval)
	// roundsConfirmed: the target confirms ask_rounds before its rounds (the gateway's policy).
	roundsConfirmed bool
	// steps are the steps the target passes; nil is all of them.
	steps   []string
	backend *mcptest.Server
}

// scenario is the client scenario for the caller sub on tg.
func (tg *legacyTarget) scenario(t *testing.T, sub string) legacyclient.Scenario {
	return legacyclient.Scenario{URL: tg.url, Token: tg.tokenFor(t, sub), Tools: tg.tools, Prompt: tg.prompt, Steps: tg.steps}
}

// directLegacyTarget is a go-sdk server serving 2025-11-25 (and 2025-06-18) itself, with
// sessions: the reference every client must pass.
func directLegacyTarget(t *testing.T) *legacyTarget {
	t.Helper()
	deploys := &atomic.Int64{}
	srv := mcptest.StartLegacyServer(t, "alpha", legacyclient.ConfirmingDeployTool(deploys), legacyclient.AskRoundsTool())
	return &legacyTarget{
		url:      srv.URL(),
		tokenFor: func(*testing.T, string) string { return "" },
		tools: legacyclient.Tools{Echo: mcptest.ToolEcho, Progress: mcptest.ToolProgress,
			Ask: mcptest.ToolAskName, Confirm: legacyclient.ToolDeploy, Rounds: legacyclient.ToolAskRounds},
		prompt:  mcptest.PromptGreet,
		deploys: deploys,
		backend: srv,
		// The go-sdk's own server turns one MRTR round into a request to its client, not two:
		// the reference has nothing to show for more.
		steps: slices.DeleteFunc(legacyclient.AllSteps(), func(s string) bool { return s == "rounds_2" || s == "rounds_3" }),
	}
}

// legacyGateway starts the gateway in front of backends with iss's tokens (a new issuer when
// nil), the test sealing key and a policy that asks for confirmation of alpha's deploy; mutate
// may change more.
func legacyGateway(t *testing.T, iss *devissuer.Issuer, mutate func(*Config), backends ...*mcptest.Server) *authGateway {
	t.Helper()
	if iss == nil {
		iss = newIssuer(t)
	}
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "deploy-confirm", Upstream: "alpha", Tools: []string{legacyclient.ToolDeploy}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			// The gateway's confirmation, then the backend's own rounds of input: one call that
			// needs several rounds.
			{ID: "rounds-confirm", Upstream: "alpha", Tools: []string{legacyclient.ToolAskRounds}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "rest", Upstream: "*", Tools: []string{"*"}, Prompts: []string{"*"}, Resources: []string{"**"}, AnyScope: []string{"tools:use"}},
		}
		if mutate != nil {
			mutate(c)
		}
	}, backends...)
	return &authGateway{gw: gw, iss: iss}
}

// gatewayLegacyTarget is the gateway in front of a 2026-07-28 go-sdk backend: the legacy edge.
func gatewayLegacyTarget(t *testing.T) *legacyTarget {
	t.Helper()
	deploys := &atomic.Int64{}
	alpha := mcptest.StartServer(t, "alpha", legacyclient.DeployTool(deploys), legacyclient.AskRoundsTool())
	gw := legacyGateway(t, nil, nil, alpha)
	return &legacyTarget{
		url:      gw.url(),
		tokenFor: func(t *testing.T, sub string) string { return mintFor(t, gw.iss, sub) },
		tools: legacyclient.Tools{Echo: "alpha__echo", Progress: "alpha__progress",
			Ask: "alpha__ask_name", Confirm: "alpha__" + legacyclient.ToolDeploy, Rounds: "alpha__" + legacyclient.ToolAskRounds},
		roundsConfirmed: true,
		prompt:          "alpha__" + mcptest.PromptGreet,
		deploys:         deploys,
		backend:         alpha,
	}
}

// legacyTargets are the targets every legacy scenario runs against, by subtest name.
func legacyTargets() []struct {
	name  string
	start func(*testing.T) *legacyTarget
} {
	return []struct {
		name  string
		start func(*testing.T) *legacyTarget
	}{{"direct", directLegacyTarget}, {"gateway", gatewayLegacyTarget}}
}

// TestLegacyClients runs the pinned pre-2026 clients through every step against the direct
// reference and the gateway. The direct subtests prove the harness; the gateway subtests are
// what the legacy edge must pass.
func TestLegacyClients(t *testing.T) {
	t.Parallel()
	for _, target := range legacyTargets() {
		t.Run(target.name, func(t *testing.T) {
			tg := target.start(t)
			t.Run("typescript-sdk-"+legacyclient.TSVersion, func(t *testing.T) {
				sc, before := tg.scenario(t, "alice"), tg.deploys.Load()
				steps := legacyclient.RunTS(t, sc)
				legacyclient.Check(t, sc, steps, legacyclient.Expect{Version: legacyclient.TSProtocol, Deploys: tg.deploys,
					DeploysBefore: before, RoundsConfirmed: tg.roundsConfirmed})
			})
			for _, v := range []string{"2025-11-25", "2025-06-18"} {
				t.Run("go-sdk-1.8.0-"+v, func(t *testing.T) {
					sc, before := tg.scenario(t, "alice"), tg.deploys.Load()
					steps := legacyclient.RunGo(t, sc, v)
					legacyclient.Check(t, sc, steps, legacyclient.Expect{Version: v, Deploys: tg.deploys, DeploysBefore: before,
						RoundsConfirmed: tg.roundsConfirmed})
				})
			}
		})
	}
}
