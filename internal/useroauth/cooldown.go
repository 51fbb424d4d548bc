package useroauth

import (
	"errors"
	"fmt"
	"time"
)

// Registration cooldown: how long a replica leaves an authorization server alone after a
// dynamic registration failed. The first failure waits registrationCooldown, each further one
// in a row twice as long, up to maxRegistrationCooldown; a success ends it.
const (
	registrationCooldown    = 5 * time.Second
	maxRegistrationCooldown = 5 * time.Minute
)

// RetryError is a failure the gateway will not try again before After has passed (an
// authorization server that refused or did not answer a registration is left alone for a
// while). It wraps the failure.
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

// coolingDown returns a RetryError while the last registration under key failed less than its
// cooldown ago, nil otherwise.
func (st *backendState) coolingDown(key string, now time.Time) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.regFailKey != key || !now.Before(st.regRetryAt) {
		return nil
	}
	return &RetryError{After: st.regRetryAt.Sub(now), err: fmt.Errorf("%w (not asked again before %s)",
		st.regErr, st.regRetryAt.UTC().Format(time.RFC3339))}
}

// registrationFailed records a failed registration under key and returns err with the cooldown
// that now begins.
func (st *backendState) registrationFailed(key string, now time.Time, err error) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.regFailKey != key {
		st.regFailKey, st.regFailures = key, 0
	}
	wait := registrationCooldown << min(st.regFailures, 16)
	wait = min(wait, maxRegistrationCooldown)
	st.regFailures++
	st.regRetryAt, st.regErr = now.Add(wait), err
	return &RetryError{After: wait, err: err}
}
