package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/store"
)

type failingLimiter struct{ err error }

func (f failingLimiter) Allow(context.Context, string, store.Limit) (store.RateDecision, error) {
	return store.RateDecision{}, f.err
}

// TestRateLimitStoreErrorsLogged: a store that fails is logged on each call, but not while its
// circuit breaker skips Redis (the breaker logs its state changes; a line per call would flood
// the log at full request rate). Either way the call follows FailOpen.
func TestRateLimitStoreErrorsLogged(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		logged bool
	}{
		{"redis timed out", errors.New("i/o timeout"), true},
		{"breaker open", store.ErrSkipped, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			x := &request{shared: shared{ctx: context.Background(), s: &Server{
				log:  slog.New(slog.NewTextHandler(&buf, nil)),
				rate: RateLimits{Store: failingLimiter{tt.err}, FailOpen: true},
			}}}
			if err := x.takeToken("c|someone", store.Limit{}); err != nil {
				t.Fatalf("fail-open limit refused: %v", err)
			}
			if got := strings.Contains(buf.String(), "rate limit store unavailable"); got != tt.logged {
				t.Errorf("logged %v, want %v: %q", got, tt.logged, buf.String())
			}
		})
	}
}

// TestRuleBucketFamily: every (caller, rule, upstream, item) has its own bucket, whatever the
// parts hold: "|" (the separator), "#" (the caller key's), ":" and digits (the length-prefixed
// form's), NUL, empty parts, very long ones, one subject at two issuers, and a client address
// key without authentication. The buckets of parts without "|" keep the spelling of the previous
// release, which a shared store's buckets are named by during a rolling update.
func TestRuleBucketFamily(t *testing.T) {
	long := strings.Repeat("x", 4<<10)
	tuples := [][4]string{
		{"https://i#a", "r", "up", "tool"},
		{"https://j#a", "r", "up", "tool"},
		{"https://i#a|r", "up", "tool", ""},
		{"https://i#a|r|up", "tool", "", ""},
		{"https://i#a", "r|up", "tool", ""},
		{"https://i#a", "r", "up|tool", ""},
		{"https://i#a", "r", "up", "tool|"},
		{"https://i#a", "r", "up", "|tool"},
		{"https://i#a|", "r", "up", "tool"},
		{"https://i#a", "r", "up", "mem://x|y"},
		{"https://i#a|r|up|mem://x", "y", "", ""},
		{"https://i#3:a", "r", "up", "tool"},
		{"https://i#a", "1:r", "up", "tool"},
		{"https://i#a\x00", "r", "up", "tool"},
		{"https://i#a", "\x00r", "up", "tool"},
		{"https://i##", "r", "up", "tool"},
		{"https://i#" + long, "r", "up", "tool"},
		{"https://i#" + long + "|", "r", "up", "tool"},
		{"client 192.0.2.1/32", "r", "up", "tool"},
		{"client 192.0.2.1/32|r", "up", "tool", ""},
		{"", "", "", ""},
		{"|", "", "", ""},
		{"", "|", "", ""},
	}
	seen := map[string][4]string{}
	for _, tt := range tuples {
		k := ruleBucket(tt[0], tt[1], tt[2], tt[3])
		if other, dup := seen[k]; dup {
			t.Errorf("%q and %q share the bucket %q", tt, other, k)
		}
		seen[k] = tt
	}
	if got, want := ruleBucket("https://i#alice", "reads", "github", "get_*"), "t|https://i#alice|reads|github|get_*"; got != want {
		t.Errorf("ruleBucket = %q, want %q: buckets of the previous release would be counted afresh", got, want)
	}
}
