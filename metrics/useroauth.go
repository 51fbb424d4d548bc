package metrics

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/useroauth"
)

// Metric names of per-user OAuth (docs/user-oauth.md).
const (
	// NameUserOAuthConsents counts consents by backend, event (started, completed, failed)
	// and, for a failure, its reason (useroauth.FailureReasons; none otherwise).
	NameUserOAuthConsents = "mcp_gateway_user_oauth_consents_total"
	// NameUserOAuthRefreshes counts token refreshes by backend and result (ok, invalid_grant,
	// unavailable).
	NameUserOAuthRefreshes = "mcp_gateway_user_oauth_refreshes_total"
	// NameUserOAuthRevocations counts records removed by a user's disconnect or an operator's
	// revocation, by backend and by (user, admin).
	NameUserOAuthRevocations = "mcp_gateway_user_oauth_revocations_total"
	// NameUserOAuthVaultRecords is the number of callers holding tokens for each backend, read
	// from the shared store at scrape time.
	NameUserOAuthVaultRecords = "mcp_gateway_user_oauth_vault_records"
)

// vaultScrapeTimeout bounds the store reads of one scrape of the vault's size.
const vaultScrapeTimeout = 2 * time.Second

// UserOAuth records per-user OAuth's events. Its backend labels are the configured per-user
// backends, every other value a closed set; anything outside is counted as Other. It implements
// useroauth.Observer; a nil *UserOAuth records nothing.
type UserOAuth struct {
	backends    []string
	consents    *prometheus.CounterVec
	refreshes   *prometheus.CounterVec
	revocations *prometheus.CounterVec
}

// NewUserOAuth registers per-user OAuth's counters for backends with reg.
func NewUserOAuth(reg prometheus.Registerer, backends []string) (*UserOAuth, error) {
	u := &UserOAuth{
		backends: slices.Clone(backends),
		consents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameUserOAuthConsents,
			Help: "Per-user OAuth consents by backend, event and failure reason."}, []string{"upstream", "event", "reason"}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameUserOAuthRefreshes,
			Help: "Per-user OAuth token refreshes by backend and result."}, []string{"upstream", "result"}),
		revocations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameUserOAuthRevocations,
			Help: "Per-user OAuth token records removed by a disconnect or an operator, by backend and who asked."}, []string{"upstream", "by"}),
	}
	for _, b := range u.backends {
		u.consents.WithLabelValues(b, useroauth.ConsentStarted, ReasonNone)
		u.consents.WithLabelValues(b, useroauth.ConsentCompleted, ReasonNone)
		for _, r := range useroauth.FailureReasons() {
			u.consents.WithLabelValues(b, useroauth.ConsentFailed, r)
		}
		for _, r := range refreshResults {
			u.refreshes.WithLabelValues(b, r)
		}
		for _, by := range revokers {
			u.revocations.WithLabelValues(b, by)
		}
	}
	for _, c := range []prometheus.Collector{u.consents, u.refreshes, u.revocations} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (u *UserOAuth) backend(b string) string { return closed(b, u.backends) }

// Consent counts a consent event (useroauth.Observer).
func (u *UserOAuth) Consent(upstream, event, reason string) {
	if u == nil {
		return
	}
	if event != useroauth.ConsentFailed {
		reason = ReasonNone // never empty: PromQL reads an empty value as an absent label
	} else {
		reason = closed(reason, useroauth.FailureReasons())
	}
	u.consents.WithLabelValues(u.backend(upstream), event, reason).Inc()
}

// refreshResults and revokers are the closed sets of the result and by labels.
var (
	refreshResults = []string{useroauth.RefreshOK, useroauth.RefreshInvalidGrant, useroauth.RefreshUnavailable}
	revokers       = []string{"user", "admin"}
)

// closed is v when set holds it, else Other.
func closed(v string, set []string) string {
	if slices.Contains(set, v) {
		return v
	}
	return Other
}

// Refresh counts a refresh by result (useroauth.Observer).
func (u *UserOAuth) Refresh(upstream, result string) {
	if u != nil {
		u.refreshes.WithLabelValues(u.backend(upstream), closed(result, refreshResults)).Inc()
	}
}

// Revoked counts n records removed (useroauth.Observer).
func (u *UserOAuth) Revoked(upstream, by string, n int) {
	if u != nil && n > 0 {
		u.revocations.WithLabelValues(u.backend(upstream), closed(by, revokers)).Add(float64(n))
	}
}

// VaultSize is the collector of NameUserOAuthVaultRecords over the current per-user OAuth
// service (Set): the records of each of its backends, read from the store at scrape time. A
// backend whose count fails at scrape is left out.
type VaultSize struct {
	current atomic.Pointer[useroauth.Service]
	desc    *prometheus.Desc
}

// NewVaultSize returns the vault's size collector; register it once per process and point it
// at each configuration's service with Set.
func NewVaultSize() *VaultSize {
	return &VaultSize{desc: prometheus.NewDesc(NameUserOAuthVaultRecords, "Callers holding per-user OAuth tokens for each backend.",
		[]string{"upstream"}, nil)}
}

// Set makes the collector read s (nil: nothing).
func (v *VaultSize) Set(s *useroauth.Service) { v.current.Store(s) }

// Describe implements prometheus.Collector.
func (v *VaultSize) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

// Collect implements prometheus.Collector.
func (v *VaultSize) Collect(ch chan<- prometheus.Metric) {
	s := v.current.Load()
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), vaultScrapeTimeout)
	defer cancel()
	for _, b := range s.Backends() {
		if n, err := s.Vault().Count(ctx, b); err == nil {
			ch <- prometheus.MustNewConstMetric(v.desc, prometheus.GaugeValue, float64(n), b)
		}
	}
}
