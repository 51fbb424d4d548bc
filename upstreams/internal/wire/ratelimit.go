package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/retryafter"
)

// ErrRateLimited: the backend answered HTTP 429, whatever its body. It is not a failure of the
// backend (it is up and answering); its errors are *RateLimitError, which say how long to wait.
var ErrRateLimited = errors.New("upstreams: backend rate limiting")

// Bounds of the wait a backend's 429 asks for. A backend must not make the gateway's clients
// wait an hour (or forever): a longer wait is cut to MaxRetryAfter, a shorter one raised to
// MinRetryAfter, which is also the wait when the backend names none it can be read from.
const (
	MinRetryAfter = time.Second
	MaxRetryAfter = 10 * time.Minute
)

// maxRateLimitBody bounds what is read of a 429's body: only its JSON-RPC error's
// data.retryAfterMs is looked for, which a short body holds.
const maxRateLimitBody = 16 << 10

// RateLimitError is ErrRateLimited for one backend's 429.
type RateLimitError struct {
	// Backend is the backend's configured name.
	Backend string
	// RetryAfter is how long the backend asked to wait, within [MinRetryAfter, MaxRetryAfter].
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("%v: %s: HTTP 429, retry after %v", ErrRateLimited, e.Backend, e.RetryAfter)
}

func (e *RateLimitError) Unwrap() error { return ErrRateLimited }

// RateLimited returns the *RateLimitError of resp, backend name's 429 received at now, and
// closes its body. The wait is, by preference (SEP-3304: a JSON-RPC error's retryAfterMs is the
// more precise), the body's error.data.retryAfterMs, else the Retry-After header (delta-seconds
// or an HTTP-date), else MinRetryAfter; then clamped to [MinRetryAfter, MaxRetryAfter]. Nothing
// of the body reaches the caller.
func RateLimited(name string, resp *http.Response, now time.Time) error {
	defer resp.Body.Close()
	wait, ok := retryAfterMs(resp.Body)
	if !ok {
		wait, ok = retryafter.Parse(resp.Header.Get("Retry-After"), now, MaxRetryAfter)
	}
	if !ok {
		wait = MinRetryAfter
	}
	return &RateLimitError{Backend: name, RetryAfter: min(max(wait, MinRetryAfter), MaxRetryAfter)}
}

// retryAfterMs reads error.data.retryAfterMs from a JSON-RPC error in at most maxRateLimitBody
// bytes of body.
func retryAfterMs(body io.Reader) (time.Duration, bool) {
	b, err := io.ReadAll(io.LimitReader(body, maxRateLimitBody+1))
	if err != nil || len(b) > maxRateLimitBody {
		return 0, false
	}
	m, err := jsonrpc.DecodeMessage(b, jsonrpc.Limits{})
	if err != nil || m.Error == nil || len(m.Error.Data) == 0 {
		return 0, false
	}
	var data struct {
		RetryAfterMs *float64 `json:"retryAfterMs"`
	}
	if json.Unmarshal(m.Error.Data, &data) != nil || data.RetryAfterMs == nil {
		return 0, false
	}
	ms := *data.RetryAfterMs
	if math.IsNaN(ms) || ms < 0 {
		return 0, false
	}
	if ms > float64(MaxRetryAfter/time.Millisecond) {
		return MaxRetryAfter, true
	}
	return time.Duration(math.Ceil(ms)) * time.Millisecond, true
}
