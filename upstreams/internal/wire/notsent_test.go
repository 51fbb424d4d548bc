package wire

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestNotSentTLS checks the class "nothing of the request was sent" against real TLS servers:
// every handshake the server rejects is NotSent, however its failure reaches the client (over
// TCP a server's alert is a bare net.OpError "remote error", not tls.AlertError), and every
// failure after the request was written is not, an alert included.
func TestNotSentTLS(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
	tests := []struct {
		name    string
		server  *tls.Config // applied over httptest's own
		client  func(*tls.Config)
		handler http.Handler
		notSent bool
	}{
		{"protocol version mismatch", &tls.Config{MinVersion: tls.VersionTLS13},
			func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }, ok, true},
		// Under TLS 1.2 the server refuses the missing certificate before its Finished, so the
		// client's handshake fails.
		{"client certificate required, TLS 1.2", &tls.Config{ClientAuth: tls.RequireAnyClientCert, MaxVersion: tls.VersionTLS12},
			nil, ok, true},
		// Under TLS 1.3 the client's handshake completes before the server checks, so the
		// request is written and the alert comes after it: not NotSent.
		{"client certificate required, TLS 1.3", &tls.Config{ClientAuth: tls.RequireAnyClientCert, MinVersion: tls.VersionTLS13},
			nil, ok, false},
		{"reset after reading the request", nil, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			c, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			c.(*tls.Conn).NetConn().(*net.TCPConn).SetLinger(0)
			c.Close()
		}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(tt.handler)
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
			if tt.server != nil {
				srv.TLS = tt.server // StartTLS adds the test certificate
			}
			srv.StartTLS()
			defer srv.Close()
			tr := srv.Client().Transport.(*http.Transport).Clone()
			defer tr.CloseIdleConnections()
			if tt.client != nil {
				tt.client(tr.TLSClientConfig)
			}
			ctx := WatchConnect(context.Background())
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader([]byte(`{"jsonrpc":"2.0"}`)))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatal("the request succeeded")
			}
			if got := NotSent(Classify(ctx, "b", err)); got != tt.notSent {
				t.Fatalf("NotSent = %v for %v, want %v", got, err, tt.notSent)
			}
		})
	}
}
