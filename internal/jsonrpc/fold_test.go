package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestDecodeRefusesCaseVariants is the decode-level table for spelling variants of members:
// every row is a request a case-insensitive decoder behind the gateway would read differently
// from the gateway, and each must be refused as invalid params (or an invalid request at the
// top level).
func TestDecodeRefusesCaseVariants(t *testing.T) {
	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`
	tests := []struct {
		name   string
		params string
		code   int
	}{
		{"NAME beside name", `{"name":"a","NAME":"b"}`, CodeInvalidParams},
		{"Name beside name", `{"Name":"b","name":"a"}`, CodeInvalidParams},
		{"ARGUMENTS beside arguments", `{"name":"a","arguments":{},"ARGUMENTS":{"x":1}}`, CodeInvalidParams},
		{"escaped variant", `{"name":"a","\u004eame":"b"}`, CodeInvalidParams},
		{"dotted capital I", "{\"uri\":\"a\",\"ur\u0130\":\"b\"}", CodeInvalidParams},
		{"long s in requestState", "{\"requestState\":\"a\",\"reque\u017ftState\":\"b\"}", CodeInvalidParams},
		{"Kelvin in key", "{\"k\":1,\"\u212a\":2}", CodeInvalidParams},
		{"dotless i", "{\"inputResponses\":{},\"\u0131nputResponses\":{}}", CodeInvalidParams},
		{"sharp s expands", "{\"_meta\":{\"progressToken\":1,\"progre\u00dfToken\":2}}", CodeInvalidParams},
		{"st ligature", "{\"requestState\":\"a\",\"reque\ufb06State\":\"b\"}", CodeInvalidParams},
		{"fullwidth", "{\"name\":\"a\",\"\uff4e\uff41\uff4d\uff45\":\"b\"}", CodeInvalidParams},
		{"underscore dropped", `{"requestState":"a","request_state":"b"}`, CodeInvalidParams},
		{"dash dropped", `{"inputResponses":{},"input-responses":{}}`, CodeInvalidParams},
		{"nested in arguments", `{"name":"a","arguments":{"owner":"x","OWNER":"y"}}`, CodeInvalidParams},
		{"deep in arguments", `{"name":"a","arguments":{"o":[{"Repo":"x","repo":"y"}]}}`, CodeInvalidParams},
		// Canonically equivalent spellings (one composed, one decomposed): Swift's String
		// compares them equal, so a Swift backend reads the two members as one, and they look
		// alike to a person confirming the call.
		{"composed and decomposed", "{\"name\":\"a\",\"arguments\":{\"caf\u00e9\":\"x\",\"cafe\u0301\":\"y\"}}", CodeInvalidParams},
		{"decomposed escaped", `{"name":"a","arguments":{"caf\u00e9":"x","cafe\u0301":"y"}}`, CodeInvalidParams},
		{"combining marks reordered", "{\"arguments\":{\"a\u0323\u0301\":1,\"a\u0301\u0323\":2}}", CodeInvalidParams},
		{"Angstrom sign", "{\"arguments\":{\"\u00c5ngstr\u00f6m\":1,\"\u212bngstr\u00f6m\":2}}", CodeInvalidParams},
		{"in ref", `{"ref":{"type":"ref/prompt","name":"a","nAme":"b"}}`, CodeInvalidParams},
		{"in _meta", `{"_meta":{"traceparent":"a","TraceParent":"b"}}`, CodeInvalidParams},
		{"top level", "", CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := head + tt.params + "}"
			if tt.params == "" {
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"x"}`
			}
			_, err := Decode([]byte(body), Limits{})
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.code {
				t.Fatalf("Decode(%s) error = %v, want code %d", body, err, tt.code)
			}
		})
	}
}

