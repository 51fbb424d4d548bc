package authz

import (
	"encoding/json"
	"fmt"
)

// ConfirmMode says how a rule's tool calls are confirmed. In configuration it is written
// `confirm: true` (the form the client shows), `confirm: url` (the gateway's own approval page,
// which a client cannot answer on the user's behalf) or `confirm: false`.
type ConfirmMode string

const (
	// ConfirmNone asks for no confirmation. It is the zero value.
	ConfirmNone ConfirmMode = ""
	// ConfirmForm asks through a form elicitation that the client renders and answers.
	ConfirmForm ConfirmMode = "form"
	// ConfirmURL asks through a URL elicitation: the user approves on the gateway's page,
	// signed in with the gateway's issuer.
	ConfirmURL ConfirmMode = "url"
)

// Enabled reports whether the mode asks for any confirmation.
func (m ConfirmMode) Enabled() bool { return m != ConfirmNone }

// UnmarshalText reads true, false, "form" or "url"; anything else is an error, so a typo cannot
// silently turn a confirmation off.
func (m *ConfirmMode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "true", "form":
		*m = ConfirmForm
	case "false", "":
		*m = ConfirmNone
	case "url":
		*m = ConfirmURL
	default:
		return fmt.Errorf("authz: confirm: %q is not true, false, form or url", b)
	}
	return nil
}

// UnmarshalJSON accepts a JSON boolean or one of the strings UnmarshalText accepts, for
// configuration converted from YAML to JSON.
func (m *ConfirmMode) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("authz: confirm: %w", err)
	}
	switch v := v.(type) {
	case bool:
		return m.UnmarshalText([]byte(fmt.Sprint(v)))
	case string:
		return m.UnmarshalText([]byte(v))
	case nil:
		*m = ConfirmNone
		return nil
	}
	return fmt.Errorf("authz: confirm: %s is not a boolean or a string", b)
}

// Confirm fallbacks a `confirm: url` rule may name in confirmFallback.
const (
	// FallbackClientForm lets a client that did not declare URL elicitation confirm through a
	// form it renders and answers itself. That is a weaker confirmation than the page: the
	// client can answer it without the user (docs/approval.md), so the operator must name it
	// for what it is.
	FallbackClientForm = "clientForm"
	// fallbackFormRenamed is the fallback's former name, refused with a message saying why.
	fallbackFormRenamed = "form"
)
