package gateway

import (
	"bufio"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// reloadKeysYAML is a configuration trusting iss with clock skew skew and key-set refetches
// allowed at once, so that a token of a key just rotated in makes the gateway fetch the set.
func reloadKeysYAML(iss, skew string, alpha *mcptest.Server) string {
	return "auth:\n  discoveryRetryInterval: 50ms\n  jwksMinRefreshInterval: 1ms\n  clockSkew: " + skew + "\n" +
		"  issuers: [{issuer: \"" + iss + "\"}]\n" +
		"  policy:\n    rules:\n      - {id: alpha, upstream: alpha, tools: [\"echo\"], anyScope: [\"tools:use\"]}\n" +
		"upstreams:\n" + upstreamYAML(alpha)
}

// TestReloadedIssuerKeyWithdrawalEndsOldStreams: a pre-2026 client's GET stream runs on across
// a reload, on the configuration it was opened with, until that one's server.shutdownTimeout.
// When the reload changed its issuer's settings, the stream waited on the old configuration's
// key set, which nothing fetched any more: a key the issuer withdrew meanwhile did not end it.
// Now it follows the key set the new configuration fetches: the issuer rotates and withdraws
// the stream's key, a token of the new key makes the gateway fetch the set, and the stream ends.
func TestReloadedIssuerKeyWithdrawalEndsOldStreams(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	f := startReloadGateway(t, "1h", reloadKeysYAML(iss.URL(), "30s", alpha))
	_, oldKid := iss.Kids()
	old := mintFor(t, iss, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), reloadWait)
	defer cancel()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Authorization": {"Bearer " + old}}
	_, rh, body := post(t, f.url(), h,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := rh.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %s", body)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url(), nil)
	req.Header = http.Header{"Accept": {"text/event-stream"}, "Authorization": {"Bearer " + old},
		"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-11-25"}}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", res.StatusCode)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for sc := bufio.NewScanner(res.Body); sc.Scan(); {
		}
	}()

	// The reload changes the issuer's settings: the new configuration fetches its own key set.
	if err := f.reload(t, "1h", reloadKeysYAML(iss.URL(), "31s", alpha)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	select {
	case <-ended:
		t.Fatal("the reload ended the GET stream: it should run on until its key is withdrawn")
	default:
	}
	if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := iss.Withdraw(oldKid); err != nil {
		t.Fatal(err)
	}
	h = modernHeaders("tools/list", "")
	h.Set("Authorization", "Bearer "+mintFor(t, iss, "bob"))
	if status, _, body := post(t, f.url(), h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`); status != http.StatusOK {
		t.Fatalf("tools/list with the new key's token: %d %s", status, body)
	}
	select {
	case <-ended:
	case <-time.After(reloadWait):
		t.Fatal("the GET stream opened before the reload outlived the withdrawal of its token's key")
	}
	if ctx.Err() != nil {
		t.Fatal("the GET stream ended only with the client's own deadline")
	}
}
