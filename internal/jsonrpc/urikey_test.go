package jsonrpc

import "testing"

// TestMayHaveURIKey: DecodeMessage tells whether an object of the message has a member named
// "uri" once its escapes are decoded, however the backend spelled it, and only then.
func TestMayHaveURIKey(t *testing.T) {
	for _, tt := range []struct {
		result string
		want   bool
	}{
		{`{"content":[{"type":"resource_link","uri":"a:b"}]}`, true},
		{`{"content":[{"type":"resource_link","\u0075ri":"a:b"}]}`, true},
		{`{"content":[{"type":"resource_link","ur\u0069":"a:b"}]}`, true},
		{`{"content":[{"type":"resource_link","\u0075\u0072\u0069":"a:b"}]}`, true},
		{`{"content":[{"type":"resource","resource":{"\u0075ri":"a:b"}}]}`, true},
		{`{"messages":[{"content":{"x":[[{"uri":1}]]}}]}`, true},
		{`{"content":[{"type":"text","text":"uri"}]}`, false},
		{`{"content":[{"type":"text","text":"\"uri\":\"a:b\""}]}`, false},
		{`{"content":[{"type":"resource_link","URI":"a:b","\u0055ri":"c","uri ":"d","ur":"e"}]}`, false},
		{`{"content":[{"type":"resource_link","\u0075rl":"a:b"}]}`, false},
		// MCP Apps: a tool result's _meta.ui.resourceUri, and the deprecated flat key.
		{`{"content":[],"_meta":{"ui":{"resourceUri":"ui://a"}}}`, true},
		{`{"content":[],"_meta":{"ui":{"resourceUr\u0069":"ui://a"}}}`, true},
		{`{"content":[],"_meta":{"ui/resourceUri":"ui://a"}}`, true},
		// Other spellings of the Apps link need the pass too: a host decoding names
		// case-insensitively reads them as the link, which the gateway namespaces in every
		// spelling (names/ui.go). Keys as long that fold to neither still need none.
		{`{"content":[],"_meta":{"ui":{"ResourceUri":"ui://a","resourceURI":"b"}}}`, true},
		{`{"content":[],"_meta":{"UI/RESOURCE_URI":"ui://a"}}`, true},
		{`{"content":[],"_meta":{"ui":{"resourceUrl":"ui://a","resourceUrIx":"b","description":"c"}}}`, false},
	} {
		m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":`+tt.result+`}`), Limits{})
		if err != nil {
			t.Fatalf("%s: %v", tt.result, err)
		}
		if got := m.MayHaveURIKey(); got != tt.want {
			t.Errorf("%s: MayHaveURIKey() = %v, want %v", tt.result, got, tt.want)
		}
	}
	if !(&Message{Result: []byte(`{}`)}).MayHaveURIKey() {
		t.Error("a Message DecodeMessage did not read claims to name no uri")
	}
}
