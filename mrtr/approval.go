package mrtr

import (
	"encoding/json"
	"strconv"
)

const (
	// ElicitationModeURL is the URL elicitation mode: the client sends the user to a page
	// outside itself and answers with an action only, never with content.
	ElicitationModeURL = "url"
	// RequiredURLElicitationCapability is the data.requiredCapabilities value of a -32021 error
	// when a call needs out-of-band approval and the client did not declare URL elicitation.
	RequiredURLElicitationCapability = `{"elicitation":{"url":{}}}`
)

// URLInputRequest is an inputRequests entry carrying a URL-mode elicitation/create.
type URLInputRequest struct {
	// Method is MethodElicitationCreate.
	Method string `json:"method"`
	// Params are the URL-mode elicitation parameters.
	Params URLElicitParams `json:"params"`
}

// URLElicitParams are the params of a URL-mode elicitation/create request.
type URLElicitParams struct {
	// Mode is ElicitationModeURL.
	Mode string `json:"mode"`
	// Message tells the user why the page must be opened.
	Message string `json:"message"`
	// URL is the gateway's approval page for this one call.
	URL string `json:"url"`
	// ElicitationID names this elicitation; the gateway uses the state's nonce.
	ElicitationID string `json:"elicitationId"`
}

// ApprovalRequiredResult is the input_required result of a call that needs the user's approval
// on the gateway's page.
type ApprovalRequiredResult struct {
	// ResultType is always ResultTypeInputRequired.
	ResultType string `json:"resultType"`
	// InputRequests holds the one URL elicitation under ConfirmKey.
	InputRequests map[string]URLInputRequest `json:"inputRequests"`
	// RequestState is the sealed KindApproval state the client echoes on its retry.
	RequestState string `json:"requestState"`
}

// ApprovalResult returns the input_required result sending the user to pageURL to approve a
// call of tool; state is the sealed KindApproval token and id the elicitation id.
func ApprovalResult(tool, pageURL, id, state string) ApprovalRequiredResult {
	msg := "The gateway needs your approval before it runs " + summarizeName(tool) +
		". Open the link, sign in, check the call and approve or deny it; then continue here."
	return ApprovalRequiredResult{
		ResultType: ResultTypeInputRequired,
		InputRequests: map[string]URLInputRequest{ConfirmKey: {
			Method: MethodElicitationCreate,
			Params: URLElicitParams{Mode: ElicitationModeURL, Message: msg, URL: pageURL, ElicitationID: id},
		}},
		RequestState: state,
	}
}

// summarizeName names the tool in the message as a form confirmation does (ConfirmMessage):
// quoted, bounded, on one line, and with every character pinning and the approval page treat as
// invisible or direction-changing shown as U+FFFD (clean), so the gateway's own message never
// shows the user a name that reads as another; a name holding right-to-left text is shown
// again in the order sent (sentAsIs), as in the form.
func summarizeName(name string) string {
	q := strconv.Quote(clean(name, maxToolRunes))
	return q + sentAsIs(q)
}

// DeclaresURLElicitation reports whether a request's clientCapabilities object declares URL
// elicitation: an elicitation object with a "url" member that is an object.
func DeclaresURLElicitation(clientCapabilities json.RawMessage) bool {
	var caps, elicitation map[string]json.RawMessage
	if json.Unmarshal(clientCapabilities, &caps) != nil ||
		!isObject(caps["elicitation"]) || json.Unmarshal(caps["elicitation"], &elicitation) != nil {
		return false
	}
	return isObject(elicitation["url"])
}

// EvaluateURL reads the client's answer to a URL-mode elicitation under key. "accept" only says
// the user came back from the page, so it maps to OutcomeApproved here and the caller must
// still find the page's recorded decision; "decline" and "cancel" end the call. Content, which
// URL mode never carries, is ignored. OutcomeMalformed comes with an error wrapping
// ErrMalformedResponse.
func EvaluateURL(inputResponses json.RawMessage, key string) (Outcome, error) {
	action, _, outcome, err := elicitAnswer(inputResponses, key)
	if action == "" {
		return outcome, err
	}
	switch action {
	case "accept":
		return OutcomeApproved, nil
	case "decline":
		return OutcomeDeclined, nil
	case "cancel":
		return OutcomeCancelled, nil
	}
	return OutcomeMalformed, malformed(AnswerUnknownAction, "unknown action")
}
