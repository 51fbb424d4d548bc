package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/store"
)

// defaultDocs are the documents whose prose states defaults and limits as "`setting` (value)",
// "`setting` (default value)", "`setting`, default value" or "`setting` defaults to value".
var defaultDocs = []string{
	"README.md", "SECURITY.md", "docs/architecture.md", "docs/deploy.md", "docs/observability.md",
	"docs/pinning.md", "docs/protocol.md", "docs/scaling.md", "docs/approval.md", "docs/limits.md",
	"docs/client-bounds.md",
}

// proseDefault finds a setting in backticks followed closely by a parenthesis or "default" and a
// value that begins with a digit: "`server.writeTimeout` (10 s)", "`mrtr.ttl`, default 10
// minutes", "`pins.maxPerBackend` items (2,048)", "`legacySessionIdle` unused (default 5m)".
var proseDefault = regexp.MustCompile("`([a-zA-Z]+(?:\\.[a-zA-Z]+)*)`([^`.;]{0,16}?(?:\\(default |\\(|defaults? to |default ))" +
	"([0-9][0-9,.]*)[ \u00a0]?(KiB/s|MiB|KiB|GiB|ms|minutes|min|m|s|h|days)?\\b")

// docSettingAlias names the configuration path of a setting a document writes without its
// section ("`dialTimeout` (default 2s)" in the Redis section of docs/scaling.md), as
// "<document> <name>". A name without a dot that is not here is not taken for a setting (the
// documents write outcomes and fields in backticks too: "`unavailable` (503)").
var docSettingAlias = map[string]string{
	"README.md maxLegacySessions":        "upstreams[].auth.maxLegacySessions",
	"README.md legacySessionIdle":        "upstreams[].auth.legacySessionIdle",
	"SECURITY.md auth.maxLegacySessions": "upstreams[].auth.maxLegacySessions",
	"SECURITY.md maxConcurrent":          "interceptors[].maxConcurrent",
	"SECURITY.md timeout":                "interceptors[].timeout",
	"SECURITY.md maxPayloadBytes":        "interceptors[].maxPayloadBytes",
	"SECURITY.md maxResponseBytes":       "interceptors[].maxResponseBytes",
	"docs/scaling.md dialTimeout":        "redis.dialTimeout",
	// The breakers' keys, written as both sections have them.
	"docs/limits.md breaker.failures":       "upstreams[].breaker.failures",
	"docs/limits.md breaker.cooldown":       "upstreams[].breaker.cooldown",
	"docs/limits.md breaker.minCallers":     "upstreams[].breaker.minCallers",
	"docs/limits.md breaker.trackedCallers": "upstreams[].breaker.trackedCallers",
	"SECURITY.md breaker.minCallers":        "upstreams[].breaker.minCallers",
	"SECURITY.md breaker.trackedCallers":    "upstreams[].breaker.trackedCallers",
	"docs/scaling.md writeTimeout":          "redis.writeTimeout",
	"docs/scaling.md maxRetries":            "redis.maxRetries",
}

// helmSettings are values of the Helm chart, not of the gateway; helm/deploydoc_test.go holds
// docs/deploy.md's statements about them.
var helmSettings = regexp.MustCompile(`^(ingress|containerPorts|resources|goMemLimitPercent)\b`)

// TestDocDefaults: every default or limit the README, SECURITY.md and the operator's docs state
// in prose next to a setting's name is the default the code applies (configDefaults), so a
// default changed in the code without its documents fails here, and a setting named with a value
// the test cannot place fails too (a renamed setting leaves no stale number behind).
func TestDocDefaults(t *testing.T) {
	defaults := configDefaults()
	checked := 0
	for _, doc := range defaultDocs {
		raw, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			for _, m := range proseDefault.FindAllStringSubmatch(line, -1) {
				key, num, unit := m[1], m[3], m[4]
				path, ok := docSettingAlias[doc+" "+key]
				if !ok {
					path = key
				}
				if !strings.Contains(path, ".") || helmSettings.MatchString(key) {
					continue
				}
				d, ok := defaults[path]
				if !ok {
					t.Errorf("%s:%d: %q is stated with the value %s %s, but the configuration has no default %s",
						doc, i+1, m[0], num, unit, path)
					continue
				}
				checked++
				if err := sameDefault(d, num, unit); err != nil {
					t.Errorf("%s:%d: %s: %v", doc, i+1, m[0], err)
				}
			}
		}
	}
	t.Logf("%d stated defaults checked", checked)
	if checked < 30 {
		t.Errorf("only %d stated defaults checked: the pattern lost the documents' form", checked)
	}
}

