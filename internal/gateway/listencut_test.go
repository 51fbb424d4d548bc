package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestListensEndAtOnce: a listen does not wait for server.shutdownTimeout to be ended, as a
// call in flight does; before, it was held to that timeout and then closed with no word at all.
// A reload ends the previous configuration's listens at once, since every notification a listen
// relays afterwards would be filtered by the policy the reload replaced (the client listens
// again under the new one); SIGTERM ends them once the drain delay is over, since a listen never
// finishes by itself and would otherwise hold every rolling restart for the whole shutdown
// timeout. Both use the graceful end. The shutdown timeout here is far beyond the test's wait:
// a listen ended only at it fails the test.
func TestListensEndAtOnce(t *testing.T) {
	t.Run("shutdown", func(t *testing.T) {
		be := mcptest.StartServer(t, "be")
		cfg := testConfig("error", "text", be)
		cfg.Auth.Disabled = true
		cfg.applyDefaults()
		cfg.Server.DrainDelay, cfg.Server.ShutdownTimeout = 50*time.Millisecond, time.Hour
		gw, terminate, done := startServing(t, cfg)
		out := startListen(t, "http://"+gw.MCP+"/mcp")
		terminate()
		checkListenEnd(t, out)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve: %v", err)
			}
		case <-time.After(reloadWait):
			t.Fatal("the gateway did not exit once its listen ended")
		}
	})
	t.Run("reload", func(t *testing.T) {
		be := mcptest.StartServer(t, "be")
		body := "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(be)
		f := startReloadGateway(t, "1h", body)
		out := startListen(t, f.url())
		if err := f.reload(t, "1h", body); err != nil {
			t.Fatalf("reload: %v", err)
		}
		checkListenEnd(t, out)
	})
}

// listenAnswer is the whole of a listen's response once it ended.
type listenAnswer struct {
	body []byte
	err  error
}

// startListen opens a listen for tool list changes with id 7 and returns once it is
// acknowledged; the channel receives the rest of the stream when it ends.
func startListen(t *testing.T, url string) <-chan listenAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{`+
		testMeta+`,"notifications":{"toolsListChanged":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = modernHeaders("subscriptions/listen", "")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("listen: HTTP %d %s", res.StatusCode, b)
	}
	r := bufio.NewReader(res.Body)
	for { // up to the acknowledgement's blank line
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("listen: no acknowledgement: %v", err)
		}
		if line == "\n" || line == "\r\n" {
			break
		}
	}
	out := make(chan listenAnswer, 1)
	go func() {
		b, err := io.ReadAll(r)
		out <- listenAnswer{b, err}
	}()
	return out
}

// checkListenEnd fails t unless the listen's stream ended with its graceful end.
func checkListenEnd(t *testing.T, out <-chan listenAnswer) {
	t.Helper()
	var a listenAnswer
	select {
	case a = <-out:
	case <-time.After(reloadWait):
		t.Fatal("the listen was not ended")
	}
	msgs := legacyclient.SSEMessages(a.body)
	var end struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			ResultType string                     `json:"resultType"`
			Meta       map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	if len(msgs) != 1 || json.Unmarshal(msgs[0], &end) != nil || string(end.ID) != "7" || end.Result == nil ||
		end.Result.ResultType != "complete" || !bytes.Equal(end.Result.Meta["io.modelcontextprotocol/subscriptionId"], []byte("7")) {
		t.Fatalf("the listen ended with %q (%v), want one complete result for id 7 with its subscription id", a.body, a.err)
	}
}
