package gateway

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// reloadWait bounds waiting for one reload's outcome: a fail-safe, not a timing under test.
const reloadWait = 30 * time.Second

// reloadGateway is a gateway started from a configuration file, as `gateway serve --config`
// runs it, which loads the file again when the test sends it SIGHUP.
type reloadGateway struct {
	gw      Listeners
	file    string
	logs    *mcptest.LogBuffer
	hup     chan os.Signal
	results chan error
}

// reloadBase is the start of every reload test's file: loopback listeners, no drain delay, a
// short bound on requests left on a replaced configuration, and the full log.
const reloadBase = `server: {listen: "127.0.0.1:0", drainDelay: 0s, shutdownTimeout: %s, publicURL: "` + testResource + `"}
admin: {listen: "127.0.0.1:0"}
log: {level: debug, format: json}
`

// upstreamYAML is one backend's entry in the upstreams list.
func upstreamYAML(s *mcptest.Server) string {
	return fmt.Sprintf("  - {name: %s, url: %q, timeout: 30s}\n", s.Name(), s.URL())
}

// startReloadGateway writes body (after reloadBase) to a file and serves it.
func startReloadGateway(t *testing.T, shutdownTimeout, body string) *reloadGateway {
	t.Helper()
	return startReloadGatewayAdmitting(t, shutdownTimeout, body, nil)
}

// startReloadGatewayAdmitting is startReloadGateway calling admitted, when not nil, with each GET
// stream admitted to a component set, before the set registers it (runOptions.streamAdmitted).
func startReloadGatewayAdmitting(t *testing.T, shutdownTimeout, body string, admitted func(f *reloadGateway, r *http.Request)) *reloadGateway {
	t.Helper()
	f := &reloadGateway{file: filepath.Join(t.TempDir(), "config.yaml"), logs: &mcptest.LogBuffer{},
		hup: make(chan os.Signal, 1), results: make(chan error, 1)}
	f.write(t, shutdownTimeout, body)
	var hook func(*http.Request)
	if admitted != nil {
		hook = func(r *http.Request) { admitted(f, r) }
	}
	var cancel context.CancelFunc
	var done <-chan error
	f.gw, cancel, done = serveFileAdmitting(t, f.file, f.logs, f.hup, f.results, hook)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", f.logs.String())
		}
	})
	return f
}

// serveFile runs serve on the configuration file at file, as `gateway serve --config` does,
// loading it again on each signal sent to hup (each reload's outcome goes to results, if not
// nil). It returns once the gateway listens, with cancel, which is SIGTERM, and serve's outcome.
func serveFile(t *testing.T, file string, logs *mcptest.LogBuffer, hup chan os.Signal, results chan error) (Listeners, context.CancelFunc, <-chan error) {
	t.Helper()
	return serveFileAdmitting(t, file, logs, hup, results, nil)
}

// serveFileAdmitting is serveFile with runOptions.streamAdmitted.
func serveFileAdmitting(t *testing.T, file string, logs *mcptest.LogBuffer, hup chan os.Signal, results chan error, admitted func(*http.Request)) (Listeners, context.CancelFunc, <-chan error) {
	t.Helper()
	getenv := func(string) string { return "" }
	load := func() (*Config, error) { return loadConfig("serve", []string{"--config", file}, getenv, logs) }
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started, done := make(chan Listeners, 1), make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, runOptions{getenv: getenv, stderr: logs, started: started,
			reload: &reloadSource{load: load, trigger: hup, results: results}, streamAdmitted: admitted})
	}()
	select {
	case gw := <-started:
		return gw, cancel, done
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	}
	return Listeners{}, cancel, done
}

func (f *reloadGateway) write(t *testing.T, shutdownTimeout, body string) {
	t.Helper()
	if err := os.WriteFile(f.file, []byte(fmt.Sprintf(reloadBase, shutdownTimeout)+body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reload rewrites the file with body, sends SIGHUP and returns the reload's outcome.
func (f *reloadGateway) reload(t *testing.T, shutdownTimeout, body string) error {
	t.Helper()
	f.write(t, shutdownTimeout, body)
	f.hup <- syscall.SIGHUP
	select {
	case err := <-f.results:
		return err
	case <-time.After(reloadWait):
		t.Fatal("no reload outcome")
	}
	return nil
}

func (f *reloadGateway) url() string { return "http://" + f.gw.MCP + "/mcp" }

// waitLog waits until the log holds want: lines go through a queue, so a line logged before an
// event the test saw may be written just after it.
func (f *reloadGateway) waitLog(t *testing.T, want string) {
	t.Helper()
	mcptest.WaitFor(t, "the log to say "+want, func() bool { return strings.Contains(f.logs.String(), want) })
}

// holdingTool is a backend tool that reports progress once, so the gateway answers over SSE, and
// then waits until release is closed (or the call is cancelled).
func holdingTool(release <-chan struct{}, cancelled chan<- struct{}) mcptest.Option {
	return mcptest.WithTool(&mcp.Tool{Name: "hold", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "holding"})
			}
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held to the end"}}}, nil
			case <-ctx.Done():
				if cancelled != nil {
					close(cancelled)
				}
				return nil, ctx.Err()
			}
		})
}

