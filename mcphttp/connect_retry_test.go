package mcphttp

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/useroauth"
)

// TestUserTokenUnavailableRetryAfter: a call refused because the caller's token cannot be had
// says when to come back: the time left of the cooldown its cause carries (a registration at
// the authorization server that failed moments ago), rounded up to whole seconds, else 5 s.
func TestUserTokenUnavailableRetryAfter(t *testing.T) {
	for i, tt := range []struct {
		cause error
		want  string
	}{
		{errors.New("the store is down"), "5"},
		{fmt.Errorf("refresh: %w", &useroauth.RetryError{After: 41500 * time.Millisecond}), "42"},
		{&useroauth.RetryError{After: 200 * time.Millisecond}, "1"},
		{&useroauth.RetryError{}, "5"},
	} {
		var e *Error
		if !errors.As(userTokenUnavailable(tt.cause), &e) {
			t.Fatalf("case %d: not an *Error", i)
		}
		if got := e.Header.Get("Retry-After"); got != tt.want {
			t.Errorf("case %d (%T): Retry-After %q, want %q", i, tt.cause, got, tt.want)
		}
	}
}
