package wire

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRateLimited: the wait of a backend's 429 comes from its JSON-RPC error's retryAfterMs
// first, else its Retry-After (delta-seconds or HTTP-date), else 1 s, clamped to [1 s, 10 min];
// a body past the bound is not read for it.
func TestRateLimited(t *testing.T) {
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	rpc := func(data string) string {
		return `{"jsonrpc":"2.0","id":1,"error":{"code":-32023,"message":"slow down","data":` + data + `}}`
	}
	for _, c := range []struct {
		name, header, body string
		want               time.Duration
	}{
		{"nothing", "", "", time.Second},
		{"text body", "", "slow down", time.Second},
		{"seconds", "7", "", 7 * time.Second},
		{"seconds, spaced", " 7 ", "", 7 * time.Second},
		{"zero", "0", "", time.Second},
		{"a day", "86400", "", MaxRetryAfter},
		{"huge", "999999999999999999999", "", MaxRetryAfter}, // more digits than uint64 holds: a long wait, cut (as RFC 9111 §1.2.2 reads delta-seconds)
		{"negative", "-5", "", time.Second},
		{"fraction", "1.5", "", time.Second},
		{"garbage", "soon", "", time.Second},
		{"date", now.Add(90 * time.Second).Format(http.TimeFormat), "", 90 * time.Second},
		{"past date", now.Add(-time.Hour).Format(http.TimeFormat), "", time.Second},
		{"far date", now.Add(48 * time.Hour).Format(http.TimeFormat), "", MaxRetryAfter},
		{"body first", "60", rpc(`{"retryAfterMs":2500}`), 2500 * time.Millisecond},
		{"body fraction", "", rpc(`{"retryAfterMs":1500.2}`), 1501 * time.Millisecond},
		{"body tiny", "60", rpc(`{"retryAfterMs":3}`), time.Second},
		{"body huge", "", rpc(`{"retryAfterMs":1e300}`), MaxRetryAfter},
		{"body negative", "9", rpc(`{"retryAfterMs":-1}`), 9 * time.Second},
		{"body not a number", "9", rpc(`{"retryAfterMs":"2500"}`), 9 * time.Second},
		{"body without it", "9", rpc(`{"limit":5}`), 9 * time.Second},
		{"body a result", "9", `{"jsonrpc":"2.0","id":1,"result":{"retryAfterMs":2500}}`, 9 * time.Second},
		{"body over the bound", "9", rpc(`{"retryAfterMs":2500,"pad":"` + strings.Repeat("x", maxRateLimitBody) + `"}`), 9 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{},
				Body: io.NopCloser(strings.NewReader(c.body))}
			if c.header != "" {
				resp.Header.Set("Retry-After", c.header)
			}
			err := RateLimited("alpha", resp, now)
			var rl *RateLimitError
			if !errors.Is(err, ErrRateLimited) || !errors.As(err, &rl) || errors.Is(err, ErrBadResponse) || errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want only ErrRateLimited", err)
			}
			if rl.Backend != "alpha" || rl.RetryAfter != c.want {
				t.Errorf("got %s %v, want alpha %v", rl.Backend, rl.RetryAfter, c.want)
			}
			if strings.Contains(err.Error(), "slow down") {
				t.Errorf("the error quotes the backend's body: %v", err)
			}
		})
	}
}
