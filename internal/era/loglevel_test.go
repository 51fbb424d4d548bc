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
