package backend

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/flighttest"
)

// A caller that missed the cache while another caller's token request was under way, and asks
// only after it ended, is served the token that request cached: one token request, not two.
func TestCredentialsFlightAfterAnotherEnded(t *testing.T) {
	var requests atomic.Int64
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":600}`, n)
	}))
	defer as.Close()
	c := newCredentials("alpha", AuthConfig{Type: AuthClientCredentials, TokenURL: as.URL, ClientID: "gw", ClientSecret: "s"},
		nil, time.Now)
	defer c.close()

	// The first caller misses and is held before its flight until the second has fetched.
	var first, second string
	var secondErr error
	firstErr := flighttest.HeldFirst(&c.beforeFlight,
		func() (err error) { first, err = c.authorization(context.Background(), "", "", false); return err },
		func() { second, secondErr = c.authorization(context.Background(), "", "", false) })
	if firstErr != nil || secondErr != nil {
		t.Fatalf("errors %v and %v", firstErr, secondErr)
	}
	if got := first; got != second || second != "Bearer tok-1" || requests.Load() != 1 {
		t.Fatalf("first %q, second %q after %d token requests; want both Bearer tok-1 from one request", got, second, requests.Load())
	}
}

// A token endpoint's expires_in of any size or form is a lifetime the token is cached for (as
// said, or assumed): one whose seconds overflow a time.Duration (past 292 years) wrapped to a
// negative or short lifetime, and every request then asked for a new token; a numeric string
// (as some servers send it) or a fraction failed the whole answer.
func TestCredentialsHugeExpiresIn(t *testing.T) {
	for _, expiresIn := range []string{"86400", "10000000000", "9223372036", "9223372037", "4611686018427387904",
		"9223372036854775807", "99999999999999999999", `"3600"`, "3600.5", "1e10", "null"} {
		t.Run(expiresIn, func(t *testing.T) {
			var requests atomic.Int64
			as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := requests.Add(1)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":%s}`, n, expiresIn)
			}))
			defer as.Close()
			c := newCredentials("alpha", AuthConfig{Type: AuthClientCredentials, TokenURL: as.URL, ClientID: "gw", ClientSecret: "s"},
				nil, time.Now)
			defer c.close()
			for i := range 3 {
				got, err := c.authorization(context.Background(), "", "", false)
				if err != nil || got != "Bearer tok-1" {
					t.Fatalf("request %d: %q, %v after %d token requests; want the first token, cached", i, got, err, requests.Load())
				}
			}
		})
	}
}
