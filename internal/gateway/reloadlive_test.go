package gateway

import (
	"strings"
	"syscall"
	"testing"

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
