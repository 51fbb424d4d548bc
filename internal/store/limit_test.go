package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestParseLimit(t *testing.T) {
	tests := []struct {
		in      string
		want    Limit
		wantErr string
	}{
		{in: "60/m", want: Limit{Rate: 60, Period: time.Minute}},
		{in: "10/s", want: Limit{Rate: 10, Period: time.Second}},
		{in: "1000/h", want: Limit{Rate: 1000, Period: time.Hour}},
		{in: "5/d", want: Limit{Rate: 5, Period: 24 * time.Hour}},
		{in: "60/minute burst 10", want: Limit{Rate: 60, Period: time.Minute, Burst: 10}},
		{in: "  100/10s   burst 5 ", want: Limit{Rate: 100, Period: 10 * time.Second, Burst: 5}},
		{in: "", wantErr: "want"},
		{in: "60", wantErr: "missing"},
		{in: "x/m", wantErr: "rate"},
		{in: "60/fortnight", wantErr: "period"},
		{in: "60/m burst", wantErr: "want"},
		{in: "60/m burst x", wantErr: "burst"},
		{in: "60/m limit 3", wantErr: "want"},
		{in: "0/m", wantErr: "rate 0"},
		{in: "-1/m", wantErr: "rate -1"},
		{in: "60/-1s", wantErr: "period"},
		{in: "60/m burst -1", wantErr: "burst -1"},
		{in: "2000000/s", wantErr: "microsecond"},
		{in: "1/8784h burst 1000000000", wantErr: "spans"},
		{in: "x/y burst z", wantErr: "rate"}, // every problem reported at once
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLimit(tt.in)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidLimit) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseLimit(%q) err = %v, want ErrInvalidLimit mentioning %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseLimit(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseLimitReportsAllProblems(t *testing.T) {
	_, err := ParseLimit("x/y burst z")
	for _, part := range []string{"rate", "period", "burst"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("err = %v, want it to mention %s", err, part)
		}
	}
}

func TestLimitStringRoundTrip(t *testing.T) {
	tests := []struct {
		limit Limit
		want  string
	}{
		{Limit{Rate: 60, Period: time.Minute}, "60/m"},
		{Limit{Rate: 10, Period: time.Second, Burst: 20}, "10/s burst 20"},
		{Limit{Rate: 3, Period: 90 * time.Second}, "3/1m30s"},
		{Limit{Rate: 7, Period: 24 * time.Hour}, "7/d"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.limit.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			back, err := ParseLimit(tt.limit.String())
			if err != nil || back != tt.limit {
				t.Fatalf("ParseLimit(String()) = %+v, %v; want %+v", back, err, tt.limit)
			}
		})
	}
}

func TestLimitYAML(t *testing.T) {
	var cfg struct {
		PerUser Limit `yaml:"perUser"`
	}
	if err := yaml.Unmarshal([]byte("perUser: 60/m burst 10\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if want := (Limit{Rate: 60, Period: time.Minute, Burst: 10}); cfg.PerUser != want {
		t.Fatalf("decoded %+v, want %+v", cfg.PerUser, want)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil || strings.TrimSpace(string(out)) != "perUser: 60/m burst 10" {
		t.Fatalf("Marshal = %q, %v", out, err)
	}
	if err := yaml.Unmarshal([]byte("perUser: 60/fortnight\n"), &cfg); !errors.Is(err, ErrInvalidLimit) {
		t.Fatalf("bad limit in YAML err = %v, want ErrInvalidLimit", err)
	}
}

func TestGCRAStep(t *testing.T) {
	g := gcra{interval: 100, burst: 3}
	tests := []struct {
		name      string
		storedTAT int64
		now       int64
		want      gcraResult
	}{
		{name: "fresh key", storedTAT: 0, now: 1000,
			want: gcraResult{allowed: true, tat: 1100, remaining: 2, resetAfter: 100}},
		{name: "stale tat counts as full", storedTAT: 500, now: 1000,
			want: gcraResult{allowed: true, tat: 1100, remaining: 2, resetAfter: 100}},
		{name: "last token", storedTAT: 1200, now: 1000,
			want: gcraResult{allowed: true, tat: 1300, remaining: 0, resetAfter: 300}},
		{name: "empty bucket", storedTAT: 1300, now: 1000,
			want: gcraResult{retryAfter: 100, resetAfter: 300}},
		{name: "exactly refilled", storedTAT: 1300, now: 1100,
			want: gcraResult{allowed: true, tat: 1400, remaining: 0, resetAfter: 300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.step(tt.storedTAT, tt.now); got != tt.want {
				t.Fatalf("step(%d, %d) = %+v, want %+v", tt.storedTAT, tt.now, got, tt.want)
			}
		})
	}
}

func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"60/m", "10/s burst 5", "1/1h30m", "x/y burst z", "1/8784h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLimit(s)
		if err != nil {
			return
		}
		if _, err := newGCRA(l); err != nil {
			t.Fatalf("ParseLimit(%q) accepted %+v that newGCRA rejects: %v", s, l, err)
		}
		back, err := ParseLimit(l.String())
		if err != nil || back != l {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, l, l.String(), back, err)
		}
	})
}
