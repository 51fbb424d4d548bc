package mrtr

import (
	"bytes"
	"encoding/json"
	"fmt"
)

const (
	// ConfirmKey is the inputRequests key of a gateway confirmation. It is
	// namespaced so it cannot collide with a backend's own keys.
	ConfirmKey = "io.mcp-gateway/confirm"
	// ApproveField is the boolean property the user sets to approve.
	ApproveField = "approve"
	// ResultTypeInputRequired is the resultType of an InputRequiredResult.
	ResultTypeInputRequired = "input_required"
	// MethodElicitationCreate is the inputRequests method for elicitation.
	MethodElicitationCreate = "elicitation/create"
	// ElicitationModeForm is the form elicitation mode.
	ElicitationModeForm = "form"
	// RequiredElicitationCapability is the data.requiredCapabilities value of
	// a -32021 error when the client did not declare form elicitation
	// (spec §1: `{}` means form).
	RequiredElicitationCapability = `{"elicitation":{}}`
)

// InputRequiredResult is the result returned to ask the client for input
// (spec §3). The gateway adds _meta (serverInfo) itself.
type InputRequiredResult struct {
	// ResultType is always ResultTypeInputRequired.
	ResultType string `json:"resultType"`
	// InputRequests maps server-chosen keys to requests.
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	// RequestState is the sealed state the client echoes on its retry.
	RequestState string `json:"requestState,omitempty"`
}

// InputRequest is one entry of inputRequests: a method and params without
// jsonrpc or id.
type InputRequest struct {
	// Method is MethodElicitationCreate for confirmations.
	Method string `json:"method"`
	// Params are the elicitation parameters.
	Params ElicitParams `json:"params"`
}

// ElicitParams are the params of a form elicitation/create request.
type ElicitParams struct {
	// Mode is ElicitationModeForm.
	Mode string `json:"mode"`
	// Message is shown to the user.
	Message string `json:"message"`
	// RequestedSchema describes the form.
	RequestedSchema RequestedSchema `json:"requestedSchema"`
}

// RequestedSchema is the flat object schema of a form elicitation.
type RequestedSchema struct {
	// Type is always "object".
	Type string `json:"type"`
	// Properties maps field names to their schemas.
	Properties map[string]PropertySchema `json:"properties"`
	// Required lists mandatory fields.
	Required []string `json:"required,omitempty"`
}

// PropertySchema is a primitive field of a form.
type PropertySchema struct {
	// Type is the JSON Schema type, "boolean" for ApproveField.
	Type string `json:"type"`
	// Title is a short label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
}

// ConfirmationResult returns the input_required result asking the user to
// approve a call of tool (the client-facing name) with args; forwarded holds the
// other params members the backend receives and the state binds (nil when none:
// ConfirmationRequest); state is the sealed KindConfirm token for the same call.
func ConfirmationResult(tool string, args, forwarded json.RawMessage, state string) InputRequiredResult {
	return InputRequiredResult{
		ResultType:    ResultTypeInputRequired,
		InputRequests: map[string]InputRequest{ConfirmKey: ConfirmationRequest(tool, args, forwarded)},
		RequestState:  state,
	}
}

// ConfirmationRequest returns the form elicitation asking the user to
// approve a call of tool with args. The message names the tool and
// summarises the arguments on bounded, single-line, control-free text, and
// then forwarded, when not nil: the members of the call's params besides its
// name and arguments that reach the backend (the client's own _meta members,
// members the gateway does not know) as one object, which the confirmation
// binds too, so the person is told of them.
func ConfirmationRequest(tool string, args, forwarded json.RawMessage) InputRequest {
	return InputRequest{
		Method: MethodElicitationCreate,
		Params: ElicitParams{
			Mode:    ElicitationModeForm,
			Message: confirmMessage(tool, args, forwarded),
			RequestedSchema: RequestedSchema{
				Type: "object",
				Properties: map[string]PropertySchema{ApproveField: {
					Type:        "boolean",
					Title:       "Approve",
					Description: "Allow this tool call to run.",
				}},
				Required: []string{ApproveField},
			},
		},
	}
}

