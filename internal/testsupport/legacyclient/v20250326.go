package legacyclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/nodecache"
)

// The 2025-03-26 clients, pinned with their whole tree by node0326/package-lock.json and
// installed by .ci/setup into the cache:
//   - the TypeScript SDK's last release whose latest protocol version is 2025-03-26, run by
//     node0326/client.mjs ([RunTS0326]);
//   - mcp-remote 0.1.13, which bundles SDK 1.12.1 and so speaks 2025-03-26 (and 2024-11-05)
//     only, driven over stdio the way a desktop host drives it ([RunMCPRemote]).
const (
	// TS0326Version is the SDK release node0326/package-lock.json pins.
	TS0326Version = "1.12.3"
	// MCPRemoteVersion is the mcp-remote release node0326/package-lock.json pins.
	MCPRemoteVersion = "0.1.13"
	// Protocol20250326 is the latest version both speak.
	Protocol20250326  = "2025-03-26"
	sdk0326CacheDir   = "legacy-client-0326"
	script0326        = "node0326/client.mjs"
	mcpRemoteProxyRel = "node_modules/mcp-remote/dist/proxy.js"
)

// AllSteps0326 are the steps of a 2025-03-26 client run, in order; close comes last. mcp-remote
// cannot carry a batch (a desktop host's stdio speaks one message a line), so it skips that one.
func AllSteps0326() []string {
	return []string{
		"connect", "list_tools", "list_prompts", "list_resources", "list_resource_templates",
		"call_tool", "structured", "get_prompt", "read_resource", "progress", "confirm", "batch", "close",
	}
}

// Tools0326 are the names a 2025-03-26 client calls for each tool step: the mcptest echo,
// progress and add tools, a tool whose calls need a confirmation (which 2025-03-26 cannot give)
// and one the caller may not call (the batch mixes it with allowed calls).
type Tools0326 struct {
	Echo     string `json:"echo"`
	Progress string `json:"progress"`
	Add      string `json:"add"`
	Confirm  string `json:"confirm"`
	Denied   string `json:"denied"`
}

// Scenario0326 is what a 2025-03-26 client runs against one MCP endpoint.
type Scenario0326 struct {
	URL    string
	Token  string
	Tools  Tools0326
	Prompt string
	// Steps restricts the run to these steps, in AllSteps0326 order; empty runs them all.
	Steps []string
}

func (sc Scenario0326) steps() []string {
	if len(sc.Steps) == 0 {
		return AllSteps0326()
	}
	return slices.DeleteFunc(AllSteps0326(), func(s string) bool { return !slices.Contains(sc.Steps, s) })
}

// ServedBy0326 is ServedBy for a run of the 2025-03-26 TypeScript SDK client.
func ServedBy0326(steps map[string]Step) []string { return servedBy(steps, AllSteps0326()) }

// BatchAnswer is the response to one request of a batch.
type BatchAnswer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// node0326 returns Node 22 and the install directory of the 2025-03-26 clients, failing when
// .ci/setup has not installed them.
func node0326(tb testing.TB) (node, dir string) {
	tb.Helper()
	return nodecache.Require(tb, "the 2025-03-26 clients", sdk0326CacheDir,
		"node_modules/@modelcontextprotocol/sdk/package.json", mcpRemoteProxyRel)
}

// RunTS0326 runs the scenario with the 2025-03-26 TypeScript SDK client and returns its steps by
// name.
func RunTS0326(tb testing.TB, sc Scenario0326) map[string]Step {
	tb.Helper()
	node, dir := node0326(tb)
	arg, err := json.Marshal(map[string]any{"url": sc.URL, "tools": sc.Tools, "prompt": sc.Prompt, "resource": resourceMatch,
		"steps": sc.steps(), "timeoutMs": RequestTimeout.Milliseconds()})
	if err != nil {
		tb.Fatal(err)
	}
	return runScript(tb, "the 2025-03-26 client", node, filepath.Join(packageDir(tb), filepath.FromSlash(script0326)), string(arg), dir, sc.Token)
}

// Expect0326 is what Check0326 holds a run to besides the steps themselves.
type Expect0326 struct {
	// Version is the version the target must have negotiated (2025-03-26).
	Version string
	// Strict holds results to the 2025-03-26 schema: no tool member it does not define, no
	// structuredContent (the gateway). The go-sdk's own server sends them to every version.
	Strict bool
	// ConfirmRefused holds the confirm step to a failed call whose text names 2025-03-26 (the
	// gateway, whose confirmation that revision cannot answer); false checks nothing more.
	ConfirmRefused bool
	// Deploys counts the confirmed tool's real runs at the backend; it must not move.
	Deploys       *atomic.Int64
	DeploysBefore int64
}

// Check0326 asserts every step of sc a 2025-03-26 client ran, as subtests named after them.
func Check0326(t *testing.T, sc Scenario0326, steps map[string]Step, want Expect0326) {
	t.Helper()
	checkSteps(t, sc.steps(), steps, func(t *testing.T, s Step) { check0326(t, sc, s, want) })
	if want.Deploys != nil {
		if n := want.Deploys.Load() - want.DeploysBefore; n != 0 {
			t.Errorf("the confirmed tool ran %d times at the backend, want never (2025-03-26 cannot confirm)", n)
		}
	}
}

