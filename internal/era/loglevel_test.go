package era

import (
	"encoding/json"
	"testing"
)

// TestLogAtLeast: a message is the request's when it is at the request's level or more severe;
// what cannot be read is let through, since the level only filters.
func TestLogAtLeast(t *testing.T) {
	for _, c := range []struct {
		params, min string
		want        bool
	}{
		{`{"level":"debug"}`, "info", false},
		{`{"level":"info"}`, "info", true},
		{`{"level":"error"}`, "warning", true},
		{`{"level":"notice"}`, "error", false},
		{`{"level":"emergency"}`, "debug", true},
		{`{"level":"debug"}`, "", true},
		{`{"level":"verbose"}`, "info", true},
		{`not json`, "info", true},
	} {
		if got := LogAtLeast(json.RawMessage(c.params), c.min); got != c.want {
			t.Errorf("%s at least %q: %v, want %v", c.params, c.min, got, c.want)
		}
	}
	r, err := ToLegacyRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/logLevel":"warning"}}}`))
	if err != nil || !r.Logs || r.LogLevel != "warning" {
		t.Fatalf("ToLegacyRequest: %+v %v", r, err)
	}
}

// TestLegacyVersions: the pre-2026 revisions are the three the edge translates, newest first,
// each recognised by IsLegacyVersion and nothing else is; a caller that changes its copy of the
// list changes no one else's.
func TestLegacyVersions(t *testing.T) {
	want := [3]string{"2025-11-25", "2025-06-18", "2025-03-26"}
	vs := LegacyVersions()
	if vs != want {
		t.Fatalf("LegacyVersions() = %v, want %v", vs, want)
	}
	for _, v := range vs {
		if !IsLegacyVersion(v) {
			t.Errorf("IsLegacyVersion(%q) = false", v)
		}
	}
	for _, v := range []string{V20260728, "2024-11-05", "", "2025-11-25 "} {
		if IsLegacyVersion(v) {
			t.Errorf("IsLegacyVersion(%q) = true", v)
		}
	}
	vs[0] = "2024-11-05"
	if LegacyVersions() != want || IsLegacyVersion("2024-11-05") || !IsLegacyVersion(V20251125) {
		t.Error("changing a caller's copy of LegacyVersions changed the list")
	}
}
