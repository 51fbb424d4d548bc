// Package retryafter reads an HTTP Retry-After header, which the gateway meets from backends and
// from embeddings endpoints: delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
package retryafter

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse reads the Retry-After value v at now: how long it asks to wait, at least 0 (a date in
// the past asks for nothing) and at most limit (more seconds, however many digits, or a later
// date is cut to it), and whether v was readable at all (empty, negative or any other text is
// not).
func Parse(v string, now time.Time, limit time.Duration) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	s, err := strconv.ParseUint(v, 10, 64)
	if ne := (*strconv.NumError)(nil); errors.As(err, &ne) && ne.Err == strconv.ErrRange {
		return limit, true // digits past uint64
	}
	if err == nil {
		if s >= uint64(limit/time.Second)+1 {
			return limit, true
		}
		return min(time.Duration(s)*time.Second, limit), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), limit), true
}
