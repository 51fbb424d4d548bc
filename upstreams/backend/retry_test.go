package backend

import (
	"testing"
	"time"
)

func TestRetryWait(t *testing.T) {
	p := newRetryPolicy(RetryConfig{Backoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond})
	tests := []struct {
		n        int
		min, max time.Duration
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 150 * time.Millisecond, 300 * time.Millisecond},
		{60, 150 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		for range 200 {
			if w := p.wait(tt.n); w < tt.min || w > tt.max {
				t.Fatalf("wait(%d) = %v, want within [%v, %v]", tt.n, w, tt.min, tt.max)
			}
		}
	}
	if p.attempts != DefaultRetryAttempts {
		t.Fatalf("attempts = %d, want the default %d", p.attempts, DefaultRetryAttempts)
	}
}
