package guardrails

import "testing"

// What the client sent that a backend's message carries back (Echo: the request's id in an
// error response, its progress token in a progress notification) is passed over only in that
// place and only as the client sent it: the same value anywhere else, another value there, or
// the place in a nested object is the backend's text, and scanned.
func TestEchoPassedOver(t *testing.T) {
	r := testEngine(t, everything("block")).Rule(KindTool, "b", "t")
	const tok = `"q8Zr4Lm2Xt7Vb1Nc9Kp3Wd6Hs0Jf5Gy"`
	echo := &Echo{ID: []byte(`4111111111111111`), ProgressToken: []byte(tok)}
	progress := func(params string) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":` + params + `}`
	}
	for _, c := range []struct {
		msg   string
		clean bool
	}{
		{progress(`{"progressToken":` + tok + `,"progress":1}`), true},
		{progress(`{"progress":1,"progressToken":` + tok + `}`), true},
		{progress(`{"progressToken":` + tok + `,"progress":1,"message":` + tok + `}`), false},
		{progress(`{"progressToken":"V1StGXR8Z5jdHi6BmyTq9w","progress":1}`), false},
		{progress(`{"progressToken":4111111111111111,"progress":1}`), false},
		{progress(`{"progress":1,"x":{"progressToken":` + tok + `}}`), false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","progressToken":` + tok + `,"params":{"progress":1}}`, false},
	} {
		if rep := r.ScanRelayed([]byte(c.msg), echo); rep.Clean() != c.clean || rep.Err != nil {
			t.Errorf("%s: clean %v, want %v (%+v)", c.msg, rep.Clean(), c.clean, rep.Findings)
		}
		if rep := r.ScanRelayed([]byte(c.msg), nil); rep.Clean() {
			t.Errorf("%s: clean without the echo", c.msg)
		}
	}
	for _, c := range []struct {
		msg   string
		clean bool
	}{
		{`{"jsonrpc":"2.0","id":4111111111111111,"error":{"code":-32603,"message":"broke"}}`, true},
		{`{"jsonrpc":"2.0","id":4111111111111111,"error":{"code":-32603,"message":"broke 4111111111111111"}}`, false},
		{`{"jsonrpc":"2.0","id":5555555555554444,"error":{"code":-32603,"message":"broke"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"broke","data":{"id":4111111111111111}}}`, false},
	} {
		if rep := r.ScanError([]byte(c.msg), echo); rep.Clean() != c.clean || rep.Err != nil {
			t.Errorf("%s: clean %v, want %v (%+v)", c.msg, rep.Clean(), c.clean, rep.Findings)
		}
	}
}
