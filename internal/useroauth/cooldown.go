package useroauth

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/vault"
)

// Cooldowns: how long a replica leaves a backend's authorization server alone after it failed
// (the refresh cooldown's first step is Config.RefreshCooldown).
// The first failure waits the cooldown's first step, each further one in a row twice as long,
// up to its cap; a success ends it.
//
//   - registration: after a dynamic registration failed (under one registration key);
//   - refresh: after a refresh grant failed at the server itself (unreachable, no answer in
//     time, an answer that does not read, HTTP 5xx or 429). Meanwhile a caller whose access
//     token still works goes on using it, and one whose token expired is refused at once,
//     told when to try again, instead of every call waiting on a server that is down. A
//     failure the server answered with a status (5xx, 429, temporarily_unavailable) may be
//     about one caller's grant (a server that limits each user's refreshes, one grant it
//     chokes on): it begins that caller's own cooldown, and the backend's only when refreshes
//     of two distinct callers failed in a row. A failure to get any answer (unreachable, no
//     answer in time, an unreadable one) is nobody's grant and begins the backend's at once.
const (
	registrationCooldown    = 5 * time.Second
	maxRegistrationCooldown = 5 * time.Minute
)

// RetryError is a failure the gateway will not try again before After has passed (an
// authorization server that refused or did not answer is left alone for a while). It wraps
// the failure.
type RetryError struct {
	After time.Duration
	err   error
}

func (e *RetryError) Error() string { return e.err.Error() }
func (e *RetryError) Unwrap() error { return e.err }

// RetryAfter returns how long a caller should wait before trying again after err: the time
// left of a cooldown when err carries one (RetryError), else fallback.
func RetryAfter(err error, fallback time.Duration) time.Duration {
	var re *RetryError
	if errors.As(err, &re) && re.After > 0 {
		return re.After
	}
	return fallback
}

// cooldown is one run of failures in a row and the wait it began. The zero value is no
// cooldown. Its owner's mutex guards it.
type cooldown struct {
	failures int
	failedAt time.Time
	retryAt  time.Time
	err      error
}

// active returns a RetryError while the last failure is less than its wait ago, nil otherwise.
func (c *cooldown) active(now time.Time) error {
	if c.failures == 0 || !now.Before(c.retryAt) {
		return nil
	}
	return &RetryError{After: c.retryAt.Sub(now), err: fmt.Errorf("%w (not asked again before %s)",
		c.err, c.retryAt.UTC().Format(time.RFC3339))}
}

// failed records a failure and returns err with the wait that now begins: first, doubled per
// failure in a row, at most most.
func (c *cooldown) failed(now time.Time, err error, first, most time.Duration) error {
	wait := min(first<<min(c.failures, 16), most)
	c.failures++
	c.failedAt, c.retryAt, c.err = now, now.Add(wait), err
	return &RetryError{After: wait, err: err}
}

// coolingDown returns a RetryError while the last registration under key failed less than its
// cooldown ago, nil otherwise.
func (st *backendState) coolingDown(key string, now time.Time) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.regFailKey != key {
		return nil
	}
	return st.regCool.active(now)
}

// registrationFailed records a failed registration under key and returns err with the cooldown
// that now begins.
func (st *backendState) registrationFailed(key string, now time.Time, err error) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.regFailKey != key {
		st.regFailKey, st.regCool = key, cooldown{}
	}
	return st.regCool.failed(now, err, registrationCooldown, maxRegistrationCooldown)
}

// maxCallerCooldowns bounds the callers whose own refresh cooldown a replica keeps per backend;
// past it the one whose wait ends first is forgotten.
const maxCallerCooldowns = 1024

// refreshCoolingDown returns a RetryError while the backend's last refresh grant, or who's own,
// failed at the server less than its cooldown ago, nil otherwise.
func (st *backendState) refreshCoolingDown(now time.Time, who vault.Caller) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.refreshCool.active(now); err != nil {
		return err
	}
	if c, ok := st.callerCool[who]; ok {
		return c.active(now)
	}
	return nil
}

