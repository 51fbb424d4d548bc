package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/freeport"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// replicaYAML is the configuration of a replica sharing Redis and the sealing key: echo needs the
// user's confirmation, add is limited to 3 calls a minute per caller, and extra adds rules.
func replicaYAML(issuer, redisURL, extra string, alpha *mcptest.Server) string {
	return "mrtr: {keys: [{id: k1, secret: {value: a-test-only-secret-of-at-least-32-bytes}}]}\n" +
		"redis: {url: \"" + redisURL + "\"}\n" +
		"rateLimit: {lease: 1}\n" +
		"auth:\n  issuers: [{issuer: \"" + issuer + "\"}]\n  policy:\n    rules:\n" +
		"      - {id: echo, upstream: alpha, tools: [echo], anyScope: [tools:use], confirm: true}\n" +
		"      - {id: add, upstream: alpha, tools: [add], anyScope: [tools:use], rateLimit: 3/m}\n" + extra +
		"upstreams:\n" + upstreamYAML(alpha)
}

// TestReloadAcrossReplicasWithRedis: two replicas share a real redis-server. What a request
// depends on survives a reload of one of them: a confirmation asked before the reload is
// approved after it on the reloaded replica, stays single-use on the other, and the callers'
// rate-limit buckets go on counting across the reload and the replicas. The reload applied.
func TestReloadAcrossReplicasWithRedis(t *testing.T) {
	t.Parallel()
	redis := testredis.Start(t)
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	a := startReloadGateway(t, "30s", replicaYAML(iss.URL(), redis.URL(), "", alpha))
	b := startReloadGateway(t, "30s", replicaYAML(iss.URL(), redis.URL(), "", alpha))
	alice := mintFor(t, iss, "alice")

	_, asked := rawCall(t, a.gw, alice, "alpha__echo", `{"text":"pay 10"}`, "")
	if asked.Result.ResultType != "input_required" || asked.Result.RequestState == "" {
		t.Fatalf("no confirmation asked: %+v", asked)
	}
	add := func(gw Listeners) int {
		status, _ := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, "")
		return status
	}
	if s := add(a.gw); s != 200 {
		t.Fatalf("add 1: %d", s)
	}

	extra := "      - {id: progress, upstream: alpha, tools: [progress], anyScope: [tools:use]}\n"
	if err := a.reload(t, "30s", replicaYAML(iss.URL(), redis.URL(), extra, alpha)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if names := listToolNamesAs(t, a, alice); !slices.Contains(names, "alpha__progress") {
		t.Fatalf("the reload did not apply: %v", names)
	}

	alpha.Reset()
	if _, r := rawCall(t, a.gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(asked.Result.RequestState)); r.Error != nil || r.Result.IsError {
		t.Fatalf("the approval after the reload: %+v", r)
	}
	if status, r := rawCall(t, b.gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(asked.Result.RequestState)); status != 400 || r.Error == nil {
		t.Fatalf("the replay on the other replica: %d %+v", status, r)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Fatalf("the backend ran the confirmed call %d times, want 1", n)
	}
	for i, gw := range []Listeners{a.gw, b.gw} {
		if s := add(gw); s != 200 {
			t.Fatalf("add %d: %d", i+2, s)
		}
	}
	if s := add(a.gw); s != 429 {
		t.Fatalf("add 4 on the reloaded replica: %d, want 429 (the bucket survives the reload)", s)
	}
}

// listToolNamesAs lists the gateway's tools with a bearer token.
func listToolNamesAs(t *testing.T, f *reloadGateway, tok string) []string {
	t.Helper()
	return toolNames(t, mcptest.Connect(t, f.url(), mcptest.WithBearer(tok)))
}

// TestReloadOnSIGHUP: the gateway binary, as an operator runs it, reloads its configuration file
// on SIGHUP (which would otherwise end the process) and goes on serving.
func TestReloadOnSIGHUP(t *testing.T) {
	t.Parallel()
	bin := buildGatewayBinary(t)
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	ports := freeport.Loopback(t, 2)
	dir := t.TempDir()
	mcpAddr, adminAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	conf := func(backends ...*mcptest.Server) string {
		y := "server: {listen: \"" + mcpAddr + "\", drainDelay: 0s, shutdownTimeout: 5s}\nadmin: {listen: \"" + adminAddr + "\"}\n" +
			"auth: {disabled: true}\nupstreams:\n"
		for _, b := range backends {
			y += upstreamYAML(b)
		}
		return y
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(conf(alpha)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startGatewayProcess(t, bin, "gateway", path, adminAddr)
	p.waitReady(t)
	url := "http://" + mcpAddr + "/mcp"
	if names := toolNames(t, mcptest.Connect(t, url)); slices.Contains(names, "beta__echo") {
		t.Fatalf("before: %v", names)
	}
	if err := os.WriteFile(path, []byte(conf(alpha, beta)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	admin := Listeners{Admin: adminAddr}
	mcptest.WaitFor(t, "the reload counted", func() bool {
		return p.exited() || metricValue(t, admin, `mcp_gateway_config_reloads_total{result="success"}`) == 1
	})
	if p.exited() {
		t.Fatalf("the gateway exited on SIGHUP: %v", p.err)
	}
	if names := toolNames(t, mcptest.Connect(t, url)); !slices.Contains(names, "beta__echo") {
		t.Fatalf("after SIGHUP: %v", names)
	}
	if !strings.Contains(p.logTail(), `"msg":"configuration reloaded"`) {
		t.Error("the reload is not logged")
	}
}
