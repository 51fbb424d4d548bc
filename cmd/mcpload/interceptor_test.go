package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterceptorServesUntilStopped: `mcpload interceptor` publishes its endpoint, answers an
// interceptor/invoke there with a valid ValidationResult naming the interceptor and phase asked
// about, and returns cleanly when stopped; it refuses a listen address off loopback.
func TestInterceptorServesUntilStopped(t *testing.T) {
	if err := runInterceptor(t.Context(), []string{"-listen", "192.0.2.1:0"}, io.Discard, io.Discard); err == nil {
		t.Error("a listen address off loopback was accepted")
	}
	addrFile := filepath.Join(t.TempDir(), "url")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- runInterceptor(ctx, []string{"-addr-file", addrFile}, io.Discard, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("stopped: %v", err)
		}
	}()
	var url []byte
	for deadline := time.Now().Add(10 * time.Second); len(url) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no endpoint published")
		}
		url, _ = os.ReadFile(addrFile)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"interceptor/invoke","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"name":"allow","event":"tools/call","phase":"request","payload":{"method":"tools/call","params":{"name":"x"}}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, strings.TrimSpace(string(url)), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"interceptor/invoke"}}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(got), `"interceptor":"allow","type":"validation","phase":"request","valid":true`) {
		t.Fatalf("%d %s", res.StatusCode, got)
	}
}
