package configerr

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestRedactURLs: a URL quoted in a message keeps its scheme, host, port and path; its user
// information and the values of its query are replaced, the names of the query's parameters
// stay, its fragment is dropped, and nothing else of the message changes.
func TestRedactURLs(t *testing.T) {
	for in, want := range map[string]string{
		`x: "redis://:pw@h:1/0": bad; y: "https://u:p:q@h/"`: `x: "redis://REDACTED@h:1/0": bad; y: "https://REDACTED@h/"`,
		`"https://user@h/p" and https://h/p?a=b:c@d`:         `"https://REDACTED@h/p" and https://h/p?a=REDACTED`,
		`no URL: a:b@c, "://"`:                               `no URL: a:b@c, "://"`,
		// A password written unencoded holding what ends a URL's authority: the URL does not
		// parse, which is when its error quotes it.
		`url: "redis://:a/b+c#d?e@f@h:6379/0": invalid port`: `url: "redis://REDACTED@h:6379/0": invalid port`,
		`"https://u:p/q@h/" and "redis://h:1/0"`:             `"https://REDACTED@h/" and "redis://h:1/0"`,
		`"redis://:p\"q@h"`:                                  `"redis://REDACTED@h"`,
		// The query's values, whatever they are called; the names stay.
		`"https://h:8443/v1/embed?key=K1&alt=json"`:    `"https://h:8443/v1/embed?key=REDACTED&alt=REDACTED"`,
		`https://h/x?access_token=K1;sig=K2 refused`:   `https://h/x?access_token=REDACTED&sig=REDACTED refused`,
		`"https://h/x?K1"`:                             `"https://h/x?REDACTED"`,
		`"https://h/x?"`:                               `"https://h/x?"`,
		`"https://h:443/p?mail=a@b"`:                   `"https://h:443/p?mail=REDACTED"`,
		`"https://h/p#K1" and "https://h/p?a=1#K2"`:    `"https://h/p" and "https://h/p?a=REDACTED"`,
		"\"https://h/p?k=K1\nK2\"":                     "\"https://h/p?k=REDACTED\nK2\"",
		`"https://user:K1@h:1/p?key=K2#K3": not found`: `"https://REDACTED@h:1/p?key=REDACTED": not found`,
		`plain text without one`:                       `plain text without one`,
		`Get "http://127.0.0.1:1/mcp?sig=K1": refused`: `Get "http://127.0.0.1:1/mcp?sig=REDACTED": refused`,
		`"http://[::1]:1/mcp?sig=K1"`:                  `"http://[::1]:1/mcp?sig=REDACTED"`,
		`"redis://u:12?K1@h:1/0"`:                      `"redis://REDACTED@h:1/0"`,
		`"redis://u:12#K1@h:1/0"`:                      `"redis://REDACTED@h:1/0"`,
		`"https://h/a%40b?x=K1"`:                       `"https://h/a%40b?x=REDACTED"`,
		// A path naming a user ("/users/@me", "/@alice") after a port is a path: the host stays.
		`"https://h:443/users/@me": not found`:     `"https://h:443/users/@me": not found`,
		`"https://h:8443/@alice/posts/@bob?k=K1"`:  `"https://h:8443/@alice/posts/@bob?k=REDACTED"`,
		`Get "http://127.0.0.1:9/@me/mcp": failed`: `Get "http://127.0.0.1:9/@me/mcp": failed`,
		// A password that parses as a port and a path is still hidden unless every '@' of
		// that path begins a segment.
		`"redis://u:12/K1@h:1/0"`:    `"redis://REDACTED@h:1/0"`,
		`"https://u:/K1/@h/"`:        `"https://REDACTED@h/"`,
		`"https://u:44/a/@b/K1@h/p"`: `"https://REDACTED@h/p"`,
	} {
		if got := RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorRedactsURLs: a configuration error shows a URL as URL does, however the URL
// reached its text: quoted by the check, or repeated by a client's error it wraps.
func TestErrorRedactsURLs(t *testing.T) {
	_, clientErr := http.Get("http://127.0.0.1:0/p?key=CANARY") // port 0: refused at once
	if clientErr == nil || !strings.Contains(clientErr.Error(), "CANARY") {
		t.Fatalf("the client's error does not repeat the URL, nothing to test: %v", clientErr)
	}
	for _, err := range []error{
		At("x.url", "%q: bad", "https://u:CANARY@h/?key=CANARY#CANARY"),
		At("x.url", "%w", clientErr),
		fmt.Errorf("wrapped: %w", At("", "%w", errors.New("https://h/?sig=CANARY"))),
	} {
		if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("error quotes the canary: %v", err)
		}
	}
}

// TestRedactURLsPathSecrets: a path segment that may be a credential is hidden wherever a URL
// is quoted, in every shape services put one in: a webhook's token after the segment or under
// the host that names the hook, a generated token, key, signature or UUID anywhere; the words an
// operator recognises a URL by stay, and so do the rest of its parts' rules.
func TestRedactURLsPathSecrets(t *testing.T) {
	const tok = "Zk3pQ9vX2mLr8TyW1nB4cD7e" // 24 letters and digits
	for in, want := range map[string]string{
		// Webhooks: the segments after the hook's name, or past the first under a hook's host.
		"https://hooks.slack.com/services/T0AAAA/B0BBBB/xxxxxxxx":        "https://hooks.slack.com/services/REDACTED/REDACTED/REDACTED",
		"https://discord.com/api/webhooks/1234/abc-DEF_ghi":              "https://discord.com/api/webhooks/REDACTED/REDACTED",
		"https://gw.example/hook/shortpart":                              "https://gw.example/hook/REDACTED",
		"https://x.webhook.office.com/webhookb2/a@b/IncomingWebhook/c/d": "https://x.webhook.office.com/webhookb2/REDACTED/REDACTED/REDACTED/REDACTED",
		"https://hooks.zapier.com/hooks/catch/1/abc/":                    "https://hooks.zapier.com/hooks/REDACTED/REDACTED/REDACTED/",
		"https://chat.example:8443/HOOKS/" + tok + "?x=1":                "https://chat.example:8443/HOOKS/REDACTED?x=REDACTED",
		// Generated segments anywhere: a token, a key, a signature, a JWT, a UUID, encoded or not.
		"https://mcp.example/s/" + tok + "/mcp":                      "https://mcp.example/s/REDACTED/mcp",
		"https://mcp.example/api/ghp_0123456789abcdefABCDEF/sse":     "https://mcp.example/api/REDACTED/sse",
		"https://h/files/sig-aB3dE_fG7hJ-kL9mN_pQ2r/x":               "https://h/files/REDACTED/x",
		"https://h/v1/eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln/mcp": "https://h/v1/REDACTED/mcp",
		"https://h/t/123e4567-E89B-12d3-a456-426614174000/v2.0":      "https://h/t/REDACTED/v2.0",
		"https://h/k/AAAAAAAAAAAAAAAAAAAAAAAA":                       "https://h/k/REDACTED",
		"https://h/k/0123456789abcdef":                               "https://h/k/REDACTED",
		"https://h/k/%5A%6B3pQ9vX2mLr8TyW1nB4":                       "https://h/k/REDACTED",
		"https://h/k/aB3%2FdE%2BfG7hJkL9mNpQ2r%3D":                   "https://h/k/REDACTED",
		"https://u:" + tok + "@h/" + tok + "?key=" + tok + "#" + tok: "https://REDACTED@h/REDACTED?key=REDACTED",
		`Post "http://127.0.0.1:1/p/` + tok + `": dial tcp: refused`: `Post "http://127.0.0.1:1/p/REDACTED": dial tcp: refused`,
		// What people write stays.
		"https://h:8443/v1/mcp": "https://h:8443/v1/mcp",
		"https://idp.example/realms/acme/.well-known/openid-configuration":        "https://idp.example/realms/acme/.well-known/openid-configuration",
		"https://api.example/v1beta/models/gemini-embedding-001:embedContent":     "https://api.example/v1beta/models/gemini-embedding-001:embedContent",
		"https://api.example/v1/models/text-embedding-3-small/batchEmbedContents": "https://api.example/v1/models/text-embedding-3-small/batchEmbedContents",
		"https://login.example/oauth2/v2.0/token":                                 "https://login.example/oauth2/v2.0/token",
		"https://h/mcp/2025-06-18/github-mcp-server/listToolsByName":              "https://h/mcp/2025-06-18/github-mcp-server/listToolsByName",
		"https://h//a/":    "https://h//a/",
		"redis://h:6379/0": "redis://h:6379/0",
	} {
		if got := RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q)\n = %q\nwant %q", in, got, want)
		}
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q", in, got)
		}
	}
}