// check0326 asserts one step's result.
func check0326(t *testing.T, sc Scenario0326, s Step, want Expect0326) {
	t.Helper()
	if checkSharedStep(t, s, sc.Prompt) {
		return
	}
	switch s.Step {
	case "connect":
		if s.ProtocolVersion != want.Version || !s.Session {
			t.Errorf("connect: negotiated %q with a session id %v, want %s with one", s.ProtocolVersion, s.Session, want.Version)
		}
	case "list_tools":
		wantNames(t, s, sc.Tools.Echo, sc.Tools.Add)
		if want.Strict && len(s.Extras) > 0 {
			t.Errorf("listed tools carry members 2025-03-26 does not define: %v", s.Extras)
		}
	case "structured":
		if want.Strict && (s.IsError || s.Structured || !strings.Contains(s.Text, `{"sum":5}`)) {
			t.Errorf("structured: want the sum as text and no structuredContent, got %s", s)
		}
		if s.IsError || !strings.Contains(s.Text, "5") {
			t.Errorf("structured: %s", s)
		}
	case "confirm":
		if want.ConfirmRefused && (!s.IsError || !strings.Contains(s.Text, "2025-03-26")) {
			t.Errorf("confirm: want a failed call naming 2025-03-26, got %s", s)
		}
	case "batch":
		checkBatch(t, s.Batch)
	}
}

// checkBatch asserts the answers to the batch of node0326/client.mjs: both echo calls, the
// denied call refused with its own error, the ping.
func checkBatch(t *testing.T, got map[string]BatchAnswer) {
	t.Helper()
	for id, text := range map[string]string{"b1": "batch one", "b2": "batch two"} {
		if a := got[id]; a.Error != nil || !strings.Contains(string(a.Result), text) {
			t.Errorf("batch %s: %+v %s", id, a.Error, a.Result)
		}
	}
	if a := got["b3"]; a.Error == nil {
		t.Errorf("batch b3 (the denied tool): want an error, got %s", a.Result)
	}
	if a := got["b4"]; a.Error != nil || string(a.Result) != "{}" {
		t.Errorf("batch b4 (ping): %+v %s", a.Error, a.Result)
	}
}

// RunMCPRemote runs mcp-remote against the scenario's URL and drives it over stdio as a desktop
// host does (its configuration runs `mcp-remote URL --header Authorization:Bearer ${TOKEN}` with
// the token in the environment): a line of JSON-RPC per message, initialize offering
// hostVersion first. It returns the steps by name; batch is never run.
func RunMCPRemote(tb testing.TB, sc Scenario0326, hostVersion string) map[string]Step {
	tb.Helper()
	node, dir := node0326(tb)
	ctx, cancel := context.WithTimeout(tb.Context(), RunTimeout)
	defer cancel()
	args := []string{filepath.Join(dir, filepath.FromSlash(mcpRemoteProxyRel)), sc.URL}
	if sc.Token != "" {
		args = append(args, "--header", "Authorization:Bearer ${MCP_GATEWAY_TEST_TOKEN}")
	}
	cmd := exec.CommandContext(ctx, node, args...)
	// Its OAuth state goes to a directory of the test's, never the user's ~/.mcp-auth.
	cmd.Env = append(os.Environ(), "MCP_GATEWAY_TEST_TOKEN="+sc.Token, "MCP_REMOTE_CONFIG_DIR="+tb.TempDir())
	host, err := startStdioHost(cmd)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
		if tb.Failed() {
			tb.Logf("mcp-remote stderr:\n%s", host.stderr.String())
		}
	}()
	steps := map[string]Step{}
	for _, name := range sc.steps() {
		if name == "batch" {
			continue
		}
		s := Step{Step: name, OK: true}
		if err := host.step(sc, hostVersion, &s); err != nil {
			s.OK, s.Error = false, err.Error()
		}
		steps[name] = s
		if name == "connect" && !s.OK {
			break
		}
	}
	return steps
}

// stdioHost speaks JSON-RPC over a child's stdin and stdout, as a desktop host speaks to a
// stdio MCP server.
type stdioHost struct {
	in     io.WriteCloser
	msgs   chan json.RawMessage
	stderr bytes.Buffer
	ids    int
}

func startStdioHost(cmd *exec.Cmd) (*stdioHost, error) {
	h := &stdioHost{msgs: make(chan json.RawMessage, 64)}
	cmd.Stderr = &h.stderr
	var err error
	if h.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(h.msgs)
		lines := bufio.NewScanner(out)
		lines.Buffer(make([]byte, 0, 64*1024), 4<<20)
		for lines.Scan() {
			h.msgs <- json.RawMessage(bytes.Clone(lines.Bytes()))
		}
	}()
	return h, nil
}

// hostMsg is a message the host reads.
type hostMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// send writes one message line.
func (h *stdioHost) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = h.in.Write(append(b, '\n'))
	return err
}

// call sends a request and waits for its response, handing the notifications read before it to
// note.
func (h *stdioHost) call(method string, params any, note func(hostMsg)) (json.RawMessage, error) {
	h.ids++
	id := h.ids
	if err := h.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	deadline := time.After(RequestTimeout)
	for {
		select {
		case raw, ok := <-h.msgs:
			if !ok {
				return nil, fmt.Errorf("%s: mcp-remote exited", method)
			}
			var m hostMsg
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("%s: mcp-remote wrote %q", method, raw)
			}
			if m.Method != "" {
				if note != nil {
					note(m)
				}
				continue
			}
			if string(m.ID) != fmt.Sprint(id) {
				continue
			}
			if m.Error != nil {
				return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
			}
			return m.Result, nil
		case <-deadline:
			return nil, fmt.Errorf("%s: no response within %s", method, RequestTimeout)
		}
	}
}
