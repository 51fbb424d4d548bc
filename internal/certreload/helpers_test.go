package certreload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/certtest"
)

// waitLimit bounds every wait in these tests so a broken reload fails the
// test instead of hanging it; it is never a measured duration.
const waitLimit = 10 * time.Second

// fixture is a CA, a first pair laid out as plain files, and paths to them.
type fixture struct {
	ca                *certtest.CA
	v1                certtest.Pair
	certFile, keyFile string
}

func newFixture(tb testing.TB) fixture {
	tb.Helper()
	ca := certtest.NewCA(tb)
	f := fixture{ca: ca, v1: ca.Issue(tb, certtest.Leaf{CommonName: "v1"})}
	dir := tb.TempDir()
	f.certFile, f.keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	certtest.WriteFiles(tb, f.certFile, f.keyFile, f.v1)
	return f
}

// serveTLS runs a real HTTPS server with ServerTLSConfig(r) on loopback and
// returns its address; the handler answers with the HTTP protocol used.
func serveTLS(t *testing.T, r *Reloader) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		TLSConfig: ServerTLSConfig(r),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			io.WriteString(w, req.Proto)
		}),
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError),
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = srv.Shutdown(ctx)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("ServeTLS: %v", err)
		}
	})
	return ln.Addr().String()
}

// handshake opens a new TLS connection trusting only pool and returns its
// state; each call is a fresh connection with no session to resume.
func handshake(t *testing.T, addr string, cfg *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	d := &tls.Dialer{Config: cfg, NetDialer: &net.Dialer{Timeout: waitLimit}}
	conn, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState(), nil
}

// servedSerial is the serial number of the leaf a new connection gets.
func servedSerial(t *testing.T, addr string, pool *x509.CertPool) *big.Int {
	t.Helper()
	st, err := handshake(t, addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return st.PeerCertificates[0].SerialNumber
}

func wantSerial(t *testing.T, got *big.Int, want certtest.Pair) {
	t.Helper()
	if got.Cmp(want.Leaf.SerialNumber) != 0 {
		t.Fatalf("served serial %v, want %v (%s)", got, want.Leaf.SerialNumber, want.Leaf.Subject.CommonName)
	}
}

// debugLogger logs every level as text to w.
func debugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// keepAliveClient is an HTTPS client with its own connection pool, so
// requests reuse one connection until the test ends.
func keepAliveClient(t *testing.T, pool *x509.CertPool) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: waitLimit}
}

// getVia makes a request with c and checks the leaf its connection shows.
func getVia(t *testing.T, c *http.Client, addr string, want certtest.Pair) {
	t.Helper()
	res, err := c.Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		t.Fatal(err)
	}
	wantSerial(t, res.TLS.PeerCertificates[0].SerialNumber, want)
}
