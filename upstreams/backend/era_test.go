package backend

import (
	"testing"

	"github.com/mcp-gateway/gateway/internal/era"
)

func TestProtocolConfig(t *testing.T) {
	for _, p := range []string{"", "auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "latest"} {
		cfg := Config{Name: "a", URL: "http://127.0.0.1:1/mcp", Protocol: p}
		errs := cfg.Problems()
		valid := p != "2024-11-05" && p != "latest"
		if (len(errs) == 0) != valid {
			t.Errorf("protocol %q: Problems = %v, want valid=%v", p, errs, valid)
		}
	}
	if s := newLegacyState("2025-06-18", "gw/1"); s.known() != era.Legacy || s.offer != "2025-06-18" {
		t.Errorf("pinned legacy: era %v offer %s", s.known(), s.offer)
	}
	if s := newLegacyState("2026-07-28", "gw/1"); s.known() != era.Modern {
		t.Error("pinned modern is not modern")
	}
}
