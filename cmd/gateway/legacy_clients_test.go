package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/devissuer"
	"github.com/mcp-gateway/gateway/internal/mcptest"
)

// The legacy-client harness: real pre-2026 clients (the TypeScript SDK v1 and the go-sdk client
// pinned to a 2025 version) run the same scenario against two targets. "direct" is a go-sdk
// server serving 2025-11-25 itself (stateful, with sessions): the clients must pass there, which
// proves the harness. "gateway" is the gateway in front of a 2026-07-28 go-sdk backend, with
// real tokens and a confirmation policy: what the legacy edge must serve (docs: LEGACY-EDGE §4-§6).
//
//	go test -race -count=1 -run 'TestLegacyClients/direct' ./cmd/gateway
//	go test -race -count=1 -run 'TestLegacyClients/gateway' ./cmd/gateway

// Bounds of the harness.
const (
	// legacyClientTimeout bounds one whole client run (every step), so a hung target fails the
	// test instead of stalling the suite.
	legacyClientTimeout = 90 * time.Second
	// legacyRequestTimeout bounds one request of a client.
	legacyRequestTimeout = 15 * time.Second
	// legacyProgressSteps is how many progress notifications the progress step asks for.
	legacyProgressSteps = 3
)

// Names the scenario uses on every target.
const (
	// toolDeploy is the tool that needs the user's confirmation: the gateway's policy asks for it,
	// the direct server asks itself in the same shape (a form with one boolean "approve").
	toolDeploy = "deploy"
	// directConfirmKey is the inputRequests key the direct server's own confirmation uses.
	directConfirmKey = "confirm"
	// legacyTSClientScript is the Node script that drives the TypeScript SDK.
	legacyTSClientScript = "testdata/legacyclient/client.mjs"
)

// legacySteps are the steps every client runs, in order; close comes last.
var legacySteps = []string{
	"connect", "list_tools", "list_prompts", "list_resources", "list_resource_templates",
	"call_tool", "get_prompt", "read_resource", "progress", "elicitation",
	"confirm_approve", "confirm_decline", "close",
}

// legacyTools are the names a client calls on a target for each tool step.
type legacyTools struct {
	Echo     string `json:"echo"`
	Progress string `json:"progress"`
	Ask      string `json:"ask"`
	Confirm  string `json:"confirm"`
}

// legacyTarget is one MCP endpoint the legacy clients run against, and what lets a test see
// what reached the backend behind it.
type legacyTarget struct {
	name     string
	url      string
	tokenFor func(t *testing.T, sub string) string // a token for the caller sub, "" without authentication
	tools    legacyTools
	prompt   string
	deploys  *atomic.Int64 // how many times deploy really ran (after an approval)
	backend  *mcptest.Server
	scenario map[string]any // extra scenario fields
}

// deployIn is the arguments of the deploy tool.
type deployIn struct {
	Text string `json:"text" jsonschema:"what to deploy"`
}

// deployTool is the plain deploy tool of a backend behind the gateway, whose policy asks for the
// confirmation: it runs, counted, every time it is called.
func deployTool(count *atomic.Int64) mcptest.Option {
	return mcptest.WithTool(&mcp.Tool{Name: toolDeploy, Description: "Deploys text.", InputSchema: deploySchema()},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in deployIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, fmt.Errorf("deploy arguments: %w", err)
			}
			count.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
		})
}

// confirmingDeployTool is the direct server's deploy: it asks for the same confirmation the
// gateway asks for (a form with a boolean "approve", LEGACY-EDGE §6.5) through MRTR, which the
// go-sdk's stateful server turns into a real elicitation/create request, and runs only once
// approved.
func confirmingDeployTool(count *atomic.Int64) mcptest.Option {
	return mcptest.WithTool(&mcp.Tool{Name: toolDeploy, Description: "Deploys text once approved.", InputSchema: deploySchema()},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in deployIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, fmt.Errorf("deploy arguments: %w", err)
			}
			if r, ok := req.Params.InputResponses[directConfirmKey].(*mcp.ElicitResult); ok {
				if approved, _ := r.Content["approve"].(bool); r.Action != "accept" || !approved {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the user did not approve"}}}, nil
				}
				count.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{directConfirmKey: &mcp.ElicitParams{
					Mode:    "form",
					Message: "Allow the call to " + toolDeploy + "?",
					RequestedSchema: &jsonschema.Schema{
						Type:       "object",
						Properties: map[string]*jsonschema.Schema{"approve": {Type: "boolean"}},
						Required:   []string{"approve"},
					},
				}},
				RequestState: "deploy/v1",
			}, nil
		})
}

func deploySchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"text": {Type: "string"}},
		Required:   []string{"text"},
	}
}

// directLegacyTarget is a go-sdk server serving 2025-11-25 (and 2025-06-18) itself, with
// sessions: the reference every client must pass.
func directLegacyTarget(t *testing.T) *legacyTarget {
	t.Helper()
	deploys := &atomic.Int64{}
	srv := mcptest.StartLegacyServer(t, "alpha", confirmingDeployTool(deploys))
	return &legacyTarget{
		name:     "direct",
		url:      srv.URL(),
		tokenFor: func(*testing.T, string) string { return "" },
		tools:    legacyTools{Echo: mcptest.ToolEcho, Progress: mcptest.ToolProgress, Ask: mcptest.ToolAskName, Confirm: toolDeploy},
		prompt:   mcptest.PromptGreet,
		deploys:  deploys,
		backend:  srv,
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
			{ID: "deploy-confirm", Upstream: "alpha", Tools: []string{toolDeploy}, AnyScope: []string{"tools:use"}, Confirm: true},
			{ID: "rest", Upstream: "*", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
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
	alpha := mcptest.StartServer(t, "alpha", deployTool(deploys))
	gw := legacyGateway(t, nil, nil, alpha)
	return &legacyTarget{
		name:     "gateway",
		url:      gw.url(),
		tokenFor: func(t *testing.T, sub string) string { return mintFor(t, gw.iss, sub) },
		tools:    legacyTools{Echo: "alpha__echo", Progress: "alpha__progress", Ask: "alpha__ask_name", Confirm: "alpha__" + toolDeploy},
		prompt:   "alpha__" + mcptest.PromptGreet,
		deploys:  deploys,
		backend:  alpha,
	}
}

// stepResult is what a client saw in one step: the TypeScript script prints it as a JSON line,
// the go-sdk run fills it in directly, and checkLegacySteps asserts it the same way for both.
type stepResult struct {
	Step            string             `json:"step"`
	OK              bool               `json:"ok"`
	Error           string             `json:"error,omitempty"`
	ProtocolVersion string             `json:"protocolVersion,omitempty"`
	Session         bool               `json:"session,omitempty"`
	Names           []string           `json:"names,omitempty"`
	IsError         bool               `json:"isError,omitempty"`
	Text            string             `json:"text,omitempty"`
	Messages        []string           `json:"messages,omitempty"`
	Contents        []resourceText     `json:"contents,omitempty"`
	Progress        []float64          `json:"progress,omitempty"`
	Elicited        []elicitedRequest  `json:"elicited,omitempty"`
	HTTP            []observedExchange `json:"http,omitempty"`
}

// resourceText is one content of a resources/read result.
type resourceText struct {
	URI  string `json:"uri"`
	Text string `json:"text"`
}

// elicitedRequest is an elicitation/create the client was sent: its message and the type of each
// requested property.
type elicitedRequest struct {
	Message    string            `json:"message"`
	Properties map[string]string `json:"properties"`
}

// observedExchange is one HTTP exchange of a client: method, status and which replica answered
// (the balancer's X-Served-By header; empty without a balancer).
type observedExchange struct {
	Method   string `json:"method"`
	Status   int    `json:"status"`
	ServedBy string `json:"servedBy,omitempty"`
}

func (s stepResult) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// repoRoot is the repository root, relative to this package's directory (where go test runs).
const repoRoot = "../.."

// cacheDir is where .ci/setup installs Node and the client SDK: CACHE_DIR as the .ci scripts
// read it, else the repository's .cache.
func cacheDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CACHE_DIR")
	if dir == "" {
		dir = ".cache"
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repoRoot, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// nodeAndSDK returns Node 22 and the TypeScript SDK install directory, failing (never skipping)
// when .ci/setup has not installed them: a skipped client test would hide the legacy edge.
func nodeAndSDK(t *testing.T) (node, sdk string) {
	t.Helper()
	cache := cacheDir(t)
	node = filepath.Join(cache, "node", "node_modules", "node", "bin", "node")
	sdk = filepath.Join(cache, "legacy-client")
	for _, p := range []string{node, filepath.Join(sdk, "node_modules", "@modelcontextprotocol", "sdk", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the TypeScript legacy client needs .ci/setup to have run: %v", err)
		}
	}
	return node, sdk
}

// runTSClient runs the TypeScript SDK client's scenario against url and returns its steps by
// name. A step the script never printed is absent.
func runTSClient(t *testing.T, url, token string, scenario map[string]any) map[string]stepResult {
	t.Helper()
	node, sdk := nodeAndSDK(t)
	sc := map[string]any{"url": url, "timeoutMs": legacyRequestTimeout.Milliseconds()}
	for k, v := range scenario {
		sc[k] = v
	}
	arg, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), legacyClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, legacyTSClientScript, string(arg))
	// The token goes in the environment, never on a command line other processes can read.
	cmd.Env = append(os.Environ(), "LEGACY_CLIENT_SDK="+sdk, "LEGACY_CLIENT_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	steps := map[string]stepResult{}
	sc2 := bufio.NewScanner(&stdout)
	sc2.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc2.Scan() {
		var s stepResult
		if err := json.Unmarshal(sc2.Bytes(), &s); err != nil {
			t.Errorf("the client printed a line that is not a step: %q", sc2.Text())
			continue
		}
		steps[s.Step] = s
	}
	if runErr != nil {
		t.Logf("TypeScript client exited with %v; stderr:\n%s", runErr, stderr.String())
	}
	return steps
}

// tsScenario is the scenario for target, restricted to steps when given.
func tsScenario(tg *legacyTarget, steps ...string) map[string]any {
	sc := map[string]any{"tools": tg.tools, "prompt": tg.prompt, "resource": "readme"}
	if len(steps) > 0 {
		sc["steps"] = steps
	}
	for k, v := range tg.scenario {
		sc[k] = v
	}
	return sc
}

// recordingTransport records each exchange of a go-sdk client like the TypeScript script's
// fetch wrapper does.
type recordingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []observedExchange
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.seen = append(r.seen, observedExchange{Method: req.Method, Status: res.StatusCode, ServedBy: res.Header.Get("X-Served-By")})
	r.mu.Unlock()
	return res, nil
}

// take returns the exchanges since the last take.
func (r *recordingTransport) take() []observedExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.seen
	r.seen = nil
	return out
}

