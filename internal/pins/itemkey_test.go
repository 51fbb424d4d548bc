package pins

import (
	"encoding/json"
	"testing"
)

// TestItemKeyIsTheNormalForm: a resource template or UI resource is pinned under the normal
// form of its URI, the name the gateway lists and judges it by, whatever spelling its backend
// listed; its canonical text keeps that spelling. Every way a pin is read back (the lock file's
// FromCanonical, a tofu record's OpenManifest) takes it under that key, and refuses it under
// the listed spelling. Tools and prompts are keyed by their name as listed.
func TestItemKeyIsTheNormalForm(t *testing.T) {
	cases := []struct {
		kind       Kind
		item, want string
	}{
		{KindResourceTemplate, `{"uriTemplate":"MEM://Items/%7e{id}","name":"items"}`, "mem://items/~{id}"},
		{KindResourceTemplate, `{"uriTemplate":"mem://items/{id}","name":"items"}`, "mem://items/{id}"},
		{KindUIResource, `{"uri":"ui://Widget/%7eview","name":"w"}`, "ui://widget/~view"},
		{KindUIResource, `{"uri":"ui://widget/view","name":"w"}`, "ui://widget/view"},
		// No normal form: the gateway does not list it; keyed as listed.
		{KindResourceTemplate, `{"uriTemplate":"mem://x/./{id}","name":"x"}`, "mem://x/./{id}"},
		{KindTool, `{"name":"Read_File","inputSchema":{"type":"object"}}`, "Read_File"},
	}
	s := testSealer(t, "k1")
	for _, tc := range cases {
		d, err := FromJSON(tc.kind, json.RawMessage(tc.item))
		if err != nil {
			t.Fatalf("%s: %v", tc.item, err)
		}
		if d.Key != tc.want {
			t.Errorf("%s: key %q, want %q", tc.item, d.Key, tc.want)
		}
		if back, err := FromCanonical(tc.kind, d.Key, d.Canonical); err != nil || back.Fingerprint != d.Fingerprint {
			t.Errorf("%s: FromCanonical under its key: %v", tc.item, err)
		}
		var listed map[string]string
		_ = json.Unmarshal([]byte(tc.item), &listed)
		if raw := listed[keyField(tc.kind)]; raw != d.Key {
			if _, err := FromCanonical(tc.kind, raw, d.Canonical); err == nil {
				t.Errorf("%s: FromCanonical took it under the listed spelling %q", tc.item, raw)
			}
		}
		m, _ := FirstContact("be", tc.kind, []Listed{{Key: d.Key, Def: d}}, nil, 10, 1<<20)
		sealed, err := SealManifest(s, m)
		if err != nil {
			t.Fatal(err)
		}
		if opened, err := OpenManifest(s, "be", tc.kind, sealed); err != nil || opened.Pins[tc.want] == nil {
			t.Errorf("%s: the tofu record does not open under its key: %v", tc.item, err)
		}
	}
}
