package legacyclient

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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/nodecache"
)

// Bounds of a client run.
const (
	// RunTimeout bounds one whole client run (every step), so a hung target fails the test
	// instead of stalling the suite.
	RunTimeout = 90 * time.Second
	// RequestTimeout bounds one request of a client.
	RequestTimeout = 15 * time.Second
	// ProgressSteps is how many progress notifications the progress step asks for.
	ProgressSteps = 3
)

// The pinned clients and what they negotiate.
const (
	// TSVersion is the TypeScript SDK release node/package-lock.json pins.
	TSVersion = "1.32.2"
	// TSProtocol is the only version TSVersion speaks.
	TSProtocol = "2025-11-25"
)

// ServedByHeader names the replica that answered, as a balancer in front of replicas adds it.
const ServedByHeader = "X-Served-By"

// What the steps send and expect, and where the TypeScript client lives.
const (
	resourceMatch  = "readme"     // a substring of the resource URI read_resource reads
	templateMatch  = "items/{id}" // a substring of the template list_resource_templates expects
	echoArgument   = "hello legacy"
	askedName      = "Ada"
	approvedText   = "approved"
	declinedText   = "declined"
	scriptName     = "client.mjs"
	sdkCacheSubdir = "legacy-client"
)

// AllSteps are the steps a client runs by default, in order; close comes last.
func AllSteps() []string {
	return []string{
		"connect", "list_tools", "list_prompts", "list_resources", "list_resource_templates",
		"call_tool", "get_prompt", "read_resource", "progress", "elicitation",
		"confirm_approve", "confirm_decline", "rounds_1", "rounds_2", "rounds_3", "close",
	}
}

// Tools are the names a client calls on a target for each tool step: the mcptest echo,
// progress and ask_name tools and the deploy tool, under the target's names for them.
type Tools struct {
	Echo     string `json:"echo"`
	Progress string `json:"progress"`
	Ask      string `json:"ask"`
	Confirm  string `json:"confirm"`
	// Rounds is the ask_rounds tool (AskRoundsTool) of the rounds_N steps, which call it
	// asking for N rounds of input.
	Rounds string `json:"rounds"`
}

// Scenario is what a client runs against one MCP endpoint.
type Scenario struct {
	// URL is the MCP endpoint.
	URL string
	// Token is sent as a bearer token on every request; empty sends none.
	Token string
	// Tools names the tools of the tool steps.
	Tools Tools
	// Prompt is the mcptest greet prompt under the target's name for it.
	Prompt string
	// Steps restricts the run to these steps, in AllSteps order; empty runs them all.
	Steps []string
	// Arguments replaces, by step name, the tool arguments of call_tool, progress,
	// elicitation, confirm_approve and confirm_decline, for targets whose tools are not the
	// test backends' (Check expects the defaults).
	Arguments map[string]map[string]any
}

// steps returns the steps the scenario runs.
func (sc Scenario) steps() []string {
	if len(sc.Steps) == 0 {
		return AllSteps()
	}
	return slices.DeleteFunc(AllSteps(), func(s string) bool { return !slices.Contains(sc.Steps, s) })
}

// Step is what a client saw in one step: the TypeScript script prints it as a JSON line, the
// go-sdk run fills it in directly.
type Step struct {
	Step            string   `json:"step"`
	OK              bool     `json:"ok"`
	Error           string   `json:"error,omitempty"`
	ProtocolVersion string   `json:"protocolVersion,omitempty"`
	Session         bool     `json:"session,omitempty"`
	Names           []string `json:"names,omitempty"`
	// RequiredScopes are the scopes the gateway marks listed tools with (by name), where a
	// call would need more than the caller's token has.
	RequiredScopes map[string][]string `json:"requiredScopes,omitempty"`
	IsError        bool                `json:"isError,omitempty"`
	Text           string              `json:"text,omitempty"`
	Messages       []string            `json:"messages,omitempty"`
	Contents       []ResourceText      `json:"contents,omitempty"`
	Progress       []float64           `json:"progress,omitempty"`
	Elicited       []Elicited          `json:"elicited,omitempty"`
	HTTP           []HTTPExchange      `json:"http,omitempty"`
	// Structured reports a tool result with structuredContent (2025-03-26 clients).
	Structured bool `json:"structured,omitempty"`
	// Extras are the members of listed tools that 2025-03-26 does not define.
	Extras []string `json:"extras,omitempty"`
	// Batch are the answers to a batch, by request id.
	Batch map[string]BatchAnswer `json:"batch,omitempty"`
}

// ResourceText is one content of a resources/read result.
type ResourceText struct {
	URI  string `json:"uri"`
	Text string `json:"text"`
}

// Elicited is an elicitation/create the client was sent: its message and the JSON type of each
// requested property.
type Elicited struct {
	Message    string            `json:"message"`
	Properties map[string]string `json:"properties"`
}