// Outcome is the user's answer to a confirmation.
type Outcome int

const (
	// OutcomeMissing means inputResponses has no answer for the key; ask again.
	OutcomeMissing Outcome = iota
	// OutcomeApproved means action "accept" with approve=true.
	OutcomeApproved
	// OutcomeDeclined means action "decline", or "accept" with approve=false.
	OutcomeDeclined
	// OutcomeCancelled means action "cancel".
	OutcomeCancelled
	// OutcomeMalformed means the answer is not a valid elicitation result.
	OutcomeMalformed
)

// String returns a lower-case name usable as a metric label.
func (o Outcome) String() string {
	switch o {
	case OutcomeMissing:
		return "missing"
	case OutcomeApproved:
		return "approved"
	case OutcomeDeclined:
		return "declined"
	case OutcomeCancelled:
		return "cancelled"
	}
	return "malformed"
}

// Evaluate reads the answer under key in a retry's inputResponses object.
// OutcomeMalformed comes with an error wrapping ErrMalformedResponse; every
// other outcome has a nil error. Only OutcomeApproved may be forwarded.
func Evaluate(inputResponses json.RawMessage, key string) (Outcome, error) {
	action, res, outcome, err := elicitAnswer(inputResponses, key)
	if action == "" {
		return outcome, err
	}
	switch action {
	case "decline":
		return OutcomeDeclined, nil
	case "cancel":
		return OutcomeCancelled, nil
	case "accept":
		return evaluateAccept(res["content"])
	}
	return OutcomeMalformed, malformed(AnswerUnknownAction, "unknown action")
}

// elicitAnswer reads the elicitation result under key in a retry's inputResponses: its action
// and members, or (with action "") OutcomeMissing when there is none and OutcomeMalformed, with
// an error wrapping ErrMalformedResponse, when it cannot be read.
func elicitAnswer(inputResponses json.RawMessage, key string) (action string, res map[string]json.RawMessage, _ Outcome, _ error) {
	trimmed := bytes.TrimSpace(inputResponses)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return "", nil, OutcomeMissing, nil
	}
	// Duplicate keys could hide a decline behind an accept; reject them.
	if _, err := canonical(trimmed); err != nil {
		return "", nil, OutcomeMalformed, &answerError{problem: AnswerUnreadable, cause: err}
	}
	var responses map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &responses); err != nil {
		return "", nil, OutcomeMalformed, malformed(AnswerUnreadable, "inputResponses is not an object")
	}
	raw, ok := responses[key]
	if !ok {
		return "", nil, OutcomeMissing, nil
	}
	// Maps, not structs: encoding/json matches struct fields case-insensitively.
	if json.Unmarshal(raw, &res) != nil || json.Unmarshal(res["action"], &action) != nil || action == "" {
		return "", nil, OutcomeMalformed, malformed(AnswerNotResult, "not an elicitation result")
	}
	return action, res, OutcomeMissing, nil
}

func evaluateAccept(rawContent json.RawMessage) (Outcome, error) {
	var content map[string]json.RawMessage
	if json.Unmarshal(rawContent, &content) != nil {
		return OutcomeMalformed, malformed(AnswerNoContent, "accept without content")
	}
	switch string(bytes.TrimSpace(content[ApproveField])) {
	case "true":
		return OutcomeApproved, nil
	case "false":
		return OutcomeDeclined, nil
	}
	return OutcomeMalformed, malformed(AnswerNoApprove, fmt.Sprintf("accept without a boolean %q", ApproveField))
}

// DeclaresFormElicitation reports whether a request's clientCapabilities
// object declares form elicitation: "elicitation": {} (which means form,
// spec §1) or an elicitation object with a "form" member.
func DeclaresFormElicitation(clientCapabilities json.RawMessage) bool {
	var caps, elicitation map[string]json.RawMessage
	if json.Unmarshal(clientCapabilities, &caps) != nil ||
		!isObject(caps["elicitation"]) || json.Unmarshal(caps["elicitation"], &elicitation) != nil {
		return false
	}
	if len(elicitation) == 0 {
		return true
	}
	return isObject(elicitation["form"])
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}
