// Package expiresin reads the expires_in of an OAuth token answer (RFC 6749 §5.1), which the
// gateway meets from the token endpoints of backends it holds credentials for and of those its
// users connect.
package expiresin

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// maxLifetime bounds the lifetime an expires_in may give: ten years, far past any real token's,
// and far short of the 292 years a time.Duration holds.
const maxLifetime = 10 * 365 * 24 * time.Hour

// Parse is a token answer's expires_in: whole seconds, as a number or a numeric string (as some
// servers send it), from one second to ten years; ok is false for anything else (absent, null,
// zero, negative, fractional, huge, not a number), which is no reason to refuse the token the
// server issued: its lifetime is unknown, and the caller assumes one. Every token answer the
// gateway reads takes its lifetime from here, so no expires_in overflows into a lifetime that
// is negative or short.
func Parse(raw json.RawMessage) (time.Duration, bool) {
	s := strings.Trim(string(raw), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= int64(maxLifetime/time.Second) {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}
