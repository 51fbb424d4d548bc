package certreload

import (
	"crypto/tls"
	"io"
	"testing"
)

func TestServerTLSConfigHandshakes(t *testing.T) {
	f := newFixture(t)
	r, err := New(f.certFile, f.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, r)
	tests := []struct {
		name        string
		client      *tls.Config
		wantOK      bool
		wantVersion uint16
		wantALPN    string
	}{
		{"TLS 1.3 offering h2", &tls.Config{NextProtos: []string{"h2", "http/1.1"}}, true, tls.VersionTLS13, "h2"},
		{"HTTP/1.1 only client", &tls.Config{NextProtos: []string{"http/1.1"}}, true, tls.VersionTLS13, "http/1.1"},
		{"TLS 1.2 with AES-GCM", &tls.Config{MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}, true, tls.VersionTLS12, ""},
		{"TLS 1.2 with ChaCha20", &tls.Config{MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}}, true, tls.VersionTLS12, ""},
		{"TLS 1.2 with CBC only", &tls.Config{MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}, false, 0, ""},
		{"TLS 1.1", &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.client.Clone()
			cfg.RootCAs = f.ca.Pool()
			st, err := handshake(t, addr, cfg)
			if !tt.wantOK {
				if err == nil {
					t.Fatalf("handshake succeeded with version %x suite %x", st.Version, st.CipherSuite)
				}
				return
			}
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			if st.Version != tt.wantVersion || st.NegotiatedProtocol != tt.wantALPN {
				t.Fatalf("version %x ALPN %q, want %x %q", st.Version, st.NegotiatedProtocol, tt.wantVersion, tt.wantALPN)
			}
		})
	}
}

// TestServerTLSConfigServesHTTP2 checks net/http accepts the configuration
// for HTTP/2 (it refuses a cipher list without the RFC 9113 suite).
func TestServerTLSConfigServesHTTP2(t *testing.T) {
	f := newFixture(t)
	r, err := New(f.certFile, f.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, r)
	res, err := keepAliveClient(t, f.ca.Pool()).Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtoMajor != 2 || string(body) != "HTTP/2.0" {
		t.Fatalf("response over %s, handler saw %q; want HTTP/2", res.Proto, body)
	}
}