// TestCredentialLikeThresholds: each rule of credentialLike holds at its threshold and not one
// below it.
func TestCredentialLikeThresholds(t *testing.T) {
	digits := "a1" + strings.Repeat("b", runWithDigit-2)
	letters := strings.Repeat("b", runAny)
	mixed := "aB3-dE_fG7-hJ_kL9-mN"[:mixedTokenSize]
	cases := "aBcDeFgHiJ-kLmNoPqRs_TuVwXyZaBcD"[:mixedCaseTokens]
	for seg, want := range map[string]bool{
		digits: true, digits[1:]: false,
		letters: true, letters[1:]: false,
		mixed: true, mixed[1:]: false, strings.ToLower(mixed): false,
		cases: true, cases[1:]: false, strings.ToUpper(cases): false,
		"123e4567-e89b-12d3-a456-42661417400g": false,
	} {
		if got := credentialLike(seg); got != want {
			t.Errorf("credentialLike(%q) = %v, want %v", seg, got, want)
		}
	}
}

// TestRedact: a client's error about a URL, however wrapped, reads with the URL quoted as URL
// quotes it, and so does the *url.Error errors.As takes out of it; what it wraps still matches.
func TestRedact(t *testing.T) {
	const secret = "CANARYq8Zt3Lm9Rw2Px7"
	_, clientErr := http.Get("http://127.0.0.1:0/hook/" + secret + "/x?key=" + secret) // port 0: refused at once
	if clientErr == nil || !strings.Contains(clientErr.Error(), secret) {
		t.Fatalf("the client's error does not repeat the URL, nothing to test: %v", clientErr)
	}
	wrapped := fmt.Errorf("fetching: %w", clientErr)
	err := Redact(wrapped)
	if got, want := err.Error(), "fetching: Get \"http://127.0.0.1:0/hook/REDACTED/REDACTED?key=REDACTED\": "; !strings.HasPrefix(got, want) {
		t.Errorf("Redact = %q, want it to start %q", got, want)
	}
	var ue *url.Error
	if !errors.As(err, &ue) || strings.Contains(ue.URL, secret) || !errors.Is(err, wrapped) {
		t.Errorf("errors.As and errors.Is: %v, %#v", err, ue)
	}
	if Redact(err) != err || Redact(nil) != nil {
		t.Error("Redact is not idempotent, or wraps nil")
	}
}

