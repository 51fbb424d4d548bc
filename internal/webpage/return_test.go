package webpage

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
)

// TestSignInReturnsOnlyToThePages: the path a sign-in returns to (the login cookie's, which the
// callback redirects to) must be one of the gateway's: not another host's ("//evil.example",
// "/\evil.example"), nor one that becomes another host's in a browser, which removes tabs and
// line breaks from a URL before reading it ("/\t/evil.example" is "//evil.example" there), nor
// one with another control character. Such a path is refused before the issuer is asked;
// a path of the gateway goes on to the issuer (here unreachable).
func TestSignInReturnsOnlyToThePages(t *testing.T) {
	t.Parallel()
	ring := testRing(t)
	s := NewSignIn(SignInConfig{Issuer: "http://127.0.0.1:1", ClientID: "gw", RedirectURL: "https://gw.example/callback",
		SessionTTL: time.Hour}, ring, &http.Client{Timeout: time.Second}, nil)
	start := func(ret string) (*httptest.ResponseRecorder, error) {
		w := httptest.NewRecorder()
		return w, s.Start(w, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/approval/c/x", nil), ret, false)
	}
	for _, ret := range []string{"//evil.example", "/\\evil.example", "/\t/evil.example", "/\n/evil.example", "/\r/evil.example",
		"/\t\\evil.example", "/\x00", "/a\x7f", "/a\x1b", "https://evil.example/", "evil.example", ""} {
		w, err := start(ret)
		var ue *UnreachableError
		if err == nil || errors.As(err, &ue) {
			t.Errorf("return path %q: %v; want it refused before the issuer is asked", ret, err)
		}
		if c := w.Header().Values("Set-Cookie"); len(c) > 0 {
			t.Errorf("return path %q set cookies: %q", ret, c)
		}
	}
	var ue *UnreachableError
	if _, err := start("/team-a/approval/c/0123?x=%09"); !errors.As(err, &ue) {
		t.Errorf("a path of the gateway: %v; want it taken (and the unreachable issuer said)", err)
	}
}

// testRing is a seal ring of one test-only key, for the sign-in's cookies and states.
func testRing(t *testing.T) *seal.KeyRing {
	t.Helper()
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "k1", Secret: []byte("a-test-only-secret-of-at-least-32-bytes")}}})
	if err != nil {
		t.Fatal(err)
	}
	return ring
}