// goClient is a go-sdk client pinned to a 2025 version, answering elicitations as the current
// step says.
type goClient struct {
	mu       sync.Mutex
	answer   *mcp.ElicitResult
	elicited []elicitedRequest
	progress chan float64
	rec      *recordingTransport
}

func (g *goClient) elicit(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if b, err := json.Marshal(req.Params.RequestedSchema); err == nil {
		_ = json.Unmarshal(b, &schema)
	}
	e := elicitedRequest{Message: req.Params.Message, Properties: map[string]string{}}
	for k, v := range schema.Properties {
		e.Properties[k] = v.Type
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.elicited = append(g.elicited, e)
	return g.answer, nil
}

// step sets what elicitations get answered in the next step and forgets what was asked before.
func (g *goClient) step(answer *mcp.ElicitResult) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answer, g.elicited = answer, nil
}

func (g *goClient) asked() []elicitedRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.elicited)
}

// runGoClient runs the scenario with the go-sdk v1.8.0 client pinned to version.
func runGoClient(t *testing.T, url, token, version string, tools legacyTools, prompt string, only ...string) map[string]stepResult {
	t.Helper()
	own := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(own.CloseIdleConnections)
	g := &goClient{progress: make(chan float64, 64), rec: &recordingTransport{base: own}}
	g.step(&mcp.ElicitResult{Action: "decline"})
	opts := []mcptest.ClientOption{
		mcptest.WithProtocolVersion(version),
		mcptest.WithRoundTripper(g.rec),
		mcptest.WithElicitation(g.elicit),
		mcptest.WithProgress(func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case g.progress <- req.Params.Progress:
			default:
			}
		}),
	}
	if token != "" {
		opts = append(opts, mcptest.WithBearer(token))
	}
	ctx, cancel := context.WithTimeout(t.Context(), legacyClientTimeout)
	defer cancel()
	steps := map[string]stepResult{}
	var cs *mcp.ClientSession
	run := func(name string, f func(ctx context.Context, s *stepResult) error) {
		if len(only) > 0 && !slices.Contains(only, name) {
			return
		}
		s := stepResult{Step: name, OK: true}
		rctx, rcancel := context.WithTimeout(ctx, legacyRequestTimeout)
		err := f(rctx, &s)
		rcancel()
		if err != nil {
			s.OK, s.Error = false, err.Error()
		}
		s.Elicited, s.HTTP = g.asked(), g.rec.take()
		steps[name] = s
	}
	run("connect", func(ctx context.Context, s *stepResult) error {
		var err error
		cs, err = mcptest.Dial(ctx, url, opts...)
		if err != nil {
			return err
		}
		s.ProtocolVersion = cs.InitializeResult().ProtocolVersion
		s.Session = cs.ID() != ""
		return nil
	})
	if cs == nil {
		return steps
	}
	t.Cleanup(func() { _ = cs.Close() })
	run("list_tools", func(ctx context.Context, s *stepResult) error {
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			s.Names = append(s.Names, tool.Name)
		}
		return nil
	})
	run("list_prompts", func(ctx context.Context, s *stepResult) error {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return err
			}
			s.Names = append(s.Names, p.Name)
		}
		return nil
	})
	var uris []string
	run("list_resources", func(ctx context.Context, s *stepResult) error {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return err
			}
			s.Names = append(s.Names, r.URI)
		}
		uris = s.Names
		return nil
	})
	run("list_resource_templates", func(ctx context.Context, s *stepResult) error {
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return err
			}
			s.Names = append(s.Names, r.URITemplate)
		}
		return nil
	})
	call := func(ctx context.Context, s *stepResult, p *mcp.CallToolParams) error {
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			return err
		}
		s.IsError, s.Text = res.IsError, mcptest.ResultText(res)
		return nil
	}
	run("call_tool", func(ctx context.Context, s *stepResult) error {
		return call(ctx, s, &mcp.CallToolParams{Name: tools.Echo, Arguments: map[string]any{"text": "hello legacy"}})
	})
	run("get_prompt", func(ctx context.Context, s *stepResult) error {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Arguments: map[string]string{"name": "Ada"}})
		if err != nil {
			return err
		}
		for _, m := range res.Messages {
			if tc, ok := m.Content.(*mcp.TextContent); ok {
				s.Messages = append(s.Messages, tc.Text)
			}
		}
		return nil
	})
	run("read_resource", func(ctx context.Context, s *stepResult) error {
		i := slices.IndexFunc(uris, func(u string) bool { return strings.Contains(u, "readme") })
		if i < 0 {
			return fmt.Errorf("no listed resource URI contains readme: %v", uris)
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uris[i]})
		if err != nil {
			return err
		}
		for _, c := range res.Contents {
			s.Contents = append(s.Contents, resourceText{URI: c.URI, Text: c.Text})
		}
		return nil
	})
	run("progress", func(ctx context.Context, s *stepResult) error {
		p := &mcp.CallToolParams{Name: tools.Progress, Arguments: map[string]any{"steps": legacyProgressSteps}}
		p.SetProgressToken("legacy-progress")
		if err := call(ctx, s, p); err != nil {
			return err
		}
		// The go-sdk hands notifications to the handler on its own goroutine: wait, bounded, for
		// the ones sent before the result.
		for len(s.Progress) < legacyProgressSteps {
			select {
			case v := <-g.progress:
				s.Progress = append(s.Progress, v)
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	})
	run("elicitation", func(ctx context.Context, s *stepResult) error {
		g.step(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}})
		return call(ctx, s, &mcp.CallToolParams{Name: tools.Ask, Arguments: map[string]any{}})
	})
	run("confirm_approve", func(ctx context.Context, s *stepResult) error {
		g.step(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}})
		return call(ctx, s, &mcp.CallToolParams{Name: tools.Confirm, Arguments: map[string]any{"text": "approved"}})
	})
	run("confirm_decline", func(ctx context.Context, s *stepResult) error {
		g.step(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}})
		return call(ctx, s, &mcp.CallToolParams{Name: tools.Confirm, Arguments: map[string]any{"text": "declined"}})
	})
	g.step(&mcp.ElicitResult{Action: "decline"})
	run("close", func(context.Context, *stepResult) error { return cs.Close() })
	return steps
}

