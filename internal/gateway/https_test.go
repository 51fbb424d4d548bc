package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/testsupport/certtest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// rotationWait bounds how long a new certificate may take to be served: a few poll intervals
// of the reloader. It fails a broken reload instead of hanging; nothing measures it.
const rotationWait = 30 * time.Second

// holdTool is a backend tool that sends one progress notification, so the response stream is
// open and flowing, then waits until release is closed: a long-lived SSE stream whose end the
// test decides.
const holdTool = "hold"

func holdHandler(release <-chan struct{}) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if token := req.Params.GetProgressToken(); token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Message: "holding"})
			if err != nil {
				return nil, err
			}
		}
		select {
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TestHTTPSCertificateRotation runs the gateway with server.tls on a Kubernetes-style Secret
// mount and rotates the certificate under it: new connections get the new certificate, while
// SSE streams opened before the rotation, over HTTP/2 and over HTTP/1.1, carry on and complete.
func TestHTTPSCertificateRotation(t *testing.T) {
	t.Parallel()
	ca := certtest.NewCA(t)
	v1 := ca.Issue(t, certtest.Leaf{CommonName: "gateway-v1"})
	mount := certtest.NewMount(t, t.TempDir(), v1)
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithTool(
		&mcp.Tool{Name: holdTool, Description: "Waits for the test.", InputSchema: map[string]any{"type": "object"}},
		holdHandler(release)))
	gw := startTestGateway(t, func(c *Config) {
		c.Server.TLS = TLSConfig{CertFile: mount.CertFile(), KeyFile: mount.KeyFile()}
		// The held call must outlive the rotation, however long the reloader takes to notice.
		c.Upstreams[0].Timeout = 2 * rotationWait
	}, alpha)
	url := "https://" + gw.MCP + "/mcp"
	pool := ca.Pool()

	t.Run("go-sdk client calls a tool over HTTPS", func(t *testing.T) {
		cs := mcptest.Connect(t, url, mcptest.WithRoundTripper(httpsTransport(t, pool, true)))
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "över TLS"}})
		if err != nil || res.IsError || mcptest.ResultText(res) != "över TLS" {
			t.Fatalf("CallTool: %v %+v", err, res)
		}
	})
	t.Run("HTTP/2 is negotiated", func(t *testing.T) {
		res := postHTTPS(t, httpsTransport(t, pool, true), url, "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 {
			t.Fatalf("tools/list: %d over %s, want 200 over HTTP/2", res.StatusCode, res.Proto)
		}
		wantLeaf(t, "the first connection", res.TLS, v1)
	})

	streams := []*sseStream{
		openHold(t, httpsTransport(t, pool, true), url, 2, v1),
		openHold(t, httpsTransport(t, pool, false), url, 1, v1),
	}
	v2 := ca.Issue(t, certtest.Leaf{CommonName: "gateway-v2"})
	mount.Update(t, v2)
	waitForLeaf(t, gw.MCP, pool, v2)

	t.Run("a new HTTPS connection is served the new certificate", func(t *testing.T) {
		res := postHTTPS(t, httpsTransport(t, pool, true), url, "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 {
			t.Fatalf("tools/list: %d over %s", res.StatusCode, res.Proto)
		}
		wantLeaf(t, "a connection made after the rotation", res.TLS, v2)
	})
	close(release)
	for _, s := range streams {
		t.Run(fmt.Sprintf("stream opened before the rotation completes over HTTP/%d", s.res.ProtoMajor), func(t *testing.T) {
			if got := s.result(t); got != "released" {
				t.Fatalf("final result %q, want released", got)
			}
			wantLeaf(t, "the stream's connection", s.res.TLS, v1)
		})
	}
}

// httpsTransport trusts only pool and has its own connection pool; h2 offers HTTP/2 and
// HTTP/1.1 through ALPN, otherwise only HTTP/1.1 is offered.
func httpsTransport(t *testing.T, pool *x509.CertPool, h2 bool) *http.Transport {
	t.Helper()
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetHTTP2(h2)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: &protos}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func postHTTPS(t *testing.T, tr http.RoundTripper, url, method, name, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = modernHeaders(method, name)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func wantLeaf(t *testing.T, what string, st *tls.ConnectionState, want certtest.Pair) {
	t.Helper()
	if st == nil || len(st.PeerCertificates) == 0 {
		t.Fatalf("%s: no TLS peer certificate", what)
	}
	got := st.PeerCertificates[0]
	if got.SerialNumber.Cmp(want.Leaf.SerialNumber) != 0 || got.Subject.CommonName != want.Leaf.Subject.CommonName {
		t.Fatalf("%s was served %s (serial %v), want %s (serial %v)", what,
			got.Subject.CommonName, got.SerialNumber, want.Leaf.Subject.CommonName, want.Leaf.SerialNumber)
	}
}

// waitForLeaf makes fresh TLS connections (no session to resume) until one is served want.
func waitForLeaf(t *testing.T, addr string, pool *x509.CertPool, want certtest.Pair) {
	t.Helper()
	deadline := time.Now().Add(rotationWait)
	for {
		d := tls.Dialer{NetDialer: &net.Dialer{Timeout: rotationWait}, Config: &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}}}
		conn, err := d.DialContext(t.Context(), "tcp", addr)
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		st := conn.(*tls.Conn).ConnectionState()
		conn.Close()
		if st.PeerCertificates[0].SerialNumber.Cmp(want.Leaf.SerialNumber) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("new connections still get %s after the certificate files changed to %s",
				st.PeerCertificates[0].Subject.CommonName, want.Leaf.Subject.CommonName)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sseStream is a tools/call whose SSE response is being read.
type sseStream struct {
	res *http.Response
	r   *eventstream.Reader
}

// openHold calls the hold tool with a progress token and reads the stream up to the progress
// notification, so the stream is known to be open end to end, over the wanted HTTP version and
// on a connection serving want.
func openHold(t *testing.T, tr http.RoundTripper, url string, protoMajor int, want certtest.Pair) *sseStream {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"hold"}`
	res := postHTTPS(t, tr, url, "tools/call", "alpha__"+holdTool,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+meta+`,"name":"alpha__`+holdTool+`","arguments":{}}}`)
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("hold: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res.ProtoMajor != protoMajor {
		t.Fatalf("hold stream over %s, want HTTP/%d", res.Proto, protoMajor)
	}
	wantLeaf(t, "the stream's connection", res.TLS, want)
	s := &sseStream{res: res, r: eventstream.NewReader(res.Body, 4<<10, 1<<20)}
	if data := s.next(t); !strings.Contains(data, `"notifications/progress"`) {
		t.Fatalf("first event %s, want the progress notification", data)
	}
	return s
}

// next returns the data of the next SSE event that has data.
func (s *sseStream) next(t *testing.T) string {
	t.Helper()
	for {
		ev, err := s.r.Next()
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if len(ev.Data) > 0 {
			return string(ev.Data)
		}
	}
}

// result reads events until the JSON-RPC response and returns its text content.
func (s *sseStream) result(t *testing.T) string {
	t.Helper()
	for range 16 {
		var msg struct {
			ID     *int `json:"id"`
			Result struct {
				Content []struct{ Text string }
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		data := s.next(t)
		if err := json.Unmarshal([]byte(data), &msg); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		if msg.ID == nil {
			continue
		}
		if msg.Error != nil || len(msg.Result.Content) == 0 {
			t.Fatalf("response %s", data)
		}
		return msg.Result.Content[0].Text
	}
	t.Fatal("no response among the first 16 events")
	return ""
}
