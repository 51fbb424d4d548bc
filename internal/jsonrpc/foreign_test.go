package jsonrpc

import "testing"

// TestForeignMembers: ParseParams and ParseMeta say whether params or _meta hold a member
// besides the ones the gateway reads (a _meta member besides the protocol's namespace and trace
// context), which a caller that scans what the client sends must then read itself.
func TestForeignMembers(t *testing.T) {
	for raw, want := range map[string]bool{
		`{}`: false,
		`{"_meta":{},"name":"t","arguments":{"a":1},"requestState":"s","inputResponses":{},"cursor":"c","uri":"u","ref":{}}`: false,
		`{"name":"t","x-note":"v"}`: true,
		`{"Name2":"t"}`:             true,
		`{"name":"t","_meta2":{}}`:  true,
	} {
		p, err := ParseParams([]byte(raw))
		if err != nil || p.Foreign != want {
			t.Errorf("params %s: foreign %v (%v), want %v", raw, p != nil && p.Foreign, err, want)
		}
	}
	for raw, want := range map[string]bool{
		`{}`: false,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info",` +
			`"io.modelcontextprotocol/authorization-context-id":"a",` +
			`"progressToken":"p","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=b","baggage":"k=v"}`: false,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/other":{"k":"v"}}`: true,
		`{"x.example/note":"v"}`:                       true,
		`{"progressToken":1,"note":"v"}`:               true,
		`{"io.modelcontextprotocol":"v"}`:              true,
		`{"io.modelcontextprotocol\/x":"v"}`:           true,
		`{"io.modelcontextprotocol\/logLevel":"info"}`: false,
		`{"traceparent2":"v"}`:                         true,
		`{"io.modelcontextprotocol/x":1,"a":1}`:        true,
	} {
		m, err := ParseMeta([]byte(raw))
		if err != nil || m.Foreign != want {
			t.Errorf("_meta %s: foreign %v (%v), want %v", raw, m != nil && m.Foreign, err, want)
		}
	}
}
