package authz

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-gateway/gateway/internal/egress"
)

// Classes of a failure to fetch an issuer's discovery document or key set: a closed set, for
// the log and the readiness report. FetchErrorClass returns one of them.
const (
	// FetchDNS: the issuer's host name does not resolve (a typo'd URL, a missing DNS entry).
	FetchDNS = "dns"
	// FetchConnect: the connection was refused or reset (nothing listens there, a firewall).
	FetchConnect = "connect"
	// FetchTimeout: no answer within auth.fetchTimeout.
	FetchTimeout = "timeout"
	// FetchTLS: the TLS handshake failed (untrusted or mismatched certificate).
	FetchTLS = "tls"
	// FetchHTTPStatus: the issuer answered with a status other than 200 (a wrong path: 404).
	FetchHTTPStatus = "http_status"
	// FetchBadDocument: the discovery document or key set is not what it must be.
	FetchBadDocument = "bad_document"
	// FetchIssuerMismatch: the discovery document names another issuer than the configured
	// one (OIDC Discovery §4.3), often a missing or extra trailing slash.
	FetchIssuerMismatch = "issuer_mismatch"
	// FetchNoJWKSURI: the discovery document has no jwks_uri.
	FetchNoJWKSURI = "no_jwks_uri"
	// FetchNoKeys: the key set holds no key a token could be verified with.
	FetchNoKeys = "no_keys"
	// FetchRefused: the gateway does not go where the discovery document or a redirect sends
	// it, or where a name resolved (internal/egress): a loopback key set named from elsewhere,
	// the cloud metadata service.
	FetchRefused = "refused"
	// FetchOther: anything else.
	FetchOther = "other"
)

// maxKeyRetry caps the back-off between attempts at an issuer whose keys were never fetched.
const maxKeyRetry = 30 * time.Second

var errNoKeys = errors.New("the key set holds no usable signing key")

// FetchErrorClass classifies a failure to fetch an issuer's discovery document or key set.
func FetchErrorClass(err error) string {
	var (
		dns  *net.DNSError
		nerr net.Error
		cert *tls.CertificateVerificationError
		ua   x509.UnknownAuthorityError
		host x509.HostnameError
		inv  x509.CertificateInvalidError
		rec  tls.RecordHeaderError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errNoKeys):
		return FetchNoKeys
	case errors.Is(err, errNoJWKSURI):
		return FetchNoJWKSURI
	case errors.Is(err, egress.ErrRefused), errors.Is(err, egress.ErrNamed):
		return FetchRefused
	case errors.Is(err, errIssuerMismatch):
		return FetchIssuerMismatch
	case errors.Is(err, errBadDocument):
		return FetchBadDocument
	case errors.Is(err, errJWKSStatus):
		return FetchHTTPStatus
	case errors.As(err, &dns):
		return FetchDNS
	case errors.As(err, &cert), errors.As(err, &ua), errors.As(err, &host), errors.As(err, &inv), errors.As(err, &rec):
		return FetchTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return FetchTimeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH):
		return FetchConnect
	}
	return FetchOther
}

// IssuerKeyError is an issuer whose keys have never been fetched, with the last attempt's
// failure (nil before the first attempt).
type IssuerKeyError struct {
	// Issuer is the configured issuer URL.
	Issuer string
	// Err is the last attempt's failure, or nil.
	Err error
}

// Error names the issuer, the class of the failure and the failure.
func (e *IssuerKeyError) Error() string {
	if e.Err == nil {
		return "issuer " + e.Issuer + ": keys not fetched yet"
	}
	return fmt.Sprintf("issuer %s: keys not fetched (%s): %v", e.Issuer, FetchErrorClass(e.Err), e.Err)
}

// Unwrap returns the failure.
func (e *IssuerKeyError) Unwrap() error { return e.Err }

// PendingKeysError lists every issuer whose keys have never been fetched.
type PendingKeysError []*IssuerKeyError

