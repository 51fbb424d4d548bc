package mrtr

import (
	"errors"
	"testing"
)

// TestMalformedAnswerProblems: each malformed answer to a gateway confirmation carries its
// problem (Problem), which the pre-2026 edge words for a client that answered elicitation/create,
// while its text, the one a 2026-07-28 client is given, stays as it was and it still matches
// ErrMalformedResponse.
func TestMalformedAnswerProblems(t *testing.T) {
	const key = ConfirmKey
	for _, tt := range []struct {
		what, responses string
		url             bool
		problem         AnswerProblem
		text            string
	}{
		{"duplicate keys", `{"` + key + `":{"action":"accept"},"` + key + `":{"action":"decline"}}`, false, AnswerUnreadable, ""},
		{"not an object", `[1]`, false, AnswerUnreadable, "mrtr: malformed confirmation response: inputResponses is not an object"},
		{"no action", `{"` + key + `":{"content":{}}}`, false, AnswerNotResult, "mrtr: malformed confirmation response: not an elicitation result"},
		{"unknown action", `{"` + key + `":{"action":"maybe"}}`, false, AnswerUnknownAction, "mrtr: malformed confirmation response: unknown action"},
		{"url: unknown action", `{"` + key + `":{"action":"maybe"}}`, true, AnswerUnknownAction, "mrtr: malformed confirmation response: unknown action"},
		{"accept without content", `{"` + key + `":{"action":"accept"}}`, false, AnswerNoContent, "mrtr: malformed confirmation response: accept without content"},
		{"approve a string", `{"` + key + `":{"action":"accept","content":{"approve":"true"}}}`, false, AnswerNoApprove, `mrtr: malformed confirmation response: accept without a boolean "approve"`},
	} {
		evaluate := Evaluate
		if tt.url {
			evaluate = EvaluateURL
		}
		outcome, err := evaluate([]byte(tt.responses), key)
		if outcome != OutcomeMalformed || !errors.Is(err, ErrMalformedResponse) || Problem(err) != tt.problem {
			t.Errorf("%s: %v %v (problem %d), want malformed with problem %d", tt.what, outcome, err, Problem(err), tt.problem)
			continue
		}
		if tt.text != "" && err.Error() != tt.text {
			t.Errorf("%s: text %q, want %q", tt.what, err, tt.text)
		}
	}
	if Problem(ErrInvalidState) != 0 || Problem(nil) != 0 {
		t.Error("an error that is not a malformed answer has a problem")
	}
}
