package mrtr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// Example walks a gateway confirmation: the first call is answered with an
// input_required result; the approved retry is opened, consumed once, and
// its params are stripped of the MRTR fields before forwarding.
func Example() {
	clock := mcptest.NewClock(time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC))
	ring, _ := seal.New(seal.Config{Keys: []seal.Key{{ID: "k1", Secret: bytes.Repeat([]byte{1}, seal.MinSecretBytes)}}})
	codec, _ := New(ring.Sealer(seal.PurposeRequestState), Config{}, &memReplays{clock: clock, seen: map[string]time.Time{}}, clock.Now)

	args := json.RawMessage(`{"title":"bug"}`)
	digest, _ := Digest(args)
	bind := Binding{Issuer: "https://idp.example/", Subject: "alice", Upstream: "github",
		Method: MethodToolsCall, Name: "github__create_issue", ArgsDigest: digest}

	// First call: policy requires confirmation and the client declared form elicitation.
	if DeclaresFormElicitation(json.RawMessage(`{"elicitation":{}}`)) {
		tok, _ := codec.Seal(State{Kind: KindConfirm, Issuer: bind.Issuer, Subject: bind.Subject,
			Upstream: bind.Upstream, Method: bind.Method, Name: bind.Name, ArgsDigest: bind.ArgsDigest})
		res := ConfirmationResult(bind.Name, args, nil, tok)
		fmt.Println(res.ResultType, res.InputRequests[ConfirmKey].Params.Message)

		// Retry: same params plus inputResponses and the echoed requestState.
		retry := json.RawMessage(`{"name":"github__create_issue","arguments":{"title":"bug"},` +
			`"inputResponses":{"` + ConfirmKey + `":{"action":"accept","content":{"approve":true}}},` +
			`"requestState":"` + tok + `"}`)
		st, err := codec.Open(tok, bind)
		fmt.Println(err)
		outcome, _ := Evaluate(json.RawMessage(`{"`+ConfirmKey+`":{"action":"accept","content":{"approve":true}}}`), ConfirmKey)
		fmt.Println(outcome, codec.Consume(context.Background(), st))
		fwd, _ := RetryParams(retry, st)
		fmt.Println(string(fwd))
		fmt.Println(Reason(codec.Consume(context.Background(), st)))
	}
	// Output:
	// input_required Allow the tool "github__create_issue" to run with: title="bug"?
	// <nil>
	// approved <nil>
	// {"name":"github__create_issue","arguments":{"title":"bug"}}
	// replayed
}
