package pins

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFingerprintIgnoresFormAndUncoveredMembers(t *testing.T) {
	a := `{"name":"read","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`
	b := `{ "annotations" : {"readOnlyHint":true}, "_meta":{"trace":"x"}, "inputSchema":{"properties":{"path":{"type":"string"}},"type":"object"},
	       "description":"Read a \u0066ile", "name":"read", "futureField": 1 }`
	da, err := FromJSON(KindTool, json.RawMessage(a))
	if err != nil {
		t.Fatal(err)
	}
	db, err := FromJSON(KindTool, json.RawMessage(b))
	if err != nil {
		t.Fatal(err)
	}
	if da.Fingerprint != db.Fingerprint {
		t.Errorf("fingerprints differ:\n%s\n%s", da.Canonical, db.Canonical)
	}
	if len(da.Fingerprint) != 64 || strings.ToLower(da.Fingerprint) != da.Fingerprint {
		t.Errorf("fingerprint %q is not lower-case hex SHA-256", da.Fingerprint)
	}
	if da.Key != "read" || da.Kind != KindTool {
		t.Errorf("key %q kind %q", da.Key, da.Kind)
	}
}

// TestFingerprintCoversEachField changes each covered member in turn: every one changes the
// fingerprint.
func TestFingerprintCoversEachField(t *testing.T) {
	base := map[Kind]map[string]any{
		KindTool:             {"name": "t", "title": "T", "description": "d", "inputSchema": map[string]any{"type": "object"}, "outputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"readOnlyHint": true}, "icons": []any{map[string]any{"src": "https://x/i.png"}}},
		KindPrompt:           {"name": "p", "title": "P", "description": "d", "arguments": []any{map[string]any{"name": "a"}}, "icons": []any{}},
		KindResourceTemplate: {"uriTemplate": "file:///{p}", "name": "n", "title": "T", "description": "d", "mimeType": "text/plain", "annotations": map[string]any{"priority": 1.0}, "icons": []any{}},
	}
	for kind, obj := range base {
		raw, _ := json.Marshal(obj)
		d0, err := FromJSON(kind, raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range CoveredFields(kind) {
			if f == keyField(kind) {
				continue
			}
			changed := map[string]any{}
			for k, v := range obj {
				changed[k] = v
			}
			changed[f] = "changed"
			raw, _ := json.Marshal(changed)
			d1, err := FromJSON(kind, raw)
			if err != nil {
				t.Fatal(err)
			}
			if d1.Fingerprint == d0.Fingerprint {
				t.Errorf("%s: changing %s left the fingerprint", kind, f)
			}
		}
	}
}

func TestFromJSONRefuses(t *testing.T) {
	for _, in := range []string{`[]`, `{"description":"no name"}`, `{"name":""}`, `{"name":1}`, `{"name":"a","name":"b"}`, "{\"name\":\"\xff\"}"} {
		if _, err := FromJSON(KindTool, json.RawMessage(in)); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
	if _, err := FromJSON(KindResourceTemplate, json.RawMessage(`{"name":"x"}`)); err == nil {
		t.Error("template without uriTemplate accepted")
	}
	if _, err := FromJSON(KindInstructions, json.RawMessage(`"x"`)); err == nil {
		t.Error("instructions accepted as an object kind")
	}
}

func TestFromCanonical(t *testing.T) {
	d, err := FromJSON(KindTool, json.RawMessage(`{"name":"a","description":"x","_meta":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromCanonical(KindTool, "a", d.Canonical)
	if err != nil || back.Fingerprint != d.Fingerprint {
		t.Fatalf("round trip: %v", err)
	}
	bad := map[string]string{
		"not canonical":   `{"name":"a", "description":"x"}`,
		"wrong key":       `{"description":"x","name":"b"}`,
		"uncovered field": `{"_meta":{},"name":"a"}`,
		"not an object":   `"a"`,
	}
	for name, c := range bad {
		if _, err := FromCanonical(KindTool, "a", []byte(c)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	in, err := FromInstructions("Use the tools.")
	if err != nil {
		t.Fatal(err)
	}
	if string(in.Canonical) != `"Use the tools."` {
		t.Errorf("instructions canonical %s", in.Canonical)
	}
	if _, err := FromCanonical(KindInstructions, "", []byte(`{}`)); err == nil {
		t.Error("object accepted as instructions")
	}
}
