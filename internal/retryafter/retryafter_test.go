package retryafter

import (
	"net/http"
	"testing"
	"time"
)

// TestParse: seconds or an HTTP date, cut to the limit; a date in the past asks for nothing;
// what is not a Retry-After value is not readable.
func TestParse(t *testing.T) {
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	limit := time.Hour
	for _, tt := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"  ", 0, false},
		{"120", 120 * time.Second, true},
		{" 120 ", 120 * time.Second, true},
		{"0", 0, true},
		{"3600", time.Hour, true},
		{"3601", time.Hour, true},
		{"7200", time.Hour, true},
		{"18446744073709551615", time.Hour, true},
		{"99999999999999999999999", time.Hour, true},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{now.Add(48 * time.Hour).Format(http.TimeFormat), time.Hour, true},
	} {
		got, ok := Parse(tt.v, now, limit)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}
