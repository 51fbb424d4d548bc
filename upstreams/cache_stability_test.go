package upstreams

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestAddingBackendKeepsNames: in prefix mode a backend's namespaced names depend only on its
// own name, so adding backends before or after it never renames its tools (issue 5 item 6). In
// no-prefix mode there is exactly one backend (Config.Validate), so nothing can collide.
func TestAddingBackendKeepsNames(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartServer(t, "beta")
	gamma := mcptest.StartServer(t, "gamma")
	up := func(name string, s *mcptest.Server) UpstreamConfig {
		return UpstreamConfig{Name: name, URL: s.URL(), Protocol: ProtocolVersion}
	}
	alone := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{up("alpha", alpha)}}, Options{})
	crowded := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{up("beta", beta), up("alpha", alpha), up("gamma", gamma)}}, Options{})
	before := listAll(t, alone, ListRequest{Method: MethodToolsList}, "tools", "name")
	var after []string
	for _, n := range listAll(t, crowded, ListRequest{Method: MethodToolsList}, "tools", "name") {
		if strings.HasPrefix(n, "alpha__") {
			after = append(after, n)
		}
	}
	if len(before) == 0 || strings.Join(before, ",") != strings.Join(after, ",") {
		t.Fatalf("alpha's tools alone %v, next to other backends %v", before, after)
	}
	for _, n := range before {
		t1, err1 := alone.Resolve(KindTool, n)
		t2, err2 := crowded.Resolve(KindTool, n)
		if err1 != nil || err2 != nil || t1 != t2 {
			t.Fatalf("%s resolves to %v (%v) alone and %v (%v) with others", n, t1, err1, t2, err2)
		}
	}
}