// sameDefault reports whether the number and unit a document states equal the code's default d.
func sameDefault(d any, num, unit string) error {
	f, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if err != nil {
		return err
	}
	var want float64
	switch v := d.(type) {
	case time.Duration:
		scale := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "min": time.Minute,
			"minutes": time.Minute, "m": time.Minute, "h": time.Hour, "days": 24 * time.Hour}[unit]
		if scale == 0 {
			return fmt.Errorf("a duration stated without a unit; the code's default is %v", v)
		}
		if time.Duration(f*float64(scale)) != v {
			return fmt.Errorf("stated as %s %s; the code's default is %v", num, unit, v)
		}
		return nil
	case int:
		want = float64(v)
	case int64:
		want = float64(v)
	default:
		return fmt.Errorf("the code's default %v (%T) is not a number", d, d)
	}
	scale := map[string]float64{"": 1, "KiB": 1 << 10, "KiB/s": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
	if scale == 0 || f*scale != want {
		return fmt.Errorf("stated as %s %s; the code's default is %.0f", num, unit, want)
	}
	return nil
}

// TestDocBounds: the fixed bounds of the shared and in-memory stores that SECURITY.md, the README
// and docs/scaling.md state in prose, and the lifetime of the development issuer's tokens the
// README states, are the code's (they are constants, not settings, so TestDocDefaults cannot see
// them).
func TestDocBounds(t *testing.T) {
	for _, tt := range []struct {
		doc     string
		pattern string // one group per value, in the order of want
		want    []float64
	}{
		{"SECURITY.md", `separate pools: nonces \(([0-9,]+)\), rate-limit buckets \(([0-9,]+)\), values and hold budgets \(([0-9,]+) entries and ([0-9]+) MiB`,
			[]float64{store.DefaultMaxNonces, store.DefaultMaxRateEntries, store.DefaultMaxValues, store.DefaultMaxValueBytes >> 20}},
		{"docs/scaling.md", `at most ([0-9,]+) live confirmation nonces and\s+([0-9,]+) live rate-limit buckets`,
			[]float64{store.DefaultMaxNonces, store.DefaultMaxRateEntries}},
		{"docs/scaling.md", "`L` is `min\\(rateLimit.lease, burst ÷ ([0-9]+)\\)` per limit \\(`rateLimit.lease`\\s+defaults to ([0-9]+)\\)",
			[]float64{store.LeaseBurstDivisor, store.DefaultLeaseMax}},
		{"docs/scaling.md", `A lease may be spent for ([0-9]+)\s+second only`, []float64{store.DefaultLeaseTTL.Seconds()}},
		{"docs/scaling.md", `A replica holds leases for at most ([0-9,]+)\s+buckets`, []float64{store.DefaultLeaseKeys}},
		{"README.md", `each replica leases up to min\(([0-9]+), burst ÷ ([0-9]+)\)`, []float64{store.DefaultLeaseMax, store.LeaseBurstDivisor}},
		{"README.md", `its tokens live ([0-9]+) hours \(` + "`--ttl`" + `\)`, []float64{devissuer.CommandTTL.Hours()}},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(tt.pattern).FindStringSubmatch(string(raw))
		if m == nil {
			t.Errorf("%s no longer says %q: reword this check with the document", tt.doc, tt.pattern)
			continue
		}
		for i, want := range tt.want {
			if got, err := strconv.ParseFloat(strings.ReplaceAll(m[i+1], ",", ""), 64); err != nil || got != want {
				t.Errorf("%s: %q states %s; the code's bound is %.0f", tt.doc, m[0], m[i+1], want)
			}
		}
	}
}