// startHeldCall calls alpha__hold with a progress token and returns once the first progress
// notification arrived (the SSE response is open); the call's outcome arrives on the channel.
func startHeldCall(t *testing.T, url string) <-chan heldResult {
	t.Helper()
	return startHeldCallOf(t, url, "alpha__hold")
}

type heldResult struct {
	res *mcp.CallToolResult
	err error
}

// TestReloadKeepsInFlightSSECall: a call streaming over SSE when a reload removes its very
// backend completes on the configuration it started with; new requests, on a new connection
// and on a kept-alive one, see the new configuration at once, and once the old configuration's
// last request ended its backend's health series are gone.
func TestReloadKeepsInFlightSSECall(t *testing.T) {
	release := make(chan struct{})
	alpha := mcptest.StartServer(t, "alpha", holdingTool(release, nil))
	beta := mcptest.StartServer(t, "beta")
	f := startReloadGateway(t, "30s", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(alpha)+upstreamYAML(beta))
	kept := mcptest.Connect(t, f.url())
	if names := toolNames(t, kept); !slices.Contains(names, "alpha__hold") {
		t.Fatalf("before the reload: %v", names)
	}
	mcptest.WaitFor(t, "alpha's health exported", func() bool {
		return strings.Contains(get(t, "http://"+f.gw.Admin+"/metrics"), `mcp_gateway_upstream_up{upstream="alpha"} 1`)
	})
	held := startHeldCall(t, f.url())

	if err := f.reload(t, "30s", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(beta)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	for name, cs := range map[string]*mcp.ClientSession{"kept-alive": kept, "new": mcptest.Connect(t, f.url())} {
		if names := toolNames(t, cs); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "alpha__") }) {
			t.Errorf("%s session after the reload still lists alpha: %v", name, names)
		}
	}
	if got := metricValue(t, f.gw, `mcp_gateway_config_reloads_total{result="success"}`); got != 1 {
		t.Errorf("reloads_total{success} = %v, want 1", got)
	}
	select {
	case r := <-held:
		t.Fatalf("the held call ended at the reload: %v %+v", r.err, r.res)
	default:
	}
	close(release)
	select {
	case r := <-held:
		if r.err != nil || r.res.IsError || mcptest.ResultText(r.res) != "held to the end" {
			t.Fatalf("the held call: %v %+v", r.err, r.res)
		}
	case <-time.After(reloadWait):
		t.Fatal("the held call never completed")
	}
	mcptest.WaitFor(t, "the removed backend's health series dropped", func() bool {
		return !strings.Contains(get(t, "http://"+f.gw.Admin+"/metrics"), `mcp_gateway_upstream_up{upstream="alpha"}`)
	})
}

// TestReloadAddsBackend: a backend added by a reload is listed and called at once. Its metrics
// fold into upstream="_other" until a restart, which the reload reports.
func TestReloadAddsBackend(t *testing.T) {
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	f := startReloadGateway(t, "30s", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(alpha))
	if got := metricValue(t, f.gw, "mcp_gateway_config_restart_required"); got != 0 {
		t.Fatalf("restart_required at start = %v", got)
	}
	if err := f.reload(t, "30s", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(alpha)+upstreamYAML(beta)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	cs := mcptest.Connect(t, f.url())
	if names := toolNames(t, cs); !slices.Contains(names, "beta__echo") || !slices.Contains(names, "alpha__echo") {
		t.Fatalf("after adding beta: %v", names)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "new"}})
	if err != nil || res.IsError || mcptest.ResultText(res) != "new" {
		t.Fatalf("beta__echo: %v %+v", err, res)
	}
	if got := metricValue(t, f.gw, "mcp_gateway_config_restart_required"); got != 1 {
		t.Errorf("restart_required = %v, want 1 (beta's metric labels)", got)
	}
	f.waitLog(t, "metric labels of upstream beta")
	mcptest.WaitFor(t, "serving without authentication said again on the reload", func() bool {
		return strings.Count(f.logs.String(), "AUTHENTICATION IS DISABLED") == 2
	})
	// Without mrtr.keys the state is sealed under a per-process key, which SECURITY.md promises is
	// said at start, since a second replica would refuse every state this one sealed.
	if !strings.Contains(f.logs.String(), "no mrtr.keys configured: requestState and list cursors use a random per-process key") {
		t.Error("serving without mrtr.keys was not logged at start")
	}
}

