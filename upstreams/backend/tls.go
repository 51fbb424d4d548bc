package backend

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/certreload"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/upstreams/direct"
)

// DefaultResponseHeaderTimeout bounds the wait for a backend's response headers. It is
// separate from the whole-call timeout: once a backend has answered with an event stream, a
// long tool call may stream for as long as Config.Timeout allows.
const DefaultResponseHeaderTimeout = 30 * time.Second

// clientCertRecheck is the least time between two reads of the client certificate files.
// Handshakes are rare with pooled connections, so checking at handshake time is cheap and
// picks up a rotated certificate without a background goroutine.
const clientCertRecheck = 10 * time.Second

// maxCAFileBytes bounds the CA bundle read at New; a bundle of a few hundred roots is far below.
const maxCAFileBytes = 4 << 20

// ErrTLSFiles wraps a failure to load the CA bundle or the client certificate at New.
var ErrTLSFiles = errors.New("upstreams: TLS files")

// TLSConfig is the TLS setting of one backend: its own trust anchors and a client certificate
// for mutual TLS. It applies only to https URLs.
type TLSConfig struct {
	// CAFile is a PEM bundle of the CAs that sign the backend's certificate. When set, it
	// replaces the system roots for this backend (a private PKI). Empty: system roots.
	CAFile string `yaml:"caFile"`
	// CertFile is the PEM client certificate chain presented to the backend (mTLS). Set
	// together with KeyFile. The files are re-read when they change, at most every 10s.
	CertFile string `yaml:"certFile"`
	// KeyFile is the PEM private key of CertFile.
	KeyFile string `yaml:"keyFile"`
	// ServerName overrides the name verified in the backend's certificate (and sent as SNI),
	// for a backend reached through an address its certificate does not name. Empty: the
	// URL's host.
	ServerName string `yaml:"serverName"`
	// InsecureSkipVerify disables verification of the backend's certificate. Default false;
	// for development only, and refused together with CAFile or ServerName, which would be
	// silently ignored.
	InsecureSkipVerify bool `yaml:"insecureSkipVerify"`
}

func (t *TLSConfig) set() bool {
	return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify
}

// validate checks t against the backend URL.
func (t *TLSConfig) validate(rawURL string) []error {
	if !t.set() {
		return nil
	}
	var errs []error
	if u, err := url.Parse(rawURL); err == nil && u.Scheme != "https" {
		errs = append(errs, configerr.At("", "applies only to an https url"))
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		errs = append(errs, configerr.At("certFile", "certFile and keyFile go together: set both or neither"))
	}
	if t.InsecureSkipVerify && (t.CAFile != "" || t.ServerName != "") {
		errs = append(errs, configerr.At("insecureSkipVerify", "contradicts caFile and serverName, which it would ignore"))
	}
	return errs
}

// CheckFiles reads the CA bundle and the client certificate and key t names, as New will for
// the https backend at rawURL, so that a configuration check reports a file that is missing,
// unreadable or not PEM without building the backend. It connects to nothing.
func (t TLSConfig) CheckFiles(rawURL string) error {
	if u, err := url.Parse(rawURL); err != nil || u.Scheme != "https" || !t.set() {
		return nil // New reads them for an https backend only
	}
	_, err := clientTLS(t, slog.New(slog.DiscardHandler), time.Now)
	return err
}

// clientTLS compiles t into a client configuration, reading the files once so a mistake
// stops the process at start rather than at the first call.
func clientTLS(t TLSConfig, log *slog.Logger, now func() time.Time) (*tls.Config, error) {
	c := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // explicit, validated opt-in
	}
	if t.CAFile != "" {
		pool, err := loadCAs(t.CAFile)
		if err != nil {
			return nil, err
		}
		c.RootCAs = pool
	}
	if t.CertFile != "" {
		rel, err := certreload.New(t.CertFile, t.KeyFile, certreload.WithClock(now))
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate: %w", ErrTLSFiles, err)
		}
		cc := &clientCert{rel: rel, now: now, log: log, checked: now()}
		c.GetClientCertificate = cc.get
	}
	return c, nil
}

func loadCAs(file string) (*x509.CertPool, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%w: caFile: %w", ErrTLSFiles, err)
	}
	defer f.Close()
	pem, err := io.ReadAll(io.LimitReader(f, maxCAFileBytes+1))
	if err != nil || len(pem) > maxCAFileBytes {
		return nil, fmt.Errorf("%w: caFile %s: unreadable or over %d bytes", ErrTLSFiles, file, maxCAFileBytes)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: caFile %s holds no PEM certificate", ErrTLSFiles, file)
	}
	return pool, nil
}

// clientCert serves the client certificate, re-reading its files at handshake time when the
// last check is older than clientCertRecheck.
type clientCert struct {
	rel     *certreload.Reloader
	now     func() time.Time
	log     *slog.Logger
	mu      sync.Mutex
	checked time.Time
}

func (c *clientCert) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	due := c.now().Sub(c.checked) >= clientCertRecheck
	if due {
		c.checked = c.now()
	}
	c.mu.Unlock()
	if due {
		if _, err := c.rel.Reload(); err != nil {
			// The pair in service stays; the error names files, never key material.
			c.log.Warn("upstream client certificate not reloaded", "error", err.Error())
		}
	}
	return c.rel.GetCertificate(nil)
}

// configureTransport applies the TLS and response-header settings of uc to b's own transport,
// and gives a plain-http backend the direct transport instead. A transport given through
// Env.Transport (tests) is left alone.
func configureTransport(b *Backend, uc *Config, log *slog.Logger, now func() time.Time) error {
	if b.transport == nil {
		return nil
	}
	b.transport.ResponseHeaderTimeout = orDuration(uc.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	// The headers' size as well: net/http's default is 10 MiB a response, held until the call ends.
	b.transport.MaxResponseHeaderBytes = direct.MaxResponseHeaderBytes
	if d := direct.New(uc.URL, direct.Config{ConnectTimeout: orDuration(uc.ConnectTimeout, DefaultConnectTimeout),
		ResponseHeaderTimeout: b.transport.ResponseHeaderTimeout, KeepAlive: tcpKeepAlive,
		IdleTimeout: orDuration(uc.IdleConnTimeout, DefaultIdleConnTimeout), MaxIdle: maxIdleConnsPerHost, Now: now}); d != nil {
		// Plain http: the synchronous HTTP/1.1 client (package direct) carries every request.
		b.direct, b.rt, b.client.Transport = d, d, d
		return nil
	}
	if !uc.TLS.set() {
		return nil
	}
	c, err := clientTLS(uc.TLS, log, now)
	if err != nil {
		return fmt.Errorf("upstream %s: %w", uc.Name, err)
	}
	if uc.TLS.InsecureSkipVerify {
		log.Warn("upstream TLS verification disabled", "upstream", uc.Name)
	}
	// With a custom TLSClientConfig, HTTP/2 is negotiated only because ForceAttemptHTTP2 is set
	// (net/http: a non-nil TLSClientConfig otherwise disables it).
	b.transport.TLSClientConfig = c
	b.transport.ForceAttemptHTTP2 = true
	return nil
}
