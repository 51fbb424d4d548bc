package upstreams

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/certtest"
	"github.com/mcp-gateway/gateway/upstreams/direct"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// tlsBackend is an HTTPS backend with HTTP/2 that requires a client certificate signed by
// the test CA, and remembers what it saw of the last request.
type tlsBackend struct {
	url      string
	mu       sync.Mutex
	proto    int
	clientCN string
}

func startTLSBackend(t *testing.T, ca *certtest.CA) *tlsBackend {
	t.Helper()
	pair := ca.Issue(t, certtest.Leaf{})
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tb := &tlsBackend{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		tb.mu.Lock()
		tb.proto, tb.clientCN = r.ProtoMajor, r.TLS.PeerCertificates[0].Subject.CommonName
		tb.mu.Unlock()
		upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`)
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAnyClientCert,
		// certtest issues server-auth leaves; verify the chain without the EKU check.
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			leaf, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			_, err = leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
			return err
		},
	}
	srv.StartTLS()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	tb.url = srv.URL + "/mcp"
	return tb
}

// tlsFiles writes the CA and a client pair issued by clientCA to a temporary directory.
func tlsFiles(t *testing.T, ca, clientCA *certtest.CA) (caFile, certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	caFile, certFile, keyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	certtest.WriteFiles(t, certFile, keyFile, clientCA.Issue(t, certtest.Leaf{CommonName: "gateway-client"}))
	return caFile, certFile, keyFile
}

func TestTLSBackend(t *testing.T) {
	ca, other := certtest.NewCA(t), certtest.NewCA(t)
	backend := startTLSBackend(t, ca)
	caFile, certFile, keyFile := tlsFiles(t, ca, ca)
	_, strangerCert, strangerKey := tlsFiles(t, ca, other)
	tests := []struct {
		name string
		tls  TLSConfig
		ok   bool
	}{
		{"private CA and client certificate", TLSConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}, true},
		{"server name override", TLSConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile, ServerName: "localhost"}, true},
		{"insecureSkipVerify", TLSConfig{CertFile: certFile, KeyFile: keyFile, InsecureSkipVerify: true}, true},
		{"system roots do not know the CA", TLSConfig{CertFile: certFile, KeyFile: keyFile}, false},
		{"wrong server name", TLSConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile, ServerName: "other.example"}, false},
		{"no client certificate", TLSConfig{CAFile: caFile}, false},
		{"client certificate from another CA", TLSConfig{CAFile: caFile, CertFile: strangerCert, KeyFile: strangerKey}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := singleBackend(t, backend.url, func(u *UpstreamConfig) { u.TLS = tt.tls })
			s, err := faultCall(r, context.Background())
			if !tt.ok {
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("Call = %v, want ErrUnavailable", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if err := drain(s); err != nil {
				t.Fatal(err)
			}
			backend.mu.Lock()
			defer backend.mu.Unlock()
			if backend.proto != 2 || backend.clientCN != "gateway-client" {
				t.Fatalf("backend saw HTTP/%d from %q, want HTTP/2 from gateway-client", backend.proto, backend.clientCN)
			}
		})
	}
}

func TestTLSFilesAtNew(t *testing.T) {
	ca := certtest.NewCA(t)
	caFile, certFile, keyFile := tlsFiles(t, ca, ca)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tls  TLSConfig
	}{
		{"missing CA file", TLSConfig{CAFile: caFile + ".missing"}},
		{"CA file without certificates", TLSConfig{CAFile: garbage}},
		{"missing key", TLSConfig{CertFile: certFile, KeyFile: keyFile + ".missing"}},
		{"key is not a key", TLSConfig{CertFile: certFile, KeyFile: garbage}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: "https://127.0.0.1:9/mcp", TLS: tt.tls}}}
			if _, err := New(cfg, Options{Cursors: newSealer()}); !errors.Is(err, ErrTLSFiles) {
				t.Fatalf("New = %v, want ErrTLSFiles", err)
			}
		})
	}
}

func TestTLSConfigValidate(t *testing.T) {
	tests := []struct {
		name, url, want string
		tls             TLSConfig
	}{
		{"valid", "https://a.example/mcp", "", TLSConfig{CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "k.pem"}},
		{"http url", "http://a.example/mcp", "https url", TLSConfig{CAFile: "ca.pem"}},
		{"cert without key", "https://a.example/mcp", "go together", TLSConfig{CertFile: "c.pem"}},
		{"insecure with a CA", "https://a.example/mcp", "contradicts", TLSConfig{CAFile: "ca.pem", InsecureSkipVerify: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := (&Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: tt.url, TLS: tt.tls}}}).Validate()
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestTLSRefusedHandshakeNotSent: a backend whose server refuses the gateway's TLS handshake
// (here for the client certificate it lacks, refused before the server's Finished under TLS
// 1.2) fails before any byte of the request was sent, which makes it no caller's failure for
// the circuit, though over TCP the refusal reaches the gateway as a bare "remote error".
func TestTLSRefusedHandshakeNotSent(t *testing.T) {
	ca := certtest.NewCA(t)
	pair := ca.Issue(t, certtest.Leaf{})
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("a request got through a refused handshake")
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAnyClientCert, MaxVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	caFile, _, _ := tlsFiles(t, ca, ca)
	r := singleBackend(t, srv.URL+"/mcp", func(u *UpstreamConfig) { u.TLS = TLSConfig{CAFile: caFile} })
	_, err = faultCall(r, context.Background())
	if !errors.Is(err, ErrUnavailable) || !wire.NotSent(err) {
		t.Fatalf("Call = %v (NotSent %v), want ErrUnavailable before anything was sent", err, wire.NotSent(err))
	}
}

// TestTLSBackendHeadersBounded: an https backend's response headers are bounded as a plain-http
// backend's are (direct.MaxResponseHeaderBytes), over HTTP/1.1 and HTTP/2, rather than by
// net/http's default of 10 MiB: a backend, or anything before it, cannot make the gateway hold
// ten megabytes of headers per call.
func TestTLSBackendHeadersBounded(t *testing.T) {
	ca := certtest.NewCA(t)
	pair := ca.Issue(t, certtest.Leaf{})
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	caFile, _, _ := tlsFiles(t, ca, ca)
	for _, h2 := range []bool{false, true} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if r.Header.Get("Mcp-Method") == MethodToolsCall {
				w.Header().Set("X-Padding", strings.Repeat("p", 2*direct.MaxResponseHeaderBytes))
			}
			upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`)
		}))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.EnableHTTP2 = h2
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		r := singleBackend(t, srv.URL+"/mcp", func(u *UpstreamConfig) { u.TLS = TLSConfig{CAFile: caFile} })
		s, err := faultCall(r, context.Background())
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, ErrBadResponse) && !errors.Is(err, ErrUnavailable) {
			t.Errorf("HTTP/2 %v: a response with %d bytes of headers: %v, want refused", h2, 2*direct.MaxResponseHeaderBytes, err)
		}
	}
}