// TestReloadRestartOnlySettings: settings that only a restart applies keep their running values
// and are named in the log and the restart gauge; the rest of the same file is applied.
func TestReloadRestartOnlySettings(t *testing.T) {
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	f := startReloadGateway(t, "30s", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(alpha)+upstreamYAML(beta))
	next := strings.Replace(fmt.Sprintf(reloadBase, "30s"), `listen: "127.0.0.1:0", drainDelay`, `listen: "127.0.0.1:1", drainDelay`, 1)
	if next == fmt.Sprintf(reloadBase, "30s") {
		t.Fatal("the listen address was not changed")
	}
	next = strings.Replace(next, "level: debug", "level: warn", 1)
	next += "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(beta)
	if err := os.WriteFile(f.file, []byte(next), 0o600); err != nil {
		t.Fatal(err)
	}
	f.hup <- syscall.SIGHUP
	if err := <-f.results; err != nil {
		t.Fatalf("reload: %v", err)
	}
	cs := mcptest.Connect(t, f.url()) // still the address it started on
	if names := toolNames(t, cs); slices.Contains(names, "alpha__echo") || !slices.Contains(names, "beta__echo") {
		t.Fatalf("the backends were not applied: %v", names)
	}
	if got := metricValue(t, f.gw, "mcp_gateway_config_restart_required"); got != 1 {
		t.Errorf("restart_required = %v, want 1", got)
	}
	f.waitLog(t, `"settings":["server.listen","log"]`)
	// log.level stayed debug: the access lines (info) of the requests after the reload are there.
	mcptest.WaitFor(t, "an access line after the reload", func() bool {
		_, after, _ := strings.Cut(f.logs.String(), `"msg":"configuration reloaded"`)
		return strings.Contains(after, `"msg":"request"`)
	})
}

// authYAML is an auth: block trusting iss with one policy rule for alpha's tools (a YAML flow
// list), then the upstreams.
func authYAML(iss, tools string, extra string, backends ...*mcptest.Server) string {
	y := "auth:\n  discoveryRetryInterval: 50ms\n  issuers: [{issuer: \"" + iss + "\"}]\n" +
		"  policy:\n    rules:\n      - {id: alpha, upstream: alpha, tools: " + tools + ", anyScope: [\"tools:use\"]" + extra + "}\n" +
		"upstreams:\n"
	for _, b := range backends {
		y += upstreamYAML(b)
	}
	return y
}

// TestReloadWarnsNothingAllowed: a reload to a policy no rule of which allows anything says so,
// as serve does at start-up (the same warning: warnServing); the start, whose rule allows, did
// not.
func TestReloadWarnsNothingAllowed(t *testing.T) {
	const note = "policy: no rule allows anything (auth.policy.rules)"
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	f := startReloadGateway(t, "30s", authYAML(iss.URL(), `["echo"]`, "", alpha))
	denyOnly := strings.Replace(authYAML(iss.URL(), `["echo"]`, "", alpha), `anyScope: ["tools:use"]`, `effect: deny`, 1)
	if err := f.reload(t, "30s", denyOnly); err != nil {
		t.Fatalf("reload: %v", err)
	}
	f.waitLog(t, "configuration reloaded")
	f.waitLog(t, note)
	if n := strings.Count(f.logs.String(), note); n != 1 {
		t.Errorf("the warning logged %d times, want once (at the reload, not at the start)", n)
	}
}

// TestReloadPolicyNextRequest: a policy change applies from the next request, also on a
// connection and client session opened before the reload.
func TestReloadPolicyNextRequest(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	f := startReloadGateway(t, "30s", authYAML(iss.URL(), `["echo"]`, "", alpha))
	cs := mcptest.Connect(t, f.url(), mcptest.WithBearer(mintFor(t, iss, "alice")))
	ctx := context.Background()
	args := map[string]map[string]any{"alpha__echo": {"text": "x"}, "alpha__add": {"a": 1, "b": 2}}
	call := func(name string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args[name]})
	}
	if names := toolNames(t, cs); !slices.Equal(names, []string{"alpha__echo"}) {
		t.Fatalf("before: %v", names)
	}
	if res, err := call("alpha__echo"); err != nil || res.IsError {
		t.Fatalf("echo before: %v %+v", err, res)
	}
	if err := f.reload(t, "30s", authYAML(iss.URL(), `["add"]`, "", alpha)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if names := toolNames(t, cs); !slices.Equal(names, []string{"alpha__add"}) {
		t.Fatalf("after: %v", names)
	}
	alpha.Reset()
	if res, err := call("alpha__echo"); err == nil && !res.IsError {
		t.Fatal("echo still allowed after the reload took it away")
	}
	if n := toolCalls(alpha); n != 0 {
		t.Fatalf("the refused call reached the backend (%d)", n)
	}
	if res, err := call("alpha__add"); err != nil || res.IsError {
		t.Fatalf("add after: %v %+v", err, res)
	}
}

