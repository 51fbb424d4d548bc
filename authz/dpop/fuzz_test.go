package dpop

import (
	"strings"
	"testing"
)

// FuzzVerify: no proof, however malformed, panics the verifier or verifies when it was not made
// by the key it names for this request.
func FuzzVerify(f *testing.F) {
	f.Add("", "")
	f.Add("eyJhbGciOiJub25lIn0.e30.", "")
	f.Add("a.b.c", testURL)
	f.Add(`eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVkMjU1MTkiLCJqd2siOnt9fQ.e30.AA`, testURL)
	v, err := NewVerifier(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw, url string) {
		p, err := v.Verify(raw, Request{Method: "POST", URL: url, AccessToken: testToken, Now: testNow})
		if err == nil && (p.JKT == "" || strings.Count(raw, ".") != 2) {
			t.Fatalf("%q verified as %+v", raw, p)
		}
	})
}
