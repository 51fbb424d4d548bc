package certreload

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/certtest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

func TestNewRejectsBadPairs(t *testing.T) {
	f := newFixture(t)
	other := f.ca.Issue(t, certtest.Leaf{CommonName: "other"})
	expired := f.ca.Issue(t, certtest.Leaf{NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	tests := []struct {
		name     string
		cert     []byte
		key      []byte
		noKey    bool
		opts     []Option
		wantErr  error
		wantText string
	}{
		{name: "good pair", cert: f.v1.CertPEM, key: f.v1.KeyPEM},
		{name: "key of another certificate", cert: f.v1.CertPEM, key: other.KeyPEM, wantErr: ErrInvalidPair, wantText: "does not match"},
		{name: "garbage certificate", cert: []byte("not a certificate"), key: f.v1.KeyPEM, wantErr: ErrInvalidPair},
		{name: "empty key", cert: f.v1.CertPEM, key: nil, wantErr: ErrInvalidPair},
		{name: "missing key file", cert: f.v1.CertPEM, noKey: true, wantErr: fs.ErrNotExist},
		{name: "expired", cert: expired.CertPEM, key: expired.KeyPEM, wantErr: ErrExpired},
		{name: "too large", cert: append(f.v1.CertPEM, make([]byte, MaxFileBytes)...), key: f.v1.KeyPEM, wantErr: ErrTooLarge},
		{name: "zero interval", cert: f.v1.CertPEM, key: f.v1.KeyPEM, opts: []Option{WithInterval(0)}, wantErr: ErrInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			certFile, keyFile := dir+"/tls.crt", dir+"/tls.key"
			writeFile(t, certFile, tt.cert)
			if !tt.noKey {
				writeFile(t, keyFile, tt.key)
			}
			r, err := New(certFile, keyFile, tt.opts...)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if r.Leaf().SerialNumber.Cmp(f.v1.Leaf.SerialNumber) != 0 {
					t.Fatalf("Leaf = %v, want the loaded pair", r.Leaf().Subject)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || r != nil {
				t.Fatalf("New = %v, %v; want %v", r, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q lacks %q", err, tt.wantText)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("error reveals key material: %q", err)
			}
		})
	}
}

// TestRotationServedToNewConnections rotates the files the two ways they
// change in production and checks what a new TLS connection is served, while
// a connection opened before the rotation keeps working.
func TestRotationServedToNewConnections(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, ca *certtest.CA, v1 certtest.Pair) (certFile, keyFile string, rotate func(certtest.Pair))
	}{
		{"kubernetes secret symlink swap", func(t *testing.T, _ *certtest.CA, v1 certtest.Pair) (string, string, func(certtest.Pair)) {
			m := certtest.NewMount(t, t.TempDir(), v1)
			return m.CertFile(), m.KeyFile(), func(p certtest.Pair) { m.Update(t, p) }
		}},
		{"files rewritten in place", func(t *testing.T, _ *certtest.CA, v1 certtest.Pair) (string, string, func(certtest.Pair)) {
			dir := t.TempDir()
			certFile, keyFile := dir+"/tls.crt", dir+"/tls.key"
			certtest.WriteFiles(t, certFile, keyFile, v1)
			return certFile, keyFile, func(p certtest.Pair) { certtest.WriteFiles(t, certFile, keyFile, p) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca := certtest.NewCA(t)
			v1 := ca.Issue(t, certtest.Leaf{CommonName: "v1"})
			certFile, keyFile, rotate := tt.setup(t, ca, v1)
			r, err := New(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			addr := serveTLS(t, r)
			wantSerial(t, servedSerial(t, addr, ca.Pool()), v1)
			old := keepAliveClient(t, ca.Pool())
			getVia(t, old, addr, v1)

			if changed, err := r.Reload(); changed || err != nil {
				t.Fatalf("Reload with unchanged files = %v, %v", changed, err)
			}
			v2 := ca.Issue(t, certtest.Leaf{CommonName: "v2"})
			rotate(v2)
			if changed, err := r.Reload(); !changed || err != nil {
				t.Fatalf("Reload after rotation = %v, %v", changed, err)
			}
			wantSerial(t, servedSerial(t, addr, ca.Pool()), v2)
			if r.Leaf().Subject.CommonName != "v2" {
				t.Errorf("Leaf = %s, want v2", r.Leaf().Subject)
			}
			// The connection negotiated before the rotation is not
			// disturbed: it still works and still shows the old leaf.
			getVia(t, old, addr, v1)
		})
	}
}

// TestBrokenPairKeepsServing breaks the files in the ways a rotation can go
// wrong; the pair in service stays, and fixing the files is picked up.
func TestBrokenPairKeepsServing(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(t *testing.T, f fixture, v2 certtest.Pair)
		clock   time.Time
		wantErr error
	}{
		{"only the certificate written so far", func(t *testing.T, f fixture, v2 certtest.Pair) {
			writeFile(t, f.certFile, v2.CertPEM)
		}, time.Time{}, ErrInvalidPair},
		{"truncated certificate", func(t *testing.T, f fixture, v2 certtest.Pair) {
			writeFile(t, f.certFile, v2.CertPEM[:len(v2.CertPEM)/2])
			writeFile(t, f.keyFile, v2.KeyPEM)
		}, time.Time{}, ErrInvalidPair},
		{"key file removed", func(t *testing.T, f fixture, _ certtest.Pair) {
			if err := os.Remove(f.keyFile); err != nil {
				t.Fatal(err)
			}
		}, time.Time{}, fs.ErrNotExist},
		{"new certificate already expired", func(t *testing.T, f fixture, v2 certtest.Pair) {
			certtest.WriteFiles(t, f.certFile, f.keyFile, v2)
		}, time.Now().Add(2 * certtest.DefaultValidity), ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			now := time.Now()
			r, err := New(f.certFile, f.keyFile, WithClock(func() time.Time { return now }))
			if err != nil {
				t.Fatal(err)
			}
			addr := serveTLS(t, r)
			v2 := f.ca.Issue(t, certtest.Leaf{CommonName: "v2"})
			tt.breakIt(t, f, v2)
			if !tt.clock.IsZero() {
				now = tt.clock
			}
			changed, err := r.Reload()
			if changed || !errors.Is(err, tt.wantErr) {
				t.Fatalf("Reload = %v, %v; want false, %v", changed, err, tt.wantErr)
			}
			wantSerial(t, servedSerial(t, addr, f.ca.Pool()), f.v1)

			now = time.Now()
			v3 := f.ca.Issue(t, certtest.Leaf{CommonName: "v3"})
			certtest.WriteFiles(t, f.certFile, f.keyFile, v3)
			if changed, err := r.Reload(); !changed || err != nil {
				t.Fatalf("Reload after the fix = %v, %v", changed, err)
			}
			wantSerial(t, servedSerial(t, addr, f.ca.Pool()), v3)
		})
	}
}

// TestRunFollowsTheFiles runs the real poll loop over a Secret-style mount.
func TestRunFollowsTheFiles(t *testing.T) {
	ca := certtest.NewCA(t)
	v1 := ca.Issue(t, certtest.Leaf{CommonName: "v1"})
	m := certtest.NewMount(t, t.TempDir(), v1)
	var logs mcptest.LogBuffer
	r, err := New(m.CertFile(), m.KeyFile(), WithInterval(10*time.Millisecond), WithLogger(debugLogger(&logs)))
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { r.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	v2 := ca.Issue(t, certtest.Leaf{CommonName: "v2"})
	m.Update(t, v2)
	waitFor(t, "the v2 certificate to be served", func() bool {
		return servedSerial(t, addr, ca.Pool()).Cmp(v2.Leaf.SerialNumber) == 0
	})
	cancel()
	<-stopped
	out := logs.String()
	for _, want := range []string{"TLS certificate loaded", "TLS certificate reloaded", `subject="CN=v2"`, "serial=" + v2.Leaf.SerialNumber.String()} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "BEGIN") {
		t.Errorf("log reveals PEM content:\n%s", out)
	}
}

// TestCheckLogsARejectedPairOnce: the poll loop sees the same broken files
// every interval; one warning is enough, and a different problem is news.
func TestCheckLogsARejectedPairOnce(t *testing.T) {
	f := newFixture(t)
	var logs mcptest.LogBuffer
	r, err := New(f.certFile, f.keyFile, WithLogger(debugLogger(&logs)))
	if err != nil {
		t.Fatal(err)
	}
	v2 := f.ca.Issue(t, certtest.Leaf{CommonName: "v2"})
	writeFile(t, f.certFile, v2.CertPEM)
	last := ""
	for range 3 {
		last = r.check(last)
	}
	if n := strings.Count(logs.String(), "not reloaded"); n != 1 {
		t.Fatalf("%d warnings for one broken pair, want 1:\n%s", n, logs.String())
	}
	if err := os.Remove(f.keyFile); err != nil {
		t.Fatal(err)
	}
	last = r.check(last)
	if n := strings.Count(logs.String(), "not reloaded"); n != 2 {
		t.Fatalf("%d warnings after a second, different problem, want 2", n)
	}
	if strings.Contains(logs.String(), "PRIVATE KEY") {
		t.Errorf("log reveals key material:\n%s", logs.String())
	}
	writeFile(t, f.keyFile, v2.KeyPEM)
	if last = r.check(last); last != "" || !strings.Contains(logs.String(), "TLS certificate reloaded") {
		t.Fatalf("check after the fix = %q; log:\n%s", last, logs.String())
	}
}

func writeFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing the test after waitLimit.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