// Error joins the issuers' errors on one line, as the readiness report shows them.
func (e PendingKeysError) Error() string {
	parts := make([]string, len(e))
	for i, ie := range e {
		parts[i] = ie.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the issuers' errors.
func (e PendingKeysError) Unwrap() []error {
	out := make([]error, len(e))
	for i, ie := range e {
		out[i] = ie
	}
	return out
}

// KeysReady returns nil once every configured issuer's keys have been fetched at least once
// (by FetchKeys, WatchKeys or a request), and a PendingKeysError naming the others otherwise.
// It makes no network call: it is the readiness check. Keys fetched once stay in use while the
// issuer is unreachable later, so a replica does not leave the load balancer over an IdP outage.
func (a *Authenticator) KeysReady() error {
	var pending PendingKeysError
	for _, name := range a.order {
		is := a.issuers[name]
		if ok, err := is.keyState(); !ok {
			pending = append(pending, &IssuerKeyError{Issuer: name, Err: err})
		}
	}
	if len(pending) == 0 {
		return nil
	}
	return pending
}

// FetchKeys fetches, in parallel, the discovery document and key set of every issuer whose keys
// have never been fetched, and returns what still fails as a PendingKeysError (nil when every
// issuer has its keys).
func (a *Authenticator) FetchKeys(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, is := range a.issuers {
		wg.Go(func() { is.fetchKeys(ctx) })
	}
	wg.Wait()
	return a.KeysReady()
}

// WatchKeys fetches every issuer's keys until each was fetched once or ctx ends. Each failure
// is logged as a warning naming the issuer URL and the class of the failure, then tried again
// after a back-off that starts at auth.discoveryRetryInterval and doubles up to 30 s (with up to
// a fifth more at random, so that replicas started together do not call the issuer together).
func (a *Authenticator) WatchKeys(ctx context.Context) {
	wait := a.retryBase
	failed := map[string]bool{}
	for {
		err := a.FetchKeys(ctx)
		if ctx.Err() != nil {
			return
		}
		var pending PendingKeysError
		errors.As(err, &pending)
		still := map[string]bool{}
		d := wait + rand.N(wait/5+1)
		for _, ie := range pending {
			still[ie.Issuer] = true
			a.log.Warn("issuer keys not fetched: the gateway is not ready until they are", "issuer", ie.Issuer,
				"class", FetchErrorClass(ie.Err), "error", ie.Err, "retry_in", d.Round(time.Millisecond))
		}
		for name := range failed {
			if !still[name] {
				a.log.Info("issuer keys fetched", "issuer", name)
			}
		}
		if len(pending) == 0 {
			return
		}
		failed = still
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, maxKeyRetry)
	}
}

// keyState says whether the issuer's keys were ever fetched (a non-empty set), and the last
// failure of fetchKeys.
func (is *issuer) keyState() (fetched bool, lastErr error) {
	is.mu.Lock()
	ks, lastErr := is.keys, is.keyErr
	is.mu.Unlock()
	if ks == nil {
		return false, lastErr
	}
	ks.mu.RLock()
	fetched = !ks.fetchedAt.IsZero() && len(ks.keys) > 0
	ks.mu.RUnlock()
	return fetched, lastErr
}

// fetchKeys runs discovery (unless a JWKS URL is configured) and fetches the key set, unless
// the keys were fetched already, and records the failure for KeysReady.
func (is *issuer) fetchKeys(ctx context.Context) {
	if ok, _ := is.keyState(); ok {
		return
	}
	err := is.fetchOnce(ctx)
	is.mu.Lock()
	is.keyErr = err
	is.mu.Unlock()
}

func (is *issuer) fetchOnce(ctx context.Context) error {
	if _, err := is.ready(ctx); err != nil {
		return err
	}
	is.mu.Lock()
	ks := is.keys
	is.mu.Unlock()
	res, err := ks.refresh(ctx)
	if err != nil {
		return err
	}
	if len(res.keys) == 0 {
		return errNoKeys
	}
	return nil
}
