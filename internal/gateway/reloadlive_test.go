package gateway

import (
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestReloadsKeepAtMostTwoConfigurations: each live configuration has its own request and
// concurrency budgets, and docs/deploy.md promises a replica at most twice them during a reload.
// Reloads in quick succession, each within server.shutdownTimeout of the last, used to keep a
// configuration live for each one whose calls were still running. Now a reload that would make
// a third live waits until the oldest one's calls have finished (they are not cut short), logs
// that it waits and counts it; it then applies. Three reloads with a call held on each
// configuration in turn: the live count, highest just after a reload applies, is two each time.
func TestReloadsKeepAtMostTwoConfigurations(t *testing.T) {
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	defer func() {
		for _, ch := range []chan struct{}{releaseA, releaseB} {
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
	}()
	alpha := mcptest.StartServer(t, "alpha", holdingTool(releaseA, nil))
	beta := mcptest.StartServer(t, "beta", holdingTool(releaseB, nil))
	body := "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha) + upstreamYAML(beta)
	f := startReloadGateway(t, "1h", body)
	live := func() float64 { return metricValue(t, f.gw, "mcp_gateway_config_live") }

	heldA := startHeldCallOf(t, f.url(), "alpha__hold") // on the first configuration
	if err := f.reload(t, "1h", body); err != nil {
		t.Fatalf("first reload: %v", err)
	}
	if n := live(); n != 2 {
		t.Fatalf("after the first reload %v configurations are live, want 2", n)
	}
	heldB := startHeldCallOf(t, f.url(), "beta__hold") // on the second
	f.wantWaitingReload(t, body, 1)
	if n := live(); n != 2 {
		t.Fatalf("while the second reload waits %v configurations are live, want 2", n)
	}
	close(releaseA)
	wantHeldToTheEnd(t, heldA, "the first configuration's call")
	f.wantReloadResult(t, "second reload")
	if n := live(); n != 2 {
		t.Fatalf("after the second reload %v configurations are live, want 2", n)
	}
	f.wantWaitingReload(t, body, 2)
	close(releaseB)
	wantHeldToTheEnd(t, heldB, "the second configuration's call")
	f.wantReloadResult(t, "third reload")
	if n := live(); n > 2 {
		t.Fatalf("after the third reload %v configurations are live, want at most 2", n)
	}
}

// wantWaitingReload rewrites the file with body and sends SIGHUP, and wants the reload to wait
// (logged, and the waits counted up to waits) rather than apply.
func (f *reloadGateway) wantWaitingReload(t *testing.T, body string, waits float64) {
	t.Helper()
	f.write(t, "1h", body)
	f.hup <- syscall.SIGHUP
	var applied bool
	var err error
	mcptest.WaitFor(t, "the reload to wait or apply", func() bool {
		select {
		case err = <-f.results:
			applied = true
			return true
		default:
		}
		return strings.Count(f.logs.String(), "reload waits for the configuration replaced by the last reload") == int(waits)
	})
	if applied {
		t.Fatalf("a reload applied (%v) while the two live configurations both had a call running: %v are live now",
			err, metricValue(t, f.gw, "mcp_gateway_config_live"))
	}
	if n := metricValue(t, f.gw, "mcp_gateway_config_reload_waits_total"); n != waits {
		t.Fatalf("mcp_gateway_config_reload_waits_total = %v, want %v", n, waits)
	}
}

// wantReloadResult wants the outcome of the reload under way to be success.
func (f *reloadGateway) wantReloadResult(t *testing.T, what string) {
	t.Helper()
	var err error
	mcptest.WaitFor(t, what+" to end", func() bool {
		select {
		case err = <-f.results:
			return true
		default:
			return false
		}
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantHeldToTheEnd wants a held call to complete as its backend answered, not cut short.
func wantHeldToTheEnd(t *testing.T, held <-chan heldResult, what string) {
	t.Helper()
	var r heldResult
	mcptest.WaitFor(t, what+" to end", func() bool {
		select {
		case r = <-held:
			return true
		default:
			return false
		}
	})
	if r.err != nil || r.res == nil || r.res.IsError || mcptest.ResultText(r.res) != "held to the end" {
		t.Fatalf("%s ended with %v %+v, want its backend's answer", what, r.err, r.res)
	}
}

// TestReloadAskedForDuringAWaitAppliesTheLatestFile: a reload that waits for room (at most two
// configurations live) used to hold serve's loop for the whole wait: further SIGHUPs collapsed
// into one left in the signal's buffer, or none, and the file the waiting reload had read
// before the wait, which the operator had meanwhile corrected, was applied first, without a
// word. Now a SIGHUP during the wait is logged once and counted as a wait, and once the wait is
// over the file is read again: two SIGHUPs with the file rewritten before each end with the
// latest file applied and nothing in between; an invalid latest file is refused and the running
// configuration stays.
func TestReloadAskedForDuringAWaitAppliesTheLatestFile(t *testing.T) {
	t.Run("valid", func(t *testing.T) {
		f, backends, err := reloadAskedForDuringAWait(t, false)
		if err != nil {
			t.Fatalf("the reload ended with %v, want the latest file applied", err)
		}
		if got := backends(); got != "alpha" {
			t.Fatalf("after the reload the backends are %q, want the latest file's: alpha", got)
		}
		if n := metricValue(t, f.gw, `mcp_gateway_config_reloads_total{result="success"}`); n != 2 {
			t.Fatalf("%v reloads applied, want 2: the first, then only the latest file", n)
		}
		// Log lines are written through a queue, after the metric counts the reload: wait for
		// both lines, then no more may have come.
		mcptest.WaitFor(t, "the log to say the configuration was reloaded twice", func() bool {
			return strings.Count(f.logs.String(), `"msg":"configuration reloaded"`) >= 2
		})
		if n := strings.Count(f.logs.String(), `"msg":"configuration reloaded"`); n != 2 {
			t.Fatalf("%d configurations applied, want 2: the stale file must never serve", n)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		f, backends, err := reloadAskedForDuringAWait(t, true)
		if err == nil {
			t.Fatal("an invalid latest file was applied")
		}
		if got := backends(); got != "alpha beta" {
			t.Fatalf("after the refused reload the backends are %q, want the running configuration's: alpha beta", got)
		}
		if n := metricValue(t, f.gw, `mcp_gateway_config_reloads_total{result="failure"}`); n != 1 {
			t.Fatalf("%v reloads refused, want 1", n)
		}
	})
}

// reloadAskedForDuringAWait starts a gateway, reloads it once with a call held on the first
// configuration, then sends SIGHUP for a second file, which waits for that call, and during the
// wait two more, the file rewritten before each: the latest one serves alpha alone, or is not
// valid YAML. It then lets the held call finish and returns the waiting reload's outcome, and
// how to read the backends a new client sees.
func reloadAskedForDuringAWait(t *testing.T, invalidLatest bool) (*reloadGateway, func() string, error) {
	release := make(chan struct{})
	alpha := mcptest.StartServer(t, "alpha", holdingTool(release, nil))
	beta, gamma := mcptest.StartServer(t, "beta"), mcptest.StartServer(t, "gamma")
	config := func(backends ...*mcptest.Server) string {
		body := "auth: {disabled: true}\nupstreams:\n"
		for _, b := range backends {
			body += upstreamYAML(b)
		}
		return body
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) }) // after the gateway's cleanup
	f := startReloadGateway(t, "1h", config(alpha))
	t.Cleanup(func() {
		// Before the gateway's cleanup: a failing run may leave outcomes nobody reads, and
		// serve's loop must not block reporting them while the gateway stops.
		go func() {
			for {
				select {
				case <-f.results:
				case <-stop:
					return
				}
			}
		}()
	})
	held := startHeldCallOf(t, f.url(), "alpha__hold")
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	if err := f.reload(t, "1h", config(alpha, beta)); err != nil {
		t.Fatalf("first reload: %v", err)
	}
	f.wantWaitingReload(t, config(alpha, gamma), 1)
	f.hupDuringWait(t, config(alpha, beta, gamma))
	f.waitLog(t, "reload asked for again while one waits")
	latest := config(alpha)
	if invalidLatest {
		latest = "upstreams: [\n"
	}
	f.hupDuringWait(t, latest)
	if n := strings.Count(f.logs.String(), "reload asked for again while one waits"); n != 1 {
		t.Fatalf("the SIGHUPs during the wait were logged %d times, want once", n)
	}
	if n := metricValue(t, f.gw, "mcp_gateway_config_reload_waits_total"); n != 2 {
		t.Fatalf("mcp_gateway_config_reload_waits_total = %v, want 2: the wait and the reload asked for during it", n)
	}
	close(release)
	wantHeldToTheEnd(t, held, "the first configuration's call")
	var err error
	mcptest.WaitFor(t, "the waiting reload to end", func() bool {
		select {
		case err = <-f.results:
			return true
		default:
			return false
		}
	})
	backends := func() string {
		seen := map[string]bool{}
		for _, name := range toolNames(t, mcptest.Connect(t, f.url())) {
			up, _, _ := strings.Cut(name, "__")
			seen[up] = true
		}
		return strings.Join(slices.Sorted(maps.Keys(seen)), " ")
	}
	return f, backends, err
}

// hupDuringWait rewrites the file with body (after reloadBase) and sends SIGHUP while a reload
// waits, and wants the waiting reload to take
// the signal, not leave it for serve's loop once the wait is over.
func (f *reloadGateway) hupDuringWait(t *testing.T, body string) {
	t.Helper()
	f.write(t, "1h", body)
	select {
	case f.hup <- syscall.SIGHUP:
	case <-time.After(reloadWait):
		t.Fatal("SIGHUP not taken: nothing reads the signal while the reload waits")
	}
	mcptest.WaitFor(t, "the waiting reload to take the SIGHUP", func() bool { return len(f.hup) == 0 })
}
