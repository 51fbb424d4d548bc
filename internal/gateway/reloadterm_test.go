package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestSIGTERMEndsAReloadFetchingKeys: SIGTERM during a reload that waits on an issuer which does
// not answer starts the drain at once; the reload is refused as the gateway is draining. Before,
// the reload held serve's loop for up to twice auth.fetchTimeout (11 s by default) first, the
// replica staying ready meanwhile, and that time came out of terminationGracePeriodSeconds,
// which the chart sizes for the drain alone: the kubelet's SIGKILL then cut the last calls with
// no answer. The issuer's fetch timeout here is far beyond the test's wait. The fetch itself ends
// with the reload: before, it was detached from its callers and held its connection to the
// issuer (and a goroutine) until auth.fetchTimeout.
func TestSIGTERMEndsAReloadFetchingKeys(t *testing.T) {
	asked, release := make(chan struct{}, 1), make(chan struct{})
	left := make(chan struct{}, 1) // a request the gateway gave up on: its connection closed
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
			select {
			case left <- struct{}{}:
			default:
			}
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) }) // first: the key fetch may outlive the reload
	be := mcptest.StartServer(t, "be")
	file := filepath.Join(t.TempDir(), "config.yaml")
	write := func(auth string) {
		body := fmt.Sprintf(reloadBase, "5s") + auth + "upstreams:\n" + upstreamYAML(be)
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("auth: {disabled: true}\n")
	logs := &mcptest.LogBuffer{}
	hup, results := make(chan os.Signal, 1), make(chan error, 1)
	_, cancel, done := serveFile(t, file, logs, hup, results)
	defer cancel()
	write("auth: {fetchTimeout: 10m, issuers: [{issuer: \"" + hang.URL + "\"}]}\n")
	hup <- syscall.SIGHUP
	select {
	case <-asked:
	case <-time.After(reloadWait):
		t.Fatal("the reload did not ask the issuer")
	}
	sigtermStopsTheReload(t, "waited on the issuer", cancel, done, results, logs)
	// The abandoned reload's fetch ends with it, not at its own timeout: the issuer sees the
	// gateway hang up.
	select {
	case <-left:
	case <-time.After(reloadWait):
		t.Error("the abandoned reload's fetch from the issuer is still running")
	}
}

// TestSIGTERMEndsAReloadReadingAFile: SIGTERM during a reload whose read of a file does not
// return (a named pipe nobody writes to, as a hung network mount behaves) starts the drain at
// once; the reload is refused as the gateway is draining. Before, the read held serve's loop,
// where SIGTERM starts the drain, for as long as the file did not answer: the replica reported
// ready and served on, and never drained. The configuration file and a secret file it names,
// each replaced by such a pipe before the SIGHUP.
func TestSIGTERMEndsAReloadReadingAFile(t *testing.T) {
	for _, stuck := range []string{"config.yaml", "token"} {
		t.Run(stuck, func(t *testing.T) {
			be := mcptest.StartServer(t, "be")
			dir := t.TempDir()
			file, token := filepath.Join(dir, "config.yaml"), writeSecretFile(t, dir, "token", "t0ken")
			body := fmt.Sprintf(reloadBase, "5s") + "auth: {disabled: true}\nupstreams:\n" +
				fmt.Sprintf("  - {name: be, url: %q, headers: {X-Key: {file: %q}}}\n", be.URL(), token)
			if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			logs := &mcptest.LogBuffer{}
			hup, results := make(chan os.Signal, 1), make(chan error, 1)
			_, cancel, done := serveFile(t, file, logs, hup, results)
			defer cancel()
			pipe := filepath.Join(dir, stuck)
			if err := os.Remove(pipe); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(pipe, 0o600); err != nil {
				t.Skipf("no named pipes here: %v", err)
			}
			// The read left behind, released once the test is over.
			t.Cleanup(func() {
				if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			})
			if stuck == "token" {
				if err := os.WriteFile(file, []byte(body+"# changed\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			hup <- syscall.SIGHUP
			mcptest.WaitFor(t, "the reload to start", func() bool { return strings.Contains(logs.String(), "reloading the configuration") })
			sigtermStopsTheReload(t, "read a file that does not answer", cancel, done, results, logs)
		})
	}
}

// sigtermStopsTheReload sends SIGTERM (cancel) to a gateway whose reload is under way (it
// what) and wants serve to end cleanly, the reload refused as the gateway drains.
func sigtermStopsTheReload(t *testing.T, what string, cancel context.CancelFunc, done <-chan error, results <-chan error, logs *mcptest.LogBuffer) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(reloadWait):
		t.Fatalf("the gateway did not stop while a reload %s; log:\n%s", what, logs.String())
	}
	if err := <-results; !errors.Is(err, errDraining) {
		t.Errorf("the reload ended with %v, want it refused as the gateway drains", err)
	}
}