// TestRedactURLsRandomTokens: tokens as services generate them (base62 keys of 20 characters or
// more, hexadecimal digests of 16 or more, base64url secrets of 32 or more, UUIDs), placed as
// a segment of an ordinary path, are hidden whatever their draw; the path's words stay. The
// draws are from a fixed seed, so the test gives the same answer on every run.
func TestRedactURLsRandomTokens(t *testing.T) {
	const (
		base62    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		hex       = "0123456789abcdef"
		base64url = base62 + "-_"
	)
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(alphabet string, min, max int) string {
		b := make([]byte, min+rng.IntN(max-min+1))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	uuid := func() string {
		h := draw(hex, 32, 32)
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	for range 2000 {
		for _, tok := range []string{draw(base62, 20, 64), draw(hex, 16, 64), draw(base64url, 32, 86), uuid()} {
			in := "https://api.example:8443/v1/mcp/" + tok + "/tools?key=" + tok
			if got, want := RedactURLs(in), "https://api.example:8443/v1/mcp/REDACTED/tools?key=REDACTED"; got != want {
				t.Fatalf("RedactURLs(%q) = %q", in, got)
			}
		}
	}
}

// TestRedactURLsHookWordEncoded: the hook rule reads a segment as a server does, decoded: a hook's
// name written percent-encoded ("%68ook", "web%68ooks") hides what follows it as the plain word
// does, and a segment that holds the name and, past an encoded slash ("hooks%2F…"), the address
// and token a server routes as segments of their own is hidden whole. The short tokens here pass
// credentialLike, so only the hook rule hides them.
func TestRedactURLsHookWordEncoded(t *testing.T) {
	for in, want := range map[string]string{
		"https://gw.example/%68ook/shortpart":             "https://gw.example/%68ook/REDACTED",
		"https://gw.example/%48OOK/shortpart":             "https://gw.example/%48OOK/REDACTED",
		"https://discord.example/api/web%68ooks/1234/abc": "https://discord.example/api/web%68ooks/REDACTED/REDACTED",
		"https://gw.example/hook%2Fshortpart":             "https://gw.example/REDACTED",
		"https://gw.example/hook%2fshortpart/x":           "https://gw.example/REDACTED/REDACTED",
		"https://gw.example/api%2Fhooks%2F1234%2Fabc":     "https://gw.example/REDACTED",
		"https://gw.example/api%2Fhooks/1234":             "https://gw.example/api%2Fhooks/REDACTED",
		// A segment that decodes to no hook's name stays, and so does one that does not decode.
		"https://gw.example/v1%2Fmcp/x": "https://gw.example/v1%2Fmcp/x",
		"https://gw.example/%zzhook/x":  "https://gw.example/%zzhook/REDACTED",
	} {
		if got := RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// TestRedactURLsJSONEscaped: a URL in a JSON text whose encoder escapes '/' (PHP's json_encode
// and some Java encoders do: "https:\/\/h\/p"), as an error quoting a server's JSON body
// carries it, is hidden as the same URL written plainly is, and keeps its escaping; a plain one
// beside it too.
func TestRedactURLsJSONEscaped(t *testing.T) {
	for in, want := range map[string]string{
		`{"error":"no route for https:\/\/gw.example\/hook\/shortpart?key=K1"}`: `{"error":"no route for https:\/\/gw.example\/hook\/REDACTED?key=REDACTED"}`,
		`{"u":"https:\/\/u:K1@h:8443\/v1\/mcp#K2"}`:                             `{"u":"https:\/\/REDACTED@h:8443\/v1\/mcp"}`,
		`{"u":"https:\/\/h\/s\/Zk3pQ9vX2mLr8TyW1nB4cD7e\/mcp"}`:                 `{"u":"https:\/\/h\/s\/REDACTED\/mcp"}`,
		`{"u":"https:\/\/h\/v1\/mcp"}`:                                          `{"u":"https:\/\/h\/v1\/mcp"}`,
		`"https://h/p?k=K1" then {"u":"https:\/\/h\/p?k=K2"}`:                   `"https://h/p?k=REDACTED" then {"u":"https:\/\/h\/p?k=REDACTED"}`,
		`{"u":"https:\/\/h\/p?k=K1"} then "https://h/p?k=K2"`:                   `{"u":"https:\/\/h\/p?k=REDACTED"} then "https://h/p?k=REDACTED"`,
	} {
		if got := RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// TestRedactSharedError: an error Redact has quoted once may be handed to many goroutines (a
// key set's failed fetch, which every token verified meanwhile gets; an issuer's last
// discovery error), and one of them may Redact it again (a reload's error wraps it) while
// another logs it. Redacting it again writes nothing, so the two do not race (run with -race:
// before, every Redact wrote the *url.Error's URL again).
func TestRedactSharedError(t *testing.T) {
	shared := Redact(&url.Error{Op: "Get", URL: "https://u:K1@h/hook/K2?key=K3", Err: errors.New("refused")})
	var ue *url.Error
	if !errors.As(shared, &ue) || ue.URL != "https://REDACTED@h/hook/REDACTED?key=REDACTED" {
		t.Fatalf("the client's error after Redact: %#v", ue)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			_ = Redact(fmt.Errorf("reload: %w", shared))
		}
	}()
	for range 200 {
		if strings.Contains(shared.Error(), "K1") {
			t.Fatal("the shared error shows its URL's credentials")
		}
	}
	<-done
}
