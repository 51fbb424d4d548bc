package upstreams

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// hmacSealer is a test Sealer: base64url(payload).base64url(HMAC-SHA256(payload)). It
// authenticates but does not encrypt, which is enough to test cursor handling.
type hmacSealer struct{ key []byte }

func newSealer() *hmacSealer { return &hmacSealer{key: []byte("test-key-0123456789-0123456789-xx")} }

func (s *hmacSealer) mac(p []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(p)
	return m.Sum(nil)
}

func (s *hmacSealer) Seal(p []byte) (string, error) {
	enc := base64.RawURLEncoding
	return enc.EncodeToString(p) + "." + enc.EncodeToString(s.mac(p)), nil
}

func (s *hmacSealer) Open(token string) ([]byte, error) {
	enc := base64.RawURLEncoding
	a, b, ok := strings.Cut(token, ".")
	if !ok {
		return nil, errors.New("malformed")
	}
	p, err1 := enc.DecodeString(a)
	tag, err2 := enc.DecodeString(b)
	if err1 != nil || err2 != nil || !hmac.Equal(tag, s.mac(p)) {
		return nil, errors.New("tampered")
	}
	return p, nil
}

// newTestRegistry builds a Registry over cfg or fails the test.
func newTestRegistry(t testing.TB, cfg Config, opts Options) *Registry {
	t.Helper()
	if opts.Cursors == nil {
		opts.Cursors = newSealer()
	}
	r, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}

// twoBackends starts the go-sdk servers alpha and beta and a Registry over both.
func twoBackends(t *testing.T, alphaOpts, betaOpts []mcptest.Option, mod func(*Config)) (*Registry, *mcptest.Server, *mcptest.Server) {
	t.Helper()
	alpha := mcptest.StartServer(t, "alpha", alphaOpts...)
	beta := mcptest.StartServer(t, "beta", betaOpts...)
	cfg := Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()},
		{Name: "beta", URL: beta.URL()},
	}}
	if mod != nil {
		mod(&cfg)
	}
	return newTestRegistry(t, cfg, Options{}), alpha, beta
}

// collect reads a stream to its end and returns every message; the last one is the final.
func collect(t *testing.T, s *Stream) []string {
	t.Helper()
	defer s.Close()
	var out []string
	for range 10000 {
		msg, final, err := s.Next()
		if err != nil {
			t.Fatalf("Next after %d messages: %v", len(out), err)
		}
		out = append(out, string(msg))
		if final {
			if _, _, err := s.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("Next after the final message = %v, want io.EOF", err)
			}
			return out
		}
	}
	t.Fatal("no final message")
	return nil
}

// callOnce forwards one request and returns the decoded final response.
func callOnce(t *testing.T, r *Registry, method, namespaced string, kind Kind, params string) map[string]any {
	t.Helper()
	target, err := r.Resolve(kind, namespaced)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", namespaced, err)
	}
	s, err := r.Call(context.Background(), &Call{
		Method: method, ID: json.RawMessage(`7`), Params: json.RawMessage(params), Target: target,
	})
	if err != nil {
		t.Fatalf("Call %s %s: %v", method, namespaced, err)
	}
	msgs := collect(t, s)
	return decodeObject(t, msgs[len(msgs)-1])
}

func decodeObject(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return m
}

// lastRequest returns the body of the last request a backend received with the given method.
func lastRequest(t *testing.T, s *mcptest.Server, method string) mcptest.Exchange {
	t.Helper()
	ex := s.RequestsOf(method)
	if len(ex) == 0 {
		t.Fatalf("backend %s received no %s", s.Name(), method)
	}
	return ex[len(ex)-1]
}
