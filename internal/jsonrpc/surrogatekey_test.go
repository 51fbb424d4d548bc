package jsonrpc

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeRefusesLoneSurrogateKeys: a member name that escapes half of a surrogate pair alone is
// refused wherever it stands, since decoders read it differently (encoding/json and the gateway as
// U+FFFD, JSON.parse and Python as the lone half): the name the gateway would check, digest or show
// is not the one a backend acts on. A whole pair, an escaped backslash before "u", and a lone
// surrogate in a value (which the confirmation and interceptor rules handle) are not this refusal.
func TestDecodeRefusesLoneSurrogateKeys(t *testing.T) {
	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`
	refused := []struct {
		name, body string
		code       int
	}{
		{"argument name, high half", head + `{"name":"a","arguments":{"\ud800":1}}}`, CodeInvalidParams},
		{"argument name, low half", head + `{"name":"a","arguments":{"x\udc00y":1}}}`, CodeInvalidParams},
		{"high half then another escape", head + `{"name":"a","arguments":{"\ud800\u0041":1}}}`, CodeInvalidParams},
		{"pair then a lone half", head + `{"name":"a","arguments":{"\ud83d\ude00\ud800":1}}}`, CodeInvalidParams},
		{"upper-case hex", head + `{"name":"a","arguments":{"\uDBFF":1}}}`, CodeInvalidParams},
		{"deep in arguments", head + `{"name":"a","arguments":{"o":[{"\udfff":1}]}}}`, CodeInvalidParams},
		{"_meta key", head + `{"name":"a","_meta":{"\ud800":1}}}`, CodeInvalidParams},
		{"params key", head + `{"name":"a","\ud800":1}}`, CodeInvalidParams},
		{"top level", `{"jsonrpc":"2.0","id":1,"method":"tools/call","\udc00":1}`, CodeInvalidRequest},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.body), Limits{})
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.code || !strings.Contains(e.Message, "lone surrogate") {
				t.Fatalf("Decode(%s) error = %v, want code %d naming the lone surrogate", tt.body, err, tt.code)
			}
			if scanErr := Scan([]byte(tt.body), Limits{}); !errors.Is(scanErr, ErrSurrogateKey) {
				t.Fatalf("Scan(%s) = %v, want ErrSurrogateKey", tt.body, scanErr)
			}
		})
	}
	for _, body := range []string{
		head + `{"name":"a","arguments":{"\ud83d\ude00":1}}}`,
		head + `{"name":"a","arguments":{"\\ud800":1}}}`,
		head + `{"name":"a","arguments":{"memo":"\ud800"}}}`,
		head + `{"name":"a","arguments":{"\u00e9\n":1}}}`,
	} {
		if _, err := Decode([]byte(body), Limits{}); err != nil {
			t.Errorf("Decode(%s) = %v, want accepted", body, err)
		}
	}
}
