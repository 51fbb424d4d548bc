// Package guardrails is the gateway's built-in content guardrails (docs/guardrails.md): schema
// validation of tool arguments and structured results, and detectors of secrets, personal data
// and injection markers in what flows through, with an action per rule and detector (log,
// flag, redact, block).
//
// It takes JSON text and returns reports; it knows nothing of HTTP or of the pipeline. The
// gateway's pipeline (mcphttp) runs it at two stages: on a request's arguments after
// authorization and pinning, and on a backend's answer, notifications included, before the
// client sees it. A configuration without rules compiles to a nil Engine, which callers test
// once: switched off, the guardrails cost nothing.
//
// Everything reported names the detector, the rule and where (a JSON pointer), never the text
// that matched.
package guardrails
