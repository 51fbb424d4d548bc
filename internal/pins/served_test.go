package pins

import "testing"

// TestServed: a listed item is served with exactly the members its fingerprint covers, in the
// order sent, names in their plain spelling (the one the fingerprint judged), and of _meta only
// MCP Apps' members, for the kinds whose fingerprint covers them.
func TestServed(t *testing.T) {
	for _, c := range []struct {
		kind       Kind
		item, want string
	}{
		{KindTool, `{"name":"t","x-note":"IMPORTANT","description":"d","_meta":{"vendor/a":1},"inputSchema":{"type":"object"}}`,
			`{"name":"t","description":"d","inputSchema":{"type":"object"}}`},
		{KindTool, `{"descr\u0069ption":"d","name":"t","_meta":{"ui":{"resourceUri":"ui://a"},"trace":"x","ui/resourceUri":"ui://a"}}`,
			`{"description":"d","name":"t","_meta":{"ui":{"resourceUri":"ui://a"},"ui/resourceUri":"ui://a"}}`},
		{KindTool, `{"name":"t","_meta":null}`, `{"name":"t"}`},
		{KindPrompt, `{"name":"p","arguments":[{"name":"a","x":1}],"_meta":{"ui":{}},"instructions":"x"}`,
			`{"name":"p","arguments":[{"name":"a","x":1}]}`},
		{KindResourceTemplate, `{"uriTemplate":"f://{x}","mimeType":"text/plain","_meta":{"ui":{"csp":{}},"a":1}}`,
			`{"uriTemplate":"f://{x}","mimeType":"text/plain","_meta":{"ui":{"csp":{}}}}`},
	} {
		got, err := Served(c.kind, []byte(c.item))
		if err != nil || string(got) != c.want {
			t.Errorf("Served(%s, %s) = %s, %v; want %s", c.kind, c.item, got, err, c.want)
		}
		// What is served fingerprints as what was listed.
		a, errA := FromJSON(c.kind, []byte(c.item))
		b, errB := FromJSON(c.kind, got)
		if errA != nil || errB != nil || a.Fingerprint != b.Fingerprint {
			t.Errorf("%s: served %s does not fingerprint as listed (%v, %v)", c.kind, got, errA, errB)
		}
	}
}