// refreshAnswered records how who's refresh grant went: a failure of the server itself
// (serverFailure) begins or lengthens a cooldown and comes back with it (the backend's when no
// answer came or two callers' refreshes failed in a row, else who's own); any answer of the
// server's own (tokens, or a refusal such as invalid_grant) ends the backend's and who's. A
// cooldown's first step is first (Config.RefreshCooldown).
func (st *backendState) refreshAnswered(now time.Time, who vault.Caller, err error, first time.Duration) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !serverFailure(err) {
		st.refreshCool, st.lastFailed = cooldown{}, vault.Caller{}
		delete(st.callerCool, who)
		return err
	}
	var oe *oauthError
	if !errors.As(err, &oe) {
		// The run in a row goes on from who's own failures, so the wait keeps doubling for it.
		if own, ok := st.callerCool[who]; ok {
			st.refreshCool.failures = max(st.refreshCool.failures, own.failures)
		}
		return st.refreshCool.failed(now, err, first, MaxRefreshCooldown)
	}
	own := st.callerCooldown(who)
	out := own.failed(now, err, first, MaxRefreshCooldown)
	if st.lastFailed != (vault.Caller{}) && st.lastFailed != who {
		out = st.refreshCool.failed(now, err, first, MaxRefreshCooldown)
	}
	st.lastFailed = who
	return out
}

// oversizeAnswered classifies a token answer for who (a refresh or a code exchange) by whether
// it was too large to read (unusableError.oversize), and returns err as it counts. One such
// answer is who's: what makes it big may be who's own (an id_token with a user's huge claims),
// so it is an unusableError, which begins no cooldown and ends who's grant. Answers of two
// distinct callers too large in a row are the server's (it answers everyone so), an error
// wrapping ErrAuthServer, which begins the backend's refresh cooldown and keeps who's grant.
// Any other answer from the server ends the run.
func (st *backendState) oversizeAnswered(who vault.Caller, err error) error {
	var u *unusableError
	oversize := errors.As(err, &u) && u.oversize
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case !oversize:
		if !serverFailure(err) || errors.As(err, new(*oauthError)) {
			st.lastOversize = vault.Caller{} // answered otherwise
		}
		return err
	case st.lastOversize != (vault.Caller{}) && st.lastOversize != who:
		return fmt.Errorf("%w: token answers over %d bytes to two callers in a row", ErrAuthServer, maxTokenResponseBytes)
	}
	st.lastOversize = who
	return err
}

// callerCooldown returns who's own refresh cooldown, made room for within maxCallerCooldowns.
// The caller holds st.mu.
func (st *backendState) callerCooldown(who vault.Caller) *cooldown {
	if c, ok := st.callerCool[who]; ok {
		return c
	}
	if st.callerCool == nil {
		st.callerCool = map[vault.Caller]*cooldown{}
	}
	if len(st.callerCool) >= maxCallerCooldowns {
		var first vault.Caller
		var at time.Time
		for k, c := range st.callerCool {
			if at.IsZero() || c.retryAt.Before(at) {
				first, at = k, c.retryAt
			}
		}
		delete(st.callerCool, first)
	}
	c := &cooldown{}
	st.callerCool[who] = c
	return c
}

// refreshSeen ends the refresh cooldown when a record shows the server answered a refresh after
// this replica's last failure there (another replica's refresh, stored in the shared vault):
// the next failure is then the first of a new run. The record is who's, so it ends who's own
// cooldown too.
func (st *backendState) refreshSeen(who vault.Caller, refreshed time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.refreshCool.failures > 0 && refreshed.After(st.refreshCool.failedAt) {
		st.refreshCool = cooldown{}
	}
	if c, ok := st.callerCool[who]; ok && refreshed.After(c.failedAt) {
		delete(st.callerCool, who)
	}
}

// serverFailure reports whether err is the authorization server failing rather than answering:
// unreachable, no answer in time, an answer that does not read (ErrAuthServer), HTTP 5xx or
// 429 (RFC 6585) whatever the body, or a refusal saying the server itself failed
// (temporarily_unavailable, server_error: RFC 6749 §4.1.2.1 codes some servers send from their
// token endpoint too, with HTTP 400).
func serverFailure(err error) bool {
	var oe *oauthError
	if errors.As(err, &oe) {
		return oe.Status >= 500 || oe.Status == http.StatusTooManyRequests ||
			oe.Code == "temporarily_unavailable" || oe.Code == "server_error"
	}
	return errors.Is(err, ErrAuthServer)
}