// HTTPExchange is one HTTP exchange of a client: method, status and which replica answered (the
// balancer's X-Served-By header; empty without a balancer).
type HTTPExchange struct {
	Method   string `json:"method"`
	Status   int    `json:"status"`
	ServedBy string `json:"servedBy,omitempty"`
}

func (s Step) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// packageDir is this package's source directory, where node/ lives.
func packageDir(tb testing.TB) string {
	tb.Helper()
	return nodecache.CallerDir(tb)
}

// nodeAndSDK returns Node 22 and the SDK install directory, failing when .ci/setup has not
// installed them.
func nodeAndSDK(tb testing.TB) (node, sdk string) {
	tb.Helper()
	return nodecache.Require(tb, "the TypeScript legacy client", sdkCacheSubdir, "node_modules/@modelcontextprotocol/sdk/package.json")
}

// RunTS runs the scenario with the TypeScript SDK client and returns its steps by name. A step
// the script never printed is absent.
func RunTS(tb testing.TB, sc Scenario) map[string]Step {
	tb.Helper()
	node, sdk := nodeAndSDK(tb)
	arg, err := json.Marshal(map[string]any{
		"url": sc.URL, "tools": sc.Tools, "prompt": sc.Prompt, "resource": resourceMatch,
		"steps": sc.steps(), "timeoutMs": RequestTimeout.Milliseconds(), "arguments": sc.Arguments,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return runScript(tb, "the TypeScript client", node, filepath.Join(packageDir(tb), "node", scriptName), string(arg), sdk, sc.Token)
}

// runScript runs a client script with node, scenario as its argument, sdk as LEGACY_CLIENT_SDK
// and the token in the environment (never on a command line other processes can read), and
// returns the steps it printed by name. A step the script never printed is absent.
func runScript(tb testing.TB, what, node, script, scenario, sdk, token string) map[string]Step {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, scenario)
	cmd.Env = append(os.Environ(), "LEGACY_CLIENT_SDK="+sdk, "LEGACY_CLIENT_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	steps := map[string]Step{}
	lines := bufio.NewScanner(&stdout)
	lines.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for lines.Scan() {
		var s Step
		if err := json.Unmarshal(lines.Bytes(), &s); err != nil {
			tb.Errorf("%s printed a line that is not a step: %q", what, lines.Text())
			continue
		}
		steps[s.Step] = s
	}
	if runErr != nil {
		tb.Logf("%s exited with %v; stderr:\n%s", what, runErr, stderr.String())
	}
	return steps
}

// recordingTransport records each exchange of a go-sdk client like the script's fetch wrapper.
type recordingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []HTTPExchange
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.seen = append(r.seen, HTTPExchange{Method: req.Method, Status: res.StatusCode, ServedBy: res.Header.Get(ServedByHeader)})
	r.mu.Unlock()
	return res, nil
}

// take returns the exchanges since the last take.
func (r *recordingTransport) take() []HTTPExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.seen
	r.seen = nil
	return out
}

