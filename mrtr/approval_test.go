package mrtr

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDeclaresURLElicitation: only an elicitation object with a "url" object declares URL mode;
// the empty object means form only (spec §1).
func TestDeclaresURLElicitation(t *testing.T) {
	for caps, want := range map[string]bool{
		`{"elicitation":{"url":{}}}`:           true,
		`{"elicitation":{"form":{},"url":{}}}`: true,
		`{"elicitation":{}}`:                   false,
		`{"elicitation":{"form":{}}}`:          false,
		`{"elicitation":{"url":true}}`:         false,
		`{"elicitation":{"url":null}}`:         false,
		`{}`:                                   false,
		`{"elicitation":"url"}`:                false,
		`not json`:                             false,
	} {
		if got := DeclaresURLElicitation(json.RawMessage(caps)); got != want {
			t.Errorf("%s: %v, want %v", caps, got, want)
		}
	}
}

// TestEvaluateURL: accept (with or without content) only says the user came back; decline and
// cancel end the call; duplicates and unknown actions are malformed.
func TestEvaluateURL(t *testing.T) {
	for in, want := range map[string]Outcome{
		``:     OutcomeMissing,
		`null`: OutcomeMissing,
		`{}`:   OutcomeMissing,
		`{"io.mcp-gateway/confirm":{"action":"accept"}}`:                                               OutcomeApproved,
		`{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":false}}}`:                   OutcomeApproved,
		`{"io.mcp-gateway/confirm":{"action":"decline"}}`:                                              OutcomeDeclined,
		`{"io.mcp-gateway/confirm":{"action":"cancel"}}`:                                               OutcomeCancelled,
		`{"io.mcp-gateway/confirm":{"action":"approve"}}`:                                              OutcomeMalformed,
		`{"io.mcp-gateway/confirm":{"action":"accept"},"io.mcp-gateway/confirm":{"action":"decline"}}`: OutcomeMalformed,
		`[1]`: OutcomeMalformed,
	} {
		got, err := EvaluateURL(json.RawMessage(in), ConfirmKey)
		if got != want || (got == OutcomeMalformed) != errors.Is(err, ErrMalformedResponse) {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
}

// TestApprovalStateRoundTrip: a KindApproval state seals, opens bound to its call, is single use
// and reports the nonce and expiry SealState stamped.
func TestApprovalStateRoundTrip(t *testing.T) {
	c := newFixture(t).codec
	b := Binding{Issuer: "https://iss", Subject: "alice", Upstream: "files", Method: MethodToolsCall, Name: "files__rm"}
	tok, sealed, err := c.SealState(State{Kind: KindApproval, Issuer: b.Issuer, Subject: b.Subject, Upstream: b.Upstream,
		Method: b.Method, Name: b.Name})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Open(tok, b)
	if err != nil || st.Kind != KindApproval || st.Nonce != sealed.Nonce || !st.Expiry.Equal(sealed.Expiry) || !st.SingleUse() {
		t.Fatalf("opened %+v %v (sealed %+v)", st, err, sealed)
	}
	if err := c.Consume(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if err := c.Consume(context.Background(), st); Reason(err) != ReasonReplayed {
		t.Errorf("second use: %v", err)
	}
	if KindApproval.String() != "approval" {
		t.Errorf("String() = %q", KindApproval.String())
	}
}

// TestApprovalResult: the input_required result carries one URL elicitation, with the page and
// the id, and a message that names the tool without control characters.
func TestApprovalResult(t *testing.T) {
	b, err := json.Marshal(ApprovalResult("files__rm\u0007\n", "https://gw.example/approval/c/ab", "ab", "tok"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		ResultType    string `json:"resultType"`
		RequestState  string `json:"requestState"`
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode, Message, URL, ElicitationID string
			} `json:"params"`
		} `json:"inputRequests"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	p := r.InputRequests[ConfirmKey].Params
	if r.ResultType != ResultTypeInputRequired || r.RequestState != "tok" || r.InputRequests[ConfirmKey].Method != MethodElicitationCreate ||
		p.Mode != "url" || p.URL != "https://gw.example/approval/c/ab" || p.ElicitationID != "ab" {
		t.Fatalf("result %s", b)
	}
	if !strings.Contains(p.Message, "files__rm") || strings.ContainsAny(p.Message, "\u0007\n") {
		t.Errorf("message %q", p.Message)
	}
}

// TestApprovalResultNameInvisible: the URL-mode message names the tool as the form's message
// does: every character pinning and the page treat as invisible or direction-changing (bidi
// overrides, zero-width and tag characters, blank-rendering letters) is shown as U+FFFD, so the
// gateway's own message never shows the user a name that reads as another.
func TestApprovalResultNameInvisible(t *testing.T) {
	for _, name := range []string{"files__read\u202Eeteled", "files__re\u200Bad", "files__read\U000E0041", "files__read\u3164", "files__read\u2066x\u2069"} {
		msg := ApprovalResult(name, "https://gw.example/approval/c/ab", "ab", "tok").InputRequests[ConfirmKey].Params.Message
		if !strings.Contains(msg, "files__") || !strings.Contains(msg, "\uFFFD") ||
			strings.ContainsAny(msg, "\u202E\u200B\U000E0041\u3164\u2066\u2069") {
			t.Errorf("%q: message %q", name, msg)
		}
	}
}
