// Package certreload serves a TLS certificate and key from files and picks
// up new files without a restart, so that a rotated certificate (cert-manager,
// a renewed Secret) needs no rolling restart (docs/deploy.md, "TLS").
//
// The files are polled rather than watched: reading two small files every
// few seconds costs nothing, needs no fsnotify dependency, and sees every way
// a certificate can be replaced, including the Kubernetes Secret volume's
// atomic symlink swap (..data -> ..<timestamp>), in-place writes, and copies
// that keep the old modification time. Change is detected by content digest.
//
// A new pair that does not load (unreadable, malformed, key not matching the
// certificate, expired) is rejected: the previous certificate stays in
// service and the problem is logged once, until the files change again.
package certreload

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultInterval is how often [Reloader.Run] checks the files when no
// [WithInterval] is given. A renewed certificate is normally issued weeks
// before the old one expires, so seconds of delay do not matter.
const DefaultInterval = 5 * time.Second

// MaxFileBytes bounds how much of each file is read, so a path mistakenly
// pointing at a large file cannot make every poll read it whole. A PEM chain
// of a few certificates is a few kilobytes.
const MaxFileBytes = 1 << 20

// Errors returned by [New] and [Reloader.Reload]; file-system errors are
// wrapped as well, so errors.Is(err, fs.ErrNotExist) works.
var (
	// ErrInvalidPair means the files do not form a usable certificate and
	// key: malformed PEM, no certificate, or a key that does not match.
	ErrInvalidPair = errors.New("certreload: invalid certificate/key pair")
	// ErrExpired means the leaf certificate's NotAfter has passed.
	ErrExpired = errors.New("certreload: certificate has expired")
	// ErrTooLarge means a file is larger than [MaxFileBytes].
	ErrTooLarge = errors.New("certreload: file too large")
	// ErrInterval means [WithInterval] was given a duration that is not
	// positive.
	ErrInterval = errors.New("certreload: poll interval must be positive")
)

// Option configures a [Reloader].
type Option func(*options)

type options struct {
	interval time.Duration
	log      *slog.Logger
	now      func() time.Time
}

// WithInterval sets how often [Reloader.Run] checks the files; the default
// is [DefaultInterval].
func WithInterval(d time.Duration) Option { return func(o *options) { o.interval = d } }

// WithLogger sets the logger for reloads and rejected pairs; the default
// discards. Only paths and public certificate fields are logged.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithClock sets the clock used to reject expired certificates; the default
// is time.Now.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// Reloader holds the certificate currently served and replaces it when the
// files change. Its methods are safe for concurrent use.
type Reloader struct {
	certFile, keyFile string
	opts              options

	current atomic.Pointer[loaded]
	// mu serialises Reload so two concurrent checks cannot install an
	// older pair after a newer one.
	mu sync.Mutex
}

// loaded is one accepted pair and the digest of the bytes it came from.
type loaded struct {
	cert   *tls.Certificate
	digest [sha256.Size]byte
}

// New loads the pair from certFile and keyFile and fails if it does not
// load, so a misconfigured listener stops the process at start rather than
// at the first handshake. Call [Reloader.Run] to follow later changes.
func New(certFile, keyFile string, opts ...Option) (*Reloader, error) {
	o := options{interval: DefaultInterval, log: slog.New(slog.DiscardHandler), now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.interval <= 0 {
		return nil, fmt.Errorf("%w: %v", ErrInterval, o.interval)
	}
	r := &Reloader{certFile: certFile, keyFile: keyFile, opts: o}
	l, err := r.load()
	if err != nil {
		return nil, err
	}
	r.current.Store(l)
	o.log.Info("TLS certificate loaded", leafAttrs(l.cert)...)
	return r, nil
}

// GetCertificate returns the certificate currently in service, whatever the
// client asked for; it fits [tls.Config.GetCertificate].
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.current.Load().cert, nil
}

// Leaf returns the parsed leaf of the certificate currently in service, for
// example to export its expiry as a metric.
func (r *Reloader) Leaf() *x509.Certificate { return r.current.Load().cert.Leaf }

// Reload reads the files once and, when their content differs from the pair
// in service and forms a valid pair, puts the new pair in service. It
// reports whether it did. On error the pair in service is unchanged.
// Connections already established keep the certificate they negotiated.
func (r *Reloader) Reload() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	certPEM, keyPEM, err := r.read()
	if err != nil {
		return false, err
	}
	if digestOf(certPEM, keyPEM) == r.current.Load().digest {
		return false, nil
	}
	l, err := r.parse(certPEM, keyPEM)
	if err != nil {
		return false, err
	}
	r.current.Store(l)
	return true, nil
}

// Run checks the files every interval until ctx is done. A rejected pair is
// logged when it first appears, not on every poll, and the recovery is
// logged when a good pair is installed.
func (r *Reloader) Run(ctx context.Context) {
	t := time.NewTicker(r.opts.interval)
	defer t.Stop()
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lastErr = r.check(lastErr)
	}
}

// check runs one Reload and logs its outcome; it returns the error text to
// compare with on the next poll, so a pair rejected for the same reason is
// logged once.
func (r *Reloader) check(lastErr string) string {
	changed, err := r.Reload()
	if err != nil {
		if err.Error() != lastErr {
			r.opts.log.Warn("TLS certificate not reloaded; keeping the one in service",
				"certFile", r.certFile, "keyFile", r.keyFile, "error", err.Error())
		}
		return err.Error()
	}
	if changed {
		r.opts.log.Info("TLS certificate reloaded", leafAttrs(r.current.Load().cert)...)
	}
	return ""
}

func (r *Reloader) load() (*loaded, error) {
	certPEM, keyPEM, err := r.read()
	if err != nil {
		return nil, err
	}
	return r.parse(certPEM, keyPEM)
}

func (r *Reloader) read() (certPEM, keyPEM []byte, err error) {
	if certPEM, err = ReadFile(r.certFile); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = ReadFile(r.keyFile); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

func (r *Reloader) parse(certPEM, keyPEM []byte) (*loaded, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The tls error text names the problem but never includes key bytes.
		return nil, fmt.Errorf("%w: %s, %s: %w", ErrInvalidPair, r.certFile, r.keyFile, err)
	}
	if now := r.opts.now(); now.After(cert.Leaf.NotAfter) {
		return nil, fmt.Errorf("%w: %s expired at %s", ErrExpired, r.certFile, cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return &loaded{cert: &cert, digest: digestOf(certPEM, keyPEM)}, nil
}

// ReadFile reads at most MaxFileBytes of a PEM file, refusing a larger one
// with ErrTooLarge. It follows symlinks at every read, which is what makes a
// Kubernetes Secret's ..data swap visible.
func ReadFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("certreload: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("certreload: reading %s: %w", name, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, name, MaxFileBytes)
	}
	return b, nil
}

// digestOf identifies a pair's content. The length prefix keeps a byte
// moved from one file to the other from producing the same digest.
func digestOf(certPEM, keyPEM []byte) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d:", len(certPEM))
	h.Write(certPEM)
	h.Write(keyPEM)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

func leafAttrs(c *tls.Certificate) []any {
	leaf := c.Leaf
	return []any{
		"subject", leaf.Subject.String(),
		"serial", leaf.SerialNumber.String(),
		"notAfter", leaf.NotAfter.UTC().Format(time.RFC3339),
		"dnsNames", leaf.DNSNames,
	}
}
