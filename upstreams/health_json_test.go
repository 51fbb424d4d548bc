package upstreams

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// TestStatusJSONKeys: a backend's status in /readyz has the lower-case keys of every other JSON
// the gateway emits and, deprecated, the capitalised keys it had first, each pair with the same
// value, so that neither a new reader nor an old one is broken; pins is omitted when unpinned,
// under both spellings.
func TestStatusJSONKeys(t *testing.T) {
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	for _, st := range []Status{
		{Name: "a", URL: "https://a.example/mcp", Up: false, LastError: "refused", CheckedAt: at,
			Pins: &pins.BackendState{Mode: pins.ModeLockfile, Drifted: 1}},
		{Name: "b", URL: "http://127.0.0.1:1/mcp", Up: true},
	} {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		pairs := map[string]string{"name": "Name", "url": "URL", "up": "Up", "lastError": "LastError", "checkedAt": "CheckedAt"}
		if st.Pins != nil {
			pairs["pins"] = "Pins"
		}
		want := slices.Sorted(maps.Keys(pairs))
		for _, v := range pairs {
			want = append(want, v)
		}
		slices.Sort(want)
		if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, want) {
			t.Errorf("%s: keys %v, want %v", b, keys, want)
		}
		for lower, old := range pairs {
			if string(got[lower]) != string(got[old]) {
				t.Errorf("%s: %s = %s but %s = %s", b, lower, got[lower], old, got[old])
			}
		}
		var back struct {
			Name      string    `json:"name"`
			URL       string    `json:"url"`
			Up        bool      `json:"up"`
			LastError string    `json:"lastError"`
			CheckedAt time.Time `json:"checkedAt"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Name != st.Name || back.URL != st.URL || back.Up != st.Up || back.LastError != st.LastError || !back.CheckedAt.Equal(st.CheckedAt) {
			t.Errorf("%s decodes as %+v", b, back)
		}
	}
}
