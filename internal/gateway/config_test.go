package gateway

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDrainDelayZero: an explicit drainDelay of 0s survives the defaults (a gateway with no load
// balancer in front need not wait), an absent one gets the default, a negative one is refused.
func TestDrainDelayZero(t *testing.T) {
	tests := []struct {
		yaml    string
		want    time.Duration
		wantErr string
	}{
		{"server: { drainDelay: 0s }\n", 0, ""},
		{"server: { drainDelay: 1500ms }\n", 1500 * time.Millisecond, ""},
		{"log: { level: info }\n", defaultDrainDelay, ""},
		{"server: { drainDelay: -1s }\n", 0, "server.drainDelay: must not be negative"},
	}
	for _, tt := range tests {
		file := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadConfig("serve", []string{"--config", file, "--no-auth", "--listen", "127.0.0.1:0",
			"--upstream", "a=http://127.0.0.1:1/mcp"}, func(string) string { return "" }, io.Discard)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err = %v, want %q", tt.yaml, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.yaml, err)
		}
		if cfg.Server.DrainDelay != tt.want {
			t.Errorf("%q: drainDelay = %v, want %v", tt.yaml, cfg.Server.DrainDelay, tt.want)
		}
	}
}

// TestTokenExchangeNeedsCallers: check-config refuses a tokenExchange backend on a gateway
// without authentication, where no caller token exists to exchange.
func TestTokenExchangeNeedsCallers(t *testing.T) {
	yaml := "upstreams:\n- name: a\n  url: http://127.0.0.1:1/mcp\n  auth:\n    type: tokenExchange\n" +
		"    tokenURL: http://127.0.0.1:2/token\n    clientID: gw\n    clientSecret: {value: s}\n"
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadConfig("check-config", []string{"--config", file, "--no-auth", "--listen", "127.0.0.1:0"},
		func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "tokenExchange needs authenticated callers") {
		t.Fatalf("err = %v, want the tokenExchange/auth.disabled refusal", err)
	}
}
