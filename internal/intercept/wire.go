package intercept

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The wire of SEP-2624 as the gateway speaks it: the interceptor/invoke params it sends and the
// ValidationResult or MutationResult it accepts. The shapes follow PR #2624's head (hooks,
// mode, failOpen, the result objects) with the chain-free rewrite's rules where it is stricter:
// the echo of interceptor, type and phase (M1), a modified:false that changes the payload is
// malformed, a missing or unknown severity on valid:false is an error, and the request-phase
// payload is {method, params} without the JSON-RPC framing.

// MethodInvoke is the JSON-RPC method of one invocation (singular, as both texts keep it).
const MethodInvoke = "interceptor/invoke"

// ExtensionID is the extension identifier an Interceptor Server declares in its capabilities.
const ExtensionID = "io.modelcontextprotocol/interceptors"

// gatewayOwned are the members of a request's params the gateway owns rather than the call:
// the _meta it reads (the protocol's members, jsonrpc.ReservedMetaKey) and the MRTR round
// trip's sealed state and answers. A mutation may not change them, and the client's are put
// back into a mutated request (a mutation could otherwise forge a confirmation's answer). The
// client's own members of _meta are the call's: a mutation may change them (MutatedParams).
var gatewayOwned = []string{metaKey, "requestState", "inputResponses"}

// metaKey is the params member holding the request's _meta.
const metaKey = "_meta"

// notShown are the owned members left out of the payload an interceptor sees: the sealed state
// only. The _meta is shown as the client sent it, since the backend receives it so: the
// client's own members can change what the backend does (a vendor's "dryRun"), and may carry
// what a check looks for. The answers (inputResponses) are shown: on a retry they carry what a
// person typed into a backend's form, for the backend, and an interceptor that checks what the
// backend receives must see it. A mutation must give them back unchanged.
var notShown = []string{"requestState"}

// shownOwned is the owned member an interceptor sees and may not change.
const shownOwned = "inputResponses"

// invokeContext is the invocation's context: who calls (as far as the operator allows), the
// trace, and the time.
type invokeContext struct {
	Principal principal `json:"principal"`
	TraceID   string    `json:"traceId,omitempty"`
	SpanID    string    `json:"spanId,omitempty"`
	// Timestamp is informational: the SEP forbids an interceptor to authorize on it.
	Timestamp string `json:"timestamp"`
}

type principal struct {
	Type   string         `json:"type"`
	ID     string         `json:"id,omitempty"`
	Claims map[string]any `json:"claims,omitempty"`
}

// Principal types of the invocation context.
const (
	principalUser      = "user"
	principalAnonymous = "anonymous"
)

// appendParams appends interceptor/invoke's params object: meta is the MCP _meta to add (nil
// for a webhook). The payload is appended as it is, never re-encoded.
func appendParams(dst []byte, name, event, phase string, payload, config []byte, timeout time.Duration,
	ctx *invokeContext, meta []byte) []byte {
	dst = append(dst, `{"name":`...)
	dst = jsonrpc.AppendString(dst, name)
	dst = append(dst, `,"event":`...)
	dst = jsonrpc.AppendString(dst, event)
	dst = append(dst, `,"phase":`...)
	dst = jsonrpc.AppendString(dst, phase)
	dst = append(dst, `,"timeoutMs":`...)
	dst = strconv.AppendInt(dst, max(timeout.Milliseconds(), 1), 10)
	if config != nil {
		dst = append(dst, `,"config":`...)
		dst = append(dst, config...)
	}
	c, _ := json.Marshal(ctx) // strings and claims decoded from a verified token: always encodable
	dst = append(dst, `,"context":`...)
	dst = append(dst, c...)
	if meta != nil {
		dst = append(dst, `,"_meta":`...)
		dst = append(dst, meta...)
	}
	dst = append(dst, `,"payload":`...)
	dst = append(dst, payload...)
	return append(dst, '}')
}