// TestReloadRefusesInvalidConfiguration: every kind of broken configuration (YAML, a check of
// the configuration, a secret, the pins lock file, an issuer whose keys cannot be fetched) is
// refused with its error logged and counted; the running configuration keeps serving as before.
// A valid one is then applied.
func TestReloadRefusesInvalidConfiguration(t *testing.T) {
	t.Parallel()
	iss := newIssuer(t)
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	good := authYAML(iss.URL(), `["echo"]`, "", alpha)
	f := startReloadGateway(t, "30s", good)
	started := metricValue(t, f.gw, "mcp_gateway_config_last_reload_success_timestamp_seconds")
	if started == 0 {
		t.Fatal("no start-up timestamp")
	}
	tok := mintFor(t, iss, "alice")
	stillServing := func(t *testing.T) {
		t.Helper()
		cs := mcptest.Connect(t, f.url(), mcptest.WithBearer(tok))
		if names := toolNames(t, cs); !slices.Equal(names, []string{"alpha__echo"}) {
			t.Fatalf("the running configuration changed: %v", names)
		}
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "still"}}); err != nil || res.IsError {
			t.Fatalf("the running configuration no longer serves: %v %+v", err, res)
		}
	}
	typo := iss.URL() + "/typo"
	down := "http://" + closedPort(t) // nothing listens there
	tests := []struct{ name, body, want string }{
		{"not YAML", "upstreams: [\n", "yaml"},
		{"unknown key in a list entry", good + "  - {name: beta, ulr: \"" + beta.URL() + "\"}\n", "ulr"},
		{"a check of the configuration", authYAML(iss.URL(), `["echo"]`, ", confirm: url", alpha), "approval page is not configured"},
		{"a secret file that is missing", good + "  - {name: beta, url: \"" + beta.URL() + "\", headers: {X-Key: {file: /nonexistent/secret}}}\n",
			"upstreams[1].headers.X-Key"},
		{"a pins lock file that is missing", good + "pins: {mode: lockfile, lockFile: /nonexistent/pins.yaml}\n", "pins.lockFile"},
		{"an issuer whose keys cannot be fetched", strings.Replace(authYAML(iss.URL(), `["echo"]`, ", issuers: [\"*\"]", alpha),
			`issuers: [{issuer: "`+iss.URL()+`"}]`, `issuers: [{issuer: "`+iss.URL()+`"}, {issuer: "`+typo+`"}]`, 1), "auth.issuers[1]: issuer " + typo + ": keys not fetched (http_status)"},
		{"an issuer that cannot be reached", strings.Replace(authYAML(iss.URL(), `["echo"]`, ", issuers: [\"*\"]", alpha),
			`issuers: [{issuer: "`+iss.URL()+`"}]`, `issuers: [{issuer: "`+iss.URL()+`"}, {issuer: "`+down+`"}]`, 1), "auth.issuers[1]: issuer " + down + ": keys not fetched ("},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.reload(t, "30s", tt.body)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("reload: %v, want refused with %q", err, tt.want)
			}
			if got := metricValue(t, f.gw, `mcp_gateway_config_reloads_total{result="failure"}`); got != float64(i+1) {
				t.Errorf("reloads_total{failure} = %v, want %d", got, i+1)
			}
			if got := metricValue(t, f.gw, "mcp_gateway_config_last_reload_successful"); got != 0 {
				t.Errorf("last_reload_successful = %v, want 0", got)
			}
			f.waitLog(t, tt.want)
			stillServing(t)
		})
	}
	f.waitLog(t, `"level":"ERROR","msg":"configuration reload refused; the running configuration stays"`)
	if err := f.reload(t, "30s", authYAML(iss.URL(), `["echo", "add"]`, "", alpha)); err != nil {
		t.Fatalf("the valid reload: %v", err)
	}
	if got := metricValue(t, f.gw, "mcp_gateway_config_last_reload_successful"); got != 1 {
		t.Errorf("last_reload_successful = %v after a success", got)
	}
	if got := metricValue(t, f.gw, "mcp_gateway_config_last_reload_success_timestamp_seconds"); got <= started {
		t.Errorf("last success timestamp %v, not after the start-up's %v", got, started)
	}
}

