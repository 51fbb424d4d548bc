package backend

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// TestReportsQuoteURLsRedacted: what a backend reports of its URL (the URL /readyz shows, the
// last error /readyz shows, Reach's refusal of a URL) quotes it as configerr.URL does: the
// host and the words of the path stay; the user information, the query's values and a
// webhook's or capability URL's token in the path do not.
func TestReportsQuoteURLsRedacted(t *testing.T) {
	const canary = "CANARYq8Zt3Lm9Rw2Px7"
	raw := "http://u:" + canary + "@127.0.0.1:1/s/" + canary + "/mcp?key=" + canary
	env := &Env{Log: slog.New(slog.DiscardHandler), Now: time.Now, Names: names.New("__", false, []string{"s"}),
		Results: bodyread.NewBudget(1 << 20)}
	b, err := New(Config{Name: "s", URL: raw, Breaker: BreakerConfig{Disabled: true}}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, want := b.SafeURL(), "http://REDACTED@127.0.0.1:1/s/REDACTED/mcp?key=REDACTED"; got != want {
		t.Errorf("SafeURL = %q, want %q", got, want)
	}
	b.health.down(time.Now(), errors.New(`Post "`+raw+`": dial tcp 127.0.0.1:1: connect: connection refused`))
	if _, lastErr, _ := b.Health(); strings.Contains(lastErr, canary) || !strings.Contains(lastErr, "127.0.0.1:1/s/REDACTED/mcp") {
		t.Errorf("Health's last error = %q", lastErr)
	}
	_, err = Reach(context.Background(), "ftp"+strings.TrimPrefix(raw, "http"), TLSConfig{}, time.Second)
	if err == nil || strings.Contains(err.Error(), canary) {
		t.Errorf("Reach = %v", err)
	}
}
