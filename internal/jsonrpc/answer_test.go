package jsonrpc

import (
	"reflect"
	"testing"
)

// TestDecodeClientAnswer: the one strict decode of a client's body yields, beside its refusal,
// the response a pre-2026 client may send as an answer, exactly as a second, lenient decode of
// that body (DecodeMessage, taking a response with an id) read it; for every other body, no
// answer, and Decode's error unchanged.
func TestDecodeClientAnswer(t *testing.T) {
	answers := 0
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"roots":[{"uri":"file:///x"}]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no","data":{"k":[1]}}}`,
		`{"id":2,"result":{},"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","result":{}}`,                                         // no id
		`{"jsonrpc":"2.0","id":1,"result":[]}`,                                  // result not an object
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, // both
		`{"jsonrpc":"2.0","id":1,"error":"x"}`,                                  // error not an object
		`{"jsonrpc":"2.0","id":1,"error":{"Code":-1,"message":"no"}}`,           // code in another spelling
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1}}`,                          // no message
		`{"jsonrpc":"1.0","id":1,"result":{}}`,                                  // version
		`{"id":1,"result":{}}`,                                                  // no version
		`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`,                  // a method besides
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,                              // a request
		`{"jsonrpc":"2.0","id":1,"result":{},"extra":1}`,                        // unknown member
		`{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}`,                       // duplicate key
	} {
		req, answer, err := DecodeClient([]byte(body), Limits{})
		dreq, derr := Decode([]byte(body), Limits{})
		if !reflect.DeepEqual(req, dreq) || !reflect.DeepEqual(err, derr) {
			t.Errorf("%s: DecodeClient %v %v, Decode %v %v", body, req, err, dreq, derr)
		}
		var want *Message
		if rpc, ok := err.(*Error); ok && rpc.Message == "Invalid Request: clients must not send responses" {
			if m, err := DecodeMessage([]byte(body), Limits{}); err == nil && m.IsResponse() && m.ID != nil {
				want = m
				want.noURIKey = false
			}
		}
		if !reflect.DeepEqual(answer, want) {
			t.Errorf("%s: answer %+v, want %+v", body, answer, want)
		}
		if answer != nil {
			answers++
		}
	}
	if answers != 4 {
		t.Errorf("%d bodies read as answers, want the first 4", answers)
	}
}
