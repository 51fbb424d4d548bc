package gateway

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// TestIsStream: the requests a component set tracks as GET streams, which every reload judges
// and ends when the new configuration would refuse them, are a pre-2026 client's GET streams
// and nothing else. A browser's GET of the gateway's pages accepts "*/*", which covers an event
// stream: it was tracked, and a reload while it was served (a sign-in's callback, waiting on the
// identity provider's token endpoint) cancelled it.
func TestIsStream(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		h      http.Header
		want   bool
	}{
		{"a pre-2026 client's GET stream", http.MethodGet, http.Header{"Accept": {"text/event-stream"}, mcpheader.SessionID: {"s"}}, true},
		{"a GET stream accepting anything", http.MethodGet, http.Header{"Accept": {"*/*"}, mcpheader.SessionID: {"s"}}, true},
		{"a browser's page", http.MethodGet, http.Header{"Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}}, false},
		{"a GET accepting anything", http.MethodGet, http.Header{"Accept": {"*/*"}}, false},
		{"a GET without Accept", http.MethodGet, http.Header{mcpheader.SessionID: {"s"}}, false},
		{"an event stream without a session (405)", http.MethodGet, http.Header{"Accept": {"text/event-stream"}}, false},
		{"a POST", http.MethodPost, http.Header{"Accept": {"application/json, text/event-stream"}, mcpheader.SessionID: {"s"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.NewRequest(tc.method, "http://127.0.0.1/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header = tc.h
			if got := isStream(r); got != tc.want {
				t.Fatalf("isStream = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStreamJudgingEndsWithTheProcess: a reload judges the streams of the set it replaces under
// the reload lock, within the time a judgement may take (auth.fetchTimeout, an hour here). It
// judged within a context of its own: a SIGTERM meanwhile (the process's context done) waited
// for that whole timeout before the drain could start. Now the judging ends with the process's
// context, and a stream it could not judge is refused (fail closed), its client reconnecting.
func TestStreamJudgingEndsWithTheProcess(t *testing.T) {
	var s streamSet
	r, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	tracked, done := s.track(r)
	defer done()
	process, sigterm := context.WithCancel(context.Background())
	judging := make(chan struct{})
	a := acceptance{timeout: time.Hour, accepts: func(ctx context.Context, _ *http.Request) (bool, *authz.Principal) {
		close(judging)
		<-ctx.Done() // a token check waiting on an issuer that does not answer
		return false, nil
	}}
	ended := make(chan int, 1)
	go func() { ended <- s.judge(process, a) }()
	<-judging
	sigterm()
	select {
	case n := <-ended:
		if n != 1 {
			t.Errorf("judge ended %d streams, want the one it could not judge", n)
		}
	case <-time.After(reloadWait):
		t.Fatal("judging the streams outlived the process's context")
	}
	if cause := context.Cause(tracked.Context()); !errors.Is(cause, errAuthReplaced) {
		t.Errorf("the stream's context ended with %v, want errAuthReplaced", cause)
	}
}