// RequestPayload is the request-phase payload of a call: {"method": method, "params": params}
// without the members an interceptor is not shown (notShown).
func RequestPayload(method string, params []byte) ([]byte, error) {
	out := make([]byte, 0, len(params)+len(method)+32)
	out = append(out, `{"method":`...)
	out = jsonrpc.AppendString(out, method)
	out = append(out, `,"params":`...)
	out, err := appendWithout(out, params, notShown)
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// MutatedParams is the params of a mutated request-phase payload with the gateway-owned
// members of the client's params (orig) put back. The payload passed the checks of a mutation
// (checkRequestMutation). A mutation that carries a _meta has its own members forwarded with
// the client's members the gateway reads (mutatedMeta); one without leaves the client's as
// it was.
func MutatedParams(payload, orig []byte) ([]byte, error) {
	var params []byte
	if err := jsonrpc.Members(payload, func(key, val []byte) error {
		if string(key) == "params" {
			params = val
		}
		return nil
	}); err != nil || params == nil {
		return nil, errors.New("intercept: a mutated request without params")
	}
	mutMeta := member(params, metaKey)
	var owned [][2][]byte
	if orig != nil {
		_ = jsonrpc.Members(orig, func(key, val []byte) error {
			if isOwned(key) && (mutMeta == nil || string(key) != metaKey) {
				owned = append(owned, [2][]byte{key, val})
			}
			return nil
		})
	}
	if mutMeta != nil {
		owned = append(owned, [2][]byte{[]byte(metaKey), mutatedMeta(mutMeta, member(orig, metaKey))})
	}
	// The answers a mutation gave back (unchanged: checkRequestMutation) are the client's own,
	// put back below with the rest.
	kept, err := appendWithout(make([]byte, 0, len(params)+len(orig)), params, gatewayOwned)
	if err != nil {
		return nil, err
	}
	out := kept[:len(kept)-1] // without its closing brace
	empty := isEmptyObject(kept)
	for _, kv := range owned {
		if !empty {
			out = append(out, ',')
		}
		empty = false
		out = jsonrpc.AppendString(out, string(kv[0]))
		out = append(out, ':')
		out = append(out, kv[1]...)
	}
	return append(out, '}'), nil
}

// shownLeft are the members of a request's params a mutation may leave out, which the call is
// then forwarded with as the client sent them (MutatedParams): its _meta and a retry's answers.
var shownLeft = [...]string{metaKey, shownOwned}

// withShown returns a request mutation (a payload that passed checkRequestMutation) with the
// members of shownLeft it leaves out put back as the mutator was shown them (shown, the payload
// sent to it): the call as it will be forwarded, which is what the interceptors after the
// mutation are shown (a validator must see the client's _meta the backend receives, whether a
// mutator before it gave it back or not), and what the next mutation leaving them out keeps.
// Forwarding it forwards what MutatedParams would make of the mutation, but for a change an
// earlier mutator of the pass made to the client's own _meta members, which is kept.
func withShown(mutated, shown []byte) []byte {
	mp, sp := member(mutated, "params"), member(shown, "params")
	if mp == nil || sp == nil {
		return mutated
	}
	var out []byte
	for _, k := range shownLeft {
		v := member(sp, k)
		if v == nil || member(mp, k) != nil {
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(mutated)+len(sp)+32), `{"method":`...)
			out = append(out, member(mutated, "method")...)
			out = append(out, `,"params":`...)
			body := bytes.TrimSpace(mp)
			out = append(out, body[:len(body)-1]...) // without its closing brace
			if isEmptyObject(body) {
				out = bytes.TrimRight(out, " \t\r\n")
			} else {
				out = append(out, ',')
			}
		} else {
			out = append(out, ',')
		}
		out = jsonrpc.AppendString(out, k)
		out = append(append(out, ':'), v...)
	}
	if out == nil {
		return mutated
	}
	return append(out, "}}"...)
}

// mutatedMeta is the _meta a mutated request is forwarded with: the members of the client's
// (orig, nil for none) that the gateway reads, as the client sent them, and the mutation's own
// members (mut).
func mutatedMeta(mut, orig []byte) []byte {
	out := []byte{'{'}
	add := func(key, val []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsonrpc.AppendString(out, string(key))
		out = append(append(out, ':'), val...)
	}
	if orig != nil {
		_ = jsonrpc.Members(orig, func(key, val []byte) error {
			if jsonrpc.ReservedMetaKey(key) {
				add(key, val)
			}
			return nil
		})
	}
	_ = jsonrpc.Members(mut, func(key, val []byte) error {
		if !jsonrpc.ReservedMetaKey(key) {
			add(key, val)
		}
		return nil
	})
	return append(out, '}')
}

