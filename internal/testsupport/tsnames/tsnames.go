// Package tsnames runs the TypeScript SDK v2 (@modelcontextprotocol/server and /client) as a
// backend and as a client over given tool, prompt and resource names, for the tests of how
// names outside plain ASCII travel in Mcp-Name. It uses the packages .ci/setup installs for the
// MCP Apps backend (apps-backend in the cache), which pin both.
package tsnames

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/nodecache"
)

//go:embed node/backend.mjs
var backendScript []byte

//go:embed node/client.mjs
var clientScript []byte

// Names are the names a backend serves or a client calls.
type Names struct {
	Tools     []string `json:"tools,omitempty"`
	Prompts   []string `json:"prompts,omitempty"`
	Resources []string `json:"resources,omitempty"`
	// Templates are resource templates a backend serves: a read under one answers "read <the
	// URI the server received>".
	Templates []string `json:"templates,omitempty"`
	// Subscribe makes a backend advertise resources.subscribe and serve subscriptions/listen's
	// resource subscriptions; NotifyUpdated then publishes an update.
	Subscribe bool `json:"subscribe,omitempty"`
	// Listen makes a client, after its calls, open subscriptions/listen to these resource URIs
	// and wait (at most 30 seconds) until it has heard of an update of each URI its
	// acknowledgement names.
	Listen []string `json:"listen,omitempty"`
	// RegionTool makes a backend serve "region", a tool whose string argument region its input
	// schema mirrors into Mcp-Param-Region (x-mcp-header): it answers "region=" and the
	// argument as JSON, once the server has checked the header against it.
	RegionTool bool `json:"regionTool,omitempty"`
}

// Call is what the client got for one tool call, prompt get or resource read.
type Call struct {
	Kind    string `json:"kind"` // tool, prompt or resource
	Name    string `json:"name"`
	Text    string `json:"text"`
	IsError bool   `json:"isError"`
	Error   string `json:"error"`
}

// Result is what the client listed and got.
type Result struct {
	Tools     []string `json:"tools"`
	Prompts   []string `json:"prompts"`
	Resources []string `json:"resources"`
	Calls     []Call   `json:"calls"`
	// Sent holds the Mcp-Name values the client sent, in order.
	Sent []string `json:"sent"`
	// Honored is what the listen's acknowledgement named (Names.Listen), Updates the URIs of the
	// resources/updated the client heard, in order.
	Honored []string `json:"honored"`
	Updates []string `json:"updates"`
}

// setup writes script and names into a fresh directory beside a link to the installed
// node_modules, and returns Node and the two files.
func setup(tb testing.TB, script []byte, n Names) (node, scriptPath, namesPath string) {
	tb.Helper()
	node, dir := nodecache.Require(tb, "the TypeScript SDK name tests", "apps-backend",
		"node_modules/@modelcontextprotocol/server/package.json", "node_modules/@modelcontextprotocol/client/package.json")
	tmp := tb.TempDir()
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(tmp, "node_modules")); err != nil {
		tb.Fatal(err)
	}
	scriptPath, namesPath = filepath.Join(tmp, "script.mjs"), filepath.Join(tmp, "names.json")
	b, err := json.Marshal(n)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(scriptPath, script, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(namesPath, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return node, scriptPath, namesPath
}

// StartBackend runs a TypeScript SDK backend serving n until the test ends and returns its MCP
// endpoint URL. Each tool and prompt answers "ran <name>", each resource "read <uri>".
func StartBackend(tb testing.TB, n Names) string {
	tb.Helper()
	node, script, names := setup(tb, backendScript, n)
	return nodecache.StartServer(tb, "TypeScript backend", node, script, names)
}

// NotifyUpdated makes the backend at url (StartBackend with Names.Subscribe) send
// notifications/resources/updated for exactly uri on the listen streams subscribed to it.
func NotifyUpdated(tb testing.TB, url, uri string) {
	tb.Helper()
	base, _, _ := strings.Cut(url, "/mcp")
	res, err := http.Post(base+"/notify?uri="+neturl.QueryEscape(uri), "text/plain", nil)
	if err != nil {
		tb.Error(err)
		return
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		tb.Errorf("notify %q: status %d", uri, res.StatusCode)
	}
}

// RunClient runs the TypeScript SDK client (pinned to 2026-07-28) against url: it lists tools,
// prompts and resources, then calls each tool, gets each prompt and reads each resource of n.
func RunClient(tb testing.TB, url string, n Names) Result {
	tb.Helper()
	node, script, names := setup(tb, clientScript, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url, names)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("TypeScript client: %v; stderr:\n%s", err, stderr.String())
	}
	// The SDK writes its own notices to stdout too; the result is the last line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r Result
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		tb.Fatalf("TypeScript client output %q: %v", out, err)
	}
	return r
}
