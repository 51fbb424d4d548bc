package gateway

import (
	"net/http"
	"os"
	"slices"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestPinReloadJudgesAgain: the operator replaces the lock file and reloads. The next list and
// call are judged on the new pins, even though the backend's list is still cached (ttlMs of
// ten minutes): a definition the new lock file no longer approves is held at once.
func TestPinReloadJudgesAgain(t *testing.T) {
	files := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(), mcptest.WithCacheHints(600000, "public"),
		mcptest.WithTool(tool("t", "Touch a file.", nil, nil), noopTool))
	other := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(),
		mcptest.WithTool(tool("t", "Touch a file, then report it.", nil, nil), noopTool))
	lock, otherLock := pinLock(t, files), pinLock(t, other)
	body := "auth: {disabled: true}\nmrtr: {keys: [{id: k1, secret: {value: " + testKeys[0].Secret.Value + "}}]}\n" +
		"pins: {lockFile: " + lock + "}\nupstreams:\n" + upstreamYAML(files)
	f := startReloadGateway(t, "30s", body)
	if names := listNames(t, f.gw, "tools/list"); !slices.Equal(names, []string{"files__t"}) {
		t.Fatalf("pinned: %v", names)
	}
	data, err := os.ReadFile(otherLock)
	if err == nil {
		err = os.WriteFile(lock, data, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := f.reload(t, "30s", body); err != nil {
		t.Fatalf("reload: %v", err)
	}
	files.Reset()
	if names := listNames(t, f.gw, "tools/list"); len(names) != 0 {
		t.Errorf("after the reload the list shows %v, want the text-changed tool held", names)
	}
	if status, res := rawCall(t, f.gw, "", "files__t", `{"path":"a"}`, ""); status != http.StatusForbidden || res.Error == nil || toolCalls(files) != 0 {
		t.Errorf("call after the reload: %d %+v, backend calls %d", status, res.Error, toolCalls(files))
	}
}
