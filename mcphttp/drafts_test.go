package mcphttp

import (
	"strings"
	"testing"
	"time"
)

// TestDraftErrorsValidation: check-config names every wrong value of server.draftErrors at once,
// and accepts the draft names.
func TestDraftErrorsValidation(t *testing.T) {
	err := Config{DraftErrors: []string{"denials", "Denials", "rateLimited", "denials"}}.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{`server.draftErrors[1]: "Denials": want one of denials, rateLimited`, `server.draftErrors[3]: "denials" is listed twice`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant %s", err, want)
		}
	}
	if err := (Config{DraftErrors: DraftErrorNames()}).Validate(); err != nil {
		t.Errorf("the draft names: %v", err)
	}
}

// TestLimitedRetryAfter: the retry time is told in whole seconds rounded up (at least 1) in
// Retry-After, and in milliseconds rounded up in SEP-3304's retryAfterMs, so a client reading
// either never retries early.
func TestLimitedRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		after      time.Duration
		header, ms string
	}{
		{0, "1", `{"retryAfterMs":0}`},
		{time.Microsecond, "1", `{"retryAfterMs":1}`},
		{1500 * time.Millisecond, "2", `{"retryAfterMs":1500}`},
		{time.Hour, "3600", `{"retryAfterMs":3600000}`},
	} {
		on := (&drafts{rateLimited: true}).limited(tt.after, "m")
		off := (&drafts{}).limited(tt.after, "m")
		if on.Status != 429 || on.RPC.Code != -32023 || string(on.RPC.Data) != tt.ms || on.Header.Get("Retry-After") != tt.header {
			t.Errorf("%v on: %d %d %s %v", tt.after, on.Status, on.RPC.Code, on.RPC.Data, on.Header)
		}
		if off.Status != 429 || off.RPC.Code != -32012 || off.RPC.Data != nil || off.Header.Get("Retry-After") != tt.header {
			t.Errorf("%v off: %d %d %s %v", tt.after, off.Status, off.RPC.Code, off.RPC.Data, off.Header)
		}
	}
}
