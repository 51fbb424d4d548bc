package mrtr

import (
	"errors"
	"fmt"
)

// Sentinel errors.
var (
	// ErrInvalidState is matched (errors.Is) by every rejection of a
	// requestState. The client must see only one generic -32602 message;
	// Reason(err) gives the closed-set reason for metrics and logs.
	ErrInvalidState = errors.New("mrtr: invalid requestState")
	// ErrStoreUnavailable means the single-use store failed. The gateway must
	// fail closed with a retryable error rather than forward the call.
	ErrStoreUnavailable = errors.New("mrtr: single-use store unavailable")
	// ErrInvalidArguments means arguments are not one valid JSON value
	// (invalid UTF-8, duplicate object keys, too deep, trailing data).
	ErrInvalidArguments = errors.New("mrtr: invalid arguments JSON")
	// ErrInvalidConfig wraps every problem reported by Config.Validate.
	ErrInvalidConfig = errors.New("mrtr: invalid config")
	// ErrUpstreamResult means a backend's input_required result could not be
	// rewritten (not an object, duplicate or non-string requestState).
	ErrUpstreamResult = errors.New("mrtr: malformed upstream input_required result")
	// ErrInvalidParams means retry params could not be rewritten.
	ErrInvalidParams = errors.New("mrtr: malformed request params")
	// ErrUnsealable means a State cannot be sealed (unknown kind or method,
	// or the token would exceed the size limit).
	ErrUnsealable = errors.New("mrtr: state cannot be sealed")
	// ErrBindingTooLarge, with ErrUnsealable, means the state is too large to seal whatever a
	// backend's own state holds: what it binds (the caller, the backend and the name, which for
	// a resources/read is the client's resource URI) alone is more than a requestState may
	// carry (the sealer's maximum token size).
	ErrBindingTooLarge = errors.New("mrtr: the state's binding is more than a requestState carries")
	// ErrMalformedResponse means an inputResponses entry is not a valid
	// elicitation result for a gateway confirmation.
	ErrMalformedResponse = errors.New("mrtr: malformed confirmation response")
)

// AnswerProblem is what is wrong with a client's answer to a gateway confirmation (an error
// wrapping ErrMalformedResponse), a closed set. Each edge words it for its own clients: a
// 2026-07-28 client sent inputResponses, a 2025 client only answered elicitation/create.
type AnswerProblem uint8

// Answer problems. The zero value is no problem (an error that is not a malformed answer).
const (
	// AnswerUnreadable: inputResponses is not one JSON object (duplicate keys, not an object).
	AnswerUnreadable AnswerProblem = iota + 1
	// AnswerNotResult: the answer is not an object with a non-empty string action.
	AnswerNotResult
	// AnswerUnknownAction: its action is none of accept, decline and cancel.
	AnswerUnknownAction
	// AnswerNoContent: it accepts without a content object.
	AnswerNoContent
	// AnswerNoApprove: it accepts with content whose ApproveField is not a boolean.
	AnswerNoApprove
)

// answerError is a malformed answer: it matches ErrMalformedResponse, and its text is the one
// a 2026-07-28 client is given ("mrtr: malformed confirmation response: <detail>").
type answerError struct {
	problem AnswerProblem
	detail  string
	cause   error
}

func malformed(problem AnswerProblem, detail string) error {
	return &answerError{problem: problem, detail: detail}
}

func (e *answerError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%v: %v", ErrMalformedResponse, e.cause)
	}
	return fmt.Sprintf("%v: %s", ErrMalformedResponse, e.detail)
}

func (e *answerError) Is(target error) bool { return target == ErrMalformedResponse }

func (e *answerError) Unwrap() error { return e.cause }

// Problem returns what is wrong with the answer err refuses, or 0 when err is not a malformed
// answer.
func Problem(err error) AnswerProblem {
	var ae *answerError
	if errors.As(err, &ae) {
		return ae.problem
	}
	return 0
}

// ClientMessage is the one -32602 message a client gets for any rejected
// requestState; the reason goes only to metrics and logs.
const ClientMessage = "Invalid requestState"

// Rejection reasons, a closed set suitable as a metric label.
const (
	ReasonMalformed  = "malformed"
	ReasonOversized  = "oversized"
	ReasonUnknownKey = "unknown_key"
	ReasonTampered   = "tampered"
	ReasonExpired    = "expired"
	ReasonPrincipal  = "principal"
	ReasonTarget     = "target"
	ReasonArguments  = "arguments"
	ReasonReplayed   = "replayed"
)

// Reasons returns the closed set of rejection reasons, for pre-registering
// metric label values.
func Reasons() []string {
	return []string{
		ReasonMalformed, ReasonOversized, ReasonUnknownKey, ReasonTampered,
		ReasonExpired, ReasonPrincipal, ReasonTarget, ReasonArguments, ReasonReplayed,
	}
}

// stateError is a rejection with its reason; it matches ErrInvalidState and
// unwraps to the underlying cause (a seal sentinel, for instance).
type stateError struct {
	reason string
	cause  error
}

func reject(reason string, cause error) error {
	return &stateError{reason: reason, cause: cause}
}

func (e *stateError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%v (%s): %v", ErrInvalidState, e.reason, e.cause)
	}
	return fmt.Sprintf("%v (%s)", ErrInvalidState, e.reason)
}

func (e *stateError) Is(target error) bool { return target == ErrInvalidState }

func (e *stateError) Unwrap() error { return e.cause }

// Reason returns the rejection reason carried by err, one of the Reason*
// constants, or "" when err is not an ErrInvalidState rejection.
func Reason(err error) string {
	var se *stateError
	if errors.As(err, &se) {
		return se.reason
	}
	return ""
}