// goClient answers elicitations as the current step says and remembers what it was asked.
type goClient struct {
	mu       sync.Mutex
	answer   *mcp.ElicitResult
	elicited []Elicited
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
	e := Elicited{Message: req.Params.Message, Properties: map[string]string{}}
	for k, v := range schema.Properties {
		e.Properties[k] = v.Type
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.elicited = append(g.elicited, e)
	if g.answer == nil {
		return answerAsAsked(e), nil
	}
	return g.answer, nil
}

// answerAsAsked accepts an elicitation with what each property asks for: approve is true, name
// is askedName.
func answerAsAsked(e Elicited) *mcp.ElicitResult {
	content := map[string]any{}
	for p := range e.Properties {
		switch p {
		case "approve":
			content[p] = true
		case "name":
			content[p] = askedName
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// step sets the answer to elicitations in the next step and forgets what was asked before.
func (g *goClient) step(answer *mcp.ElicitResult) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answer, g.elicited = answer, nil
}

func (g *goClient) asked() []Elicited {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.elicited)
}

// RunGo runs the scenario with the go-sdk v1.8.0 client pinned to version and returns its steps
// by name.
func RunGo(tb testing.TB, sc Scenario, version string) map[string]Step {
	tb.Helper()
	own := http.DefaultTransport.(*http.Transport).Clone()
	tb.Cleanup(own.CloseIdleConnections)
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
	if sc.Token != "" {
		opts = append(opts, mcptest.WithBearer(sc.Token))
	}
	ctx, cancel := context.WithTimeout(tb.Context(), RunTimeout)
	defer cancel()
	wanted := sc.steps()
	steps := map[string]Step{}
	var cs *mcp.ClientSession
	run := func(name string, f func(ctx context.Context, s *Step) error) {
		if !slices.Contains(wanted, name) {
			return
		}
		s := Step{Step: name, OK: true}
		rctx, rcancel := context.WithTimeout(ctx, RequestTimeout)
		err := f(rctx, &s)
		rcancel()
		if err != nil {
			s.OK, s.Error = false, err.Error()
		}
		s.Elicited, s.HTTP = g.asked(), g.rec.take()
		steps[name] = s
	}
	run("connect", func(ctx context.Context, s *Step) error {
		var err error
		cs, err = mcptest.Dial(ctx, sc.URL, opts...)
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
	tb.Cleanup(func() { _ = cs.Close() })
	runGoSteps(cs, sc, g, run)
	g.step(&mcp.ElicitResult{Action: "decline"})
	run("close", func(context.Context, *Step) error { return cs.Close() })
	return steps
}

// runGoSteps runs the steps between connect and close on an open session.
func runGoSteps(cs *mcp.ClientSession, sc Scenario, g *goClient, run func(string, func(context.Context, *Step) error)) {
	run("list_tools", func(ctx context.Context, s *Step) error {
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			s.Names = append(s.Names, tool.Name)
			if scopes := requiredScopes(tool.Meta); scopes != nil {
				if s.RequiredScopes == nil {
					s.RequiredScopes = map[string][]string{}
				}
				s.RequiredScopes[tool.Name] = scopes
			}
		}
		return nil
	})
	run("list_prompts", func(ctx context.Context, s *Step) error {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return err
			}
			s.Names = append(s.Names, p.Name)
		}
		return nil
	})
	run("list_resources", func(ctx context.Context, s *Step) error {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return err
			}
			s.Names = append(s.Names, r.URI)
		}
		return nil
	})
	run("list_resource_templates", func(ctx context.Context, s *Step) error {
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return err
			}
			s.Names = append(s.Names, r.URITemplate)
		}
		return nil
	})
	call := func(ctx context.Context, s *Step, p *mcp.CallToolParams) error {
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			return err
		}
		s.IsError, s.Text = res.IsError, mcptest.ResultText(res)
		return nil
	}
	run("call_tool", func(ctx context.Context, s *Step) error {
		return call(ctx, s, &mcp.CallToolParams{Name: sc.Tools.Echo, Arguments: sc.args("call_tool", map[string]any{"text": echoArgument})})
	})
	run("get_prompt", func(ctx context.Context, s *Step) error {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: sc.Prompt, Arguments: map[string]string{"name": askedName}})
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
	run("read_resource", func(ctx context.Context, s *Step) error {
		// Like the TypeScript script: find the URI in this step's own listing.
		var uri string
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return err
			}
			if uri == "" && strings.Contains(r.URI, resourceMatch) {
				uri = r.URI
			}
		}
		if uri == "" {
			return fmt.Errorf("no listed resource URI contains %s", resourceMatch)
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return err
		}
		for _, c := range res.Contents {
			s.Contents = append(s.Contents, ResourceText{URI: c.URI, Text: c.Text})
		}
		return nil
	})
	run("progress", func(ctx context.Context, s *Step) error {
		p := &mcp.CallToolParams{Name: sc.Tools.Progress, Arguments: sc.args("progress", map[string]any{"steps": ProgressSteps})}
		p.SetProgressToken("legacy-progress")
		if err := call(ctx, s, p); err != nil {
			return err
		}
		// The go-sdk hands notifications to the handler on its own goroutine: wait, bounded by
		// the step's deadline, for the ones sent before the result.
		for len(s.Progress) < ProgressSteps {
			select {
			case v := <-g.progress:
				s.Progress = append(s.Progress, v)
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	})
	run("elicitation", func(ctx context.Context, s *Step) error {
		g.step(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": askedName}})
		return call(ctx, s, &mcp.CallToolParams{Name: sc.Tools.Ask, Arguments: sc.args("elicitation", map[string]any{})})
	})
	run("confirm_approve", func(ctx context.Context, s *Step) error {
		g.step(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}})
		return call(ctx, s, &mcp.CallToolParams{Name: sc.Tools.Confirm, Arguments: sc.args("confirm_approve", map[string]any{"text": approvedText})})
	})
	run("confirm_decline", func(ctx context.Context, s *Step) error {
		g.step(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}})
		return call(ctx, s, &mcp.CallToolParams{Name: sc.Tools.Confirm, Arguments: sc.args("confirm_decline", map[string]any{"text": declinedText})})
	})
	for n := 1; n <= 3; n++ {
		run("rounds_"+strconv.Itoa(n), func(ctx context.Context, s *Step) error {
			g.step(nil) // each request answered as it asks: approve a confirmation, give a name
			return call(ctx, s, &mcp.CallToolParams{Name: sc.Tools.Rounds, Arguments: map[string]any{"rounds": n}})
		})
	}
}