func isOwned(key []byte) bool {
	for _, k := range gatewayOwned {
		if string(key) == k {
			return true
		}
	}
	return false
}

func isEmptyObject(obj []byte) bool {
	return len(bytes.TrimSpace(obj[1:len(obj)-1])) == 0
}

// appendWithout appends the object obj without the members named in drop.
func appendWithout(dst, obj []byte, drop []string) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	err := jsonrpc.Members(obj, func(key, val []byte) error {
		for _, d := range drop {
			if string(key) == d {
				return nil
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = jsonrpc.AppendString(dst, string(key))
		dst = append(dst, ':')
		dst = append(dst, val...)
		return nil
	})
	return append(dst, '}'), err
}

// answer is an interceptor's result as the gateway reads it.
type answer struct {
	interceptor, typ, phase string
	valid, hasValid         bool
	severity                string
	modified, hasModified   bool
	payload                 []byte
	messages                []byte // the raw messages array, read only for a refusal shown to the caller
}

// errMalformed is a result the SEP says to treat as an invocation failure.
var errMalformed = errors.New("malformed result")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errMalformed}, args...)...)
}

// readAnswer reads a result object strictly: well-formed JSON without duplicate keys, member
// names compared exactly (a decoder that folds case would read "VALID" as valid).
func readAnswer(raw []byte, lim jsonrpc.Limits) (*answer, error) {
	if err := jsonrpc.Scan(raw, lim); err != nil {
		return nil, malformed("%s", failureText(err))
	}
	a := &answer{}
	err := jsonrpc.Members(raw, func(key, val []byte) error {
		var err error
		switch string(key) {
		case "interceptor":
			err = json.Unmarshal(val, &a.interceptor)
		case "type":
			err = json.Unmarshal(val, &a.typ)
		case "phase":
			err = json.Unmarshal(val, &a.phase)
		case "valid":
			a.hasValid = true
			err = json.Unmarshal(val, &a.valid)
		case "severity":
			err = json.Unmarshal(val, &a.severity)
		case "modified":
			a.hasModified = true
			err = json.Unmarshal(val, &a.modified)
		case "payload":
			a.payload = val
		case "messages":
			a.messages = val
		}
		if err != nil {
			return malformed("member %q has the wrong type", key)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, errMalformed) {
			return nil, err
		}
		return nil, malformed("not an object")
	}
	return a, nil
}

// blocks reports whether a validation result refuses: valid:false with severity error, missing
// or not one of the three the SEP defines (an unknown severity routes fail-secure).
func (a *answer) blocks() bool {
	if a.valid {
		return false
	}
	return a.severity != "info" && a.severity != "warn"
}

// maxReasonBytes bounds the interceptor's own words put into a refusal.
const maxReasonBytes = 512

// reasons returns the text of the result's error messages (all of them when none is marked an
// error), joined and bounded, with control characters dropped: what a refusal that shows its
// reason says.
func (a *answer) reasons() string {
	var ms []struct {
		Message  string `json:"message"`
		Severity string `json:"severity"`
	}
	if a.messages == nil || json.Unmarshal(a.messages, &ms) != nil {
		return ""
	}
	var b []byte
	for _, m := range ms {
		if m.Severity != "" && m.Severity != "error" {
			continue
		}
		if len(b) > 0 {
			b = append(b, "; "...)
		}
		b = append(b, m.Message...)
	}
	return printable(b, maxReasonBytes)
}

// printable keeps b's printable characters, at most limit bytes, on whole characters.
func printable(b []byte, limit int) string {
	out := make([]rune, 0, min(len(b), limit))
	n := 0
	for _, r := range string(b) {
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			// Controls, and the invisible and bidi format characters that could hide text
			// from a reader of the refusal.
			continue
		}
		if n += len(string(r)); n > limit {
			return string(out) + "…"
		}
		out = append(out, r)
	}
	return string(out)
}