// TestDecodeManyFoldedKeys covers the map path of the key set (more than 16 keys).
func TestDecodeManyFoldedKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{`)
	for i := range 30 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	ok := b.String() + `"last":1}}}`
	if _, err := Decode([]byte(ok), Limits{}); err != nil {
		t.Fatalf("distinct keys refused: %v", err)
	}
	bad := b.String() + `"K7":1}}}`
	_, err := Decode([]byte(bad), Limits{})
	if !errors.Is(err, NewError(CodeInvalidParams, "")) || !strings.Contains(err.Error(), `"k7" and "K7"`) {
		t.Fatalf("folded duplicate among many keys: %v", err)
	}
	// The client reads this text; it names both spellings.
	const want = `Invalid params: object keys differ only in case or punctuation: "k7" and "K7"`
	if e := (*Error)(nil); !errors.As(err, &e) || e.Message != want {
		t.Fatalf("error %v, want message %q", err, want)
	}
	// Scan, used for what backends send, stays exact.
	if err := Scan([]byte(`{"a":1,"A":2}`), Limits{}); err != nil {
		t.Fatalf("Scan refused case-distinct keys: %v", err)
	}
}

// TestParamsRefuseLoneVariants: a variant with no exact member beside it is no duplicate, but
// the gateway would read the member as absent while a case-insensitive backend reads it.
func TestParamsRefuseLoneVariants(t *testing.T) {
	for _, tt := range []struct{ params, parse string }{
		{`{"name":"a","ARGUMENTS":{"x":1}}`, "params"},
		{`{"Name":"a"}`, "params"},
		{`{"URI":"file:///x"}`, "params"},
		{`{"requeststate":"s"}`, "params"},
		{`{"Cursor":"c"}`, "params"},
		{`{"REF":{}}`, "params"},
		{`{"_Meta":{}}`, "params"},
		{`{"meta":{}}`, "params"},
		{`{"_meta":{"ProgressToken":1}}`, "meta"},
		{`{"_meta":{"io.modelcontextprotocol/ProtocolVersion":"x"}}`, "meta"},
		{`{"ref":{"type":"ref/prompt","NAME":"a"}}`, "ref"},
		{`{"ref":{"Type":"ref/prompt","name":"a"}}`, "ref"},
		{`{"Argument":{"name":"a"}}`, "params"},
		{`{"CONTEXT":{"arguments":{}}}`, "params"},
		{`{"argument":{"NAME":"a"}}`, "completion"},
		{`{"argument":{"na_me":"a"}}`, "completion"},
		{`{"argument":"a"}`, "completion"},
		{`{"context":{"Arguments":{"a":"b"}}}`, "completion"},
		{`{"context":[]}`, "completion"},
	} {
		raw := []byte(tt.params)
		if err := Scan(raw, Limits{}); err != nil {
			t.Fatal(err)
		}
		p, err := ParseParams(raw)
		if err == nil {
			switch tt.parse {
			case "meta":
				_, err = ParseMeta(p.Meta)
			case "ref":
				_, err = ParseRef(p.Ref)
			case "completion":
				err = CheckCompletion(raw)
			}
		}
		if !errors.Is(err, NewError(CodeInvalidParams, "")) {
			t.Errorf("%s: error = %v, want -32602", tt.params, err)
		}
	}
	// Unknown members that fold to nothing the gateway reads still pass.
	p, err := ParseParams([]byte(`{"name":"a","task":{"ttl":1},"Names":1,"_meta":{"x.example/Trace":1}}`))
	if err != nil || p.Name != "a" {
		t.Fatalf("ParseParams: %v", err)
	}
	if _, err := ParseMeta(p.Meta); err != nil {
		t.Fatalf("ParseMeta: %v", err)
	}
	if err := CheckCompletion([]byte(`{"argument":{"name":"a","value":"b","Names":1},"context":null}`)); err != nil {
		t.Fatalf("CheckCompletion: %v", err)
	}
}

// TestFoldAtLeastEncodingJSON checks that whatever encoding/json matches to a struct field is
// also equal under FoldKey, over every rune that simple-folds to an ASCII letter and a few
// names the gateway reads.
func TestFoldAtLeastEncodingJSON(t *testing.T) {
	type target struct {
		Name string `json:"name"`
	}
	for r := rune(0x80); r < 0x10000; r++ {
		for _, name := range []string{"nam" + string(r), string(r) + "ame"} {
			var got target
			body, _ := json.Marshal(map[string]string{name: "x"})
			if json.Unmarshal(body, &got) == nil && got.Name == "x" && name != "name" {
				if !FoldEqual([]byte(name), []byte("name")) {
					t.Errorf("encoding/json reads %q as name, FoldEqual does not", name)
				}
			}
		}
	}
	for _, pair := range [][2]string{{"Straße", "STRASSE"}, {"K", "k"}, {"ſ", "S"}, {"ＮＡＭＥ", "name"}, {"İ", "ı"}, {"caf\u00e9", "cafe\u0301"}, {"\u212b", "\u00e5"}} {
		if !FoldEqual([]byte(pair[0]), []byte(pair[1])) || FoldKey(pair[0]) != FoldKey(pair[1]) {
			t.Errorf("%q and %q should fold together", pair[0], pair[1])
		}
	}
	for _, pair := range [][2]string{{"name", "names"}, {"uri", "url"}, {"a", "b"}, {"é", "e"}} {
		if FoldEqual([]byte(pair[0]), []byte(pair[1])) {
			t.Errorf("%q and %q should differ", pair[0], pair[1])
		}
	}
}
