package configerr

import (
	"errors"
	"fmt"
	"net/http"
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