// checkLegacySteps asserts every step a client ran against tg, as subtests named after the
// steps. wantVersion is the version the client asked for, which a target serving it must agree.
// deploysBefore is tg's deploy count before the client ran.
func checkLegacySteps(t *testing.T, tg *legacyTarget, steps map[string]stepResult, wantVersion string, deploysBefore int64, only ...string) {
	t.Helper()
	names := legacySteps
	if len(only) > 0 {
		names = only
	}
	var deploysAfterApprove int64 = -1
	for _, name := range names {
		s, ran := steps[name]
		t.Run(name, func(t *testing.T) {
			if !ran {
				t.Fatalf("the step did not run (an earlier step failed)")
			}
			if !s.OK {
				t.Fatalf("failed: %s", s.Error)
			}
			checkLegacyStep(t, tg, s, wantVersion)
		})
		if name == "connect" && !s.OK {
			t.Fatalf("no session, so the other %d steps did not run", len(names)-1)
		}
		switch name {
		case "confirm_approve":
			deploysAfterApprove = tg.deploys.Load()
			if s.OK && deploysAfterApprove != deploysBefore+1 {
				t.Errorf("confirm_approve: deploy ran %d times, want exactly once", deploysAfterApprove-deploysBefore)
			}
		case "confirm_decline":
			if s.OK && deploysAfterApprove >= 0 && tg.deploys.Load() != deploysAfterApprove {
				t.Errorf("confirm_decline: the declined deploy reached the backend")
			}
		}
	}
}