// TestReloadEndsOldRequestsAfterShutdownTimeout: a request still running on the replaced
// configuration server.shutdownTimeout after the reload is cancelled, its backend call with it,
// and answered with -32014 saying so on its open stream before its connection closes; the
// previous configuration is then closed and new requests are served.
func TestReloadEndsOldRequestsAfterShutdownTimeout(t *testing.T) {
	cancelled := make(chan struct{})
	alpha := mcptest.StartServer(t, "alpha", holdingTool(make(chan struct{}), cancelled))
	body := "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha)
	f := startReloadGateway(t, "1s", body)
	held := startHeldCall(t, f.url())
	if err := f.reload(t, "1s", body); err != nil {
		t.Fatalf("reload: %v", err)
	}
	select {
	case r := <-held:
		if rpcCode(r.err) != -32014 || !strings.Contains(r.err.Error(), "configuration was replaced") ||
			!strings.Contains(r.err.Error(), "may or may not have run") {
			t.Fatalf("the held call ended with %v %+v, want -32014 saying the configuration was replaced", r.err, r.res)
		}
	case <-time.After(reloadWait):
		t.Fatal("the held call was not ended")
	}
	select {
	case <-cancelled:
	case <-time.After(reloadWait):
		t.Fatal("the backend call was not cancelled")
	}
	f.waitLog(t, `still running after server.shutdownTimeout: they are answered with an error, then their connections closed","requests":1,"connections":1`)
	cs := mcptest.Connect(t, f.url())
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "after"}}); err != nil || res.IsError {
		t.Fatalf("a call after the cut: %v %+v", err, res)
	}
}

// TestReloadRetiresWithTheReplacedTimeout: the requests of a replaced configuration keep the
// time that configuration promised them, its own server.shutdownTimeout, not the new one's. The
// reload raises the timeout from two seconds to an hour: the call held on the old
// configuration is still ended after the old one (it would run on for the hour under the new
// one's), which is the same value that keeps a reload lowering the timeout from cutting calls
// already running sooner than promised. (Two seconds, not less: the last tenth of the timeout
// is what a cut call has to write its error before its connection closes, and 20 ms of a
// loaded machine's -race run was once not enough.)
func TestReloadRetiresWithTheReplacedTimeout(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", holdingTool(make(chan struct{}), nil))
	body := "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha)
	f := startReloadGateway(t, "2s", body)
	held := startHeldCall(t, f.url())
	if err := f.reload(t, "1h", body); err != nil {
		t.Fatalf("reload: %v", err)
	}
	select {
	case r := <-held:
		if rpcCode(r.err) != -32014 {
			t.Fatalf("the held call ended with %v %+v, want -32014 (the configuration was replaced)", r.err, r.res)
		}
	case <-time.After(reloadWait):
		t.Fatal("the held call was not ended after the replaced configuration's shutdownTimeout")
	}
}

// TestReloadLegacyAnswerAcrossReload: a pre-2026 client asked for input in the middle of a call
// (a 2025-11-25 backend's elicitation, relayed on the call's stream) answers after a reload. Its
// answer is a request of its own, served by the new configuration; it still reaches the call
// waiting on the old one, also with a single replica and no Redis, and the call completes.
func TestReloadLegacyAnswerAcrossReload(t *testing.T) {
	backend := startRelayBackend(t)
	body := "auth: {disabled: true}\nupstreams:\n  - {name: old, url: \"" + backend.URL() + "\", protocol: \"2025-11-25\", timeout: 30s}\n"
	f := startReloadGateway(t, "30s", body)
	asked, answer := make(chan struct{}), make(chan struct{})
	cs := mcptest.Connect(t, f.url(), mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-answer
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}))
	got := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "old__" + toolRelay, Arguments: map[string]any{"what": "elicit"}})
		if err != nil {
			got <- err.Error()
			return
		}
		got <- mcptest.ResultText(res)
	}()
	select {
	case <-asked:
	case <-time.After(reloadWait):
		t.Fatal("the client was never asked")
	}
	if err := f.reload(t, "30s", body); err != nil {
		t.Fatalf("reload: %v", err)
	}
	close(answer)
	select {
	case text := <-got:
		if text != "elicit: accept Ada" {
			t.Fatalf("the call across the reload: %q", text)
		}
	case <-time.After(reloadWait):
		t.Fatal("the call never completed")
	}
}
