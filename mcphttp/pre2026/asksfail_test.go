package pre2026

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcp-gateway/gateway/internal/era"
)

// TestNotAskedInClientTerms: a call whose round of client input could not be asked tells a
// 2025 client what happened in its own terms: a request that could not be written to the call's
// stream is named by its method (whichever of the round's requests failed), and the gateway's
// own failures are said as such; never the error's text with the gateway's package names.
func TestNotAskedInClientTerms(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	reqs := []era.InputRequest{elicitReq, samplingReq}
	for fail, method := range []string{"elicitation/create", "sampling/createMessage"} {
		n := 0
		_, _, err := rig.b.ask(context.Background(), sess, testCaller, reqs, roundLimits{}, func([]byte) error {
			if n++; n > fail {
				return errors.New("write tcp 127.0.0.1:8080->127.0.0.1:50000: broken pipe")
			}
			return nil
		})
		want := "the gateway could not send its " + method + " request to the client on this call's stream"
		if got := notAsked(err); got != want {
			t.Errorf("writing %s failed (%v): %q, want %q", method, err, got, want)
		}
		noMRTRWords(t, notAsked(err))
		rig.assertIdle(t)
	}
	for _, err := range []error{errAsksUnavailable, fmt.Errorf("asks: sealing an answer id: %w", errors.New("no key")),
		errors.New("asks: session binding of 200 bytes exceeds 128")} {
		if got, want := notAsked(err), "the gateway could not ask the client for the input this call needs"; got != want {
			t.Errorf("%v: %q, want %q", err, got, want)
		}
	}
}