// checkLegacyStep asserts one step's result.
func checkLegacyStep(t *testing.T, tg *legacyTarget, s stepResult, wantVersion string) {
	t.Helper()
	wantNames := func(want ...string) {
		for _, w := range want {
			if !slices.ContainsFunc(s.Names, func(n string) bool { return strings.Contains(n, w) }) {
				t.Errorf("%s lacks %s: %v", s.Step, w, s.Names)
			}
		}
	}
	wantElicited := func(property, typ string) {
		if len(s.Elicited) != 1 || s.Elicited[0].Properties[property] != typ {
			t.Errorf("%s: want one elicitation/create asking for %s (%s), got %+v", s.Step, property, typ, s.Elicited)
		}
	}
	switch s.Step {
	case "connect":
		if s.ProtocolVersion != wantVersion || !s.Session {
			t.Errorf("connect: negotiated %q with session %v, want %s with a session", s.ProtocolVersion, s.Session, wantVersion)
		}
	case "list_tools":
		wantNames(tg.tools.Echo, tg.tools.Progress, tg.tools.Ask, tg.tools.Confirm)
	case "list_prompts":
		wantNames(tg.prompt)
	case "list_resources":
		wantNames("readme")
	case "list_resource_templates":
		wantNames("items/{id}")
	case "call_tool":
		if s.IsError || s.Text != "hello legacy" {
			t.Errorf("call_tool: %s", s)
		}
	case "get_prompt":
		if len(s.Messages) == 0 || !strings.Contains(s.Messages[0], "Ada") {
			t.Errorf("get_prompt: %s", s)
		}
	case "read_resource":
		if len(s.Contents) != 1 || s.Contents[0].Text != mcptest.ReadmeText {
			t.Errorf("read_resource: %s", s)
		}
	case "progress":
		if s.IsError || s.Text != fmt.Sprintf("done %d", legacyProgressSteps) || len(s.Progress) != legacyProgressSteps {
			t.Errorf("progress: want done %d after %d progress notifications, got %s", legacyProgressSteps, legacyProgressSteps, s)
		}
	case "elicitation":
		wantElicited("name", "string")
		if s.IsError || s.Text != "Hello, Ada" {
			t.Errorf("elicitation: %s", s)
		}
	case "confirm_approve":
		wantElicited("approve", "boolean")
		if s.IsError || s.Text != "approved" {
			t.Errorf("confirm_approve: %s", s)
		}
	case "confirm_decline":
		wantElicited("approve", "boolean")
		if !s.IsError {
			t.Errorf("confirm_decline: want an isError result, got %s", s)
		}
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
	for _, target := range legacyTargets() {
		t.Run(target.name, func(t *testing.T) {
			tg := target.start(t)
			t.Run("typescript-sdk-1.32.2", func(t *testing.T) {
				before := tg.deploys.Load()
				steps := runTSClient(t, tg.url, tg.tokenFor(t, "alice"), tsScenario(tg))
				checkLegacySteps(t, tg, steps, "2025-11-25", before)
			})
			for _, v := range []string{"2025-11-25", "2025-06-18"} {
				t.Run("go-sdk-1.8.0-"+v, func(t *testing.T) {
					before := tg.deploys.Load()
					steps := runGoClient(t, tg.url, tg.tokenFor(t, "alice"), v, tg.tools, tg.prompt)
					checkLegacySteps(t, tg, steps, v, before)
				})
			}
		})
	}
}
