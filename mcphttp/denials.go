package mcphttp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash"
	"log/slog"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/mrtr"
)

// Structured authorization denials (SEP-2643, a draft; docs/denials.md), with
// server.draftErrors: [denials]. The gateway's refusals keep their decision; what changes is how
// they are told:
//
//   - a call waiting for the approval page (case 1: an InputRequiredResult with a URL-mode
//     elicitation) carries the envelope with remediation "available" and a url hint; a call
//     waiting for the user's confirmation in the client carries it without hint;
//   - a tools/call refused for good (the user did not approve, pin drift blocks it, its
//     arguments are too large for the page) is a failed tool call carrying "unavailable"
//     (case 4);
//   - a tools/call whose remedy the client cannot pursue (it declared no elicitation the
//     gateway could ask with; the page's issuer is another than the caller's) is a failed tool
//     call carrying "undisclosed", the remedy in its text (the draft's rule for a request that
//     declared neither URL elicitation nor tasks);
//   - a step-up stays the 403 insufficient_scope challenge, which the draft takes as the whole
//     denial (case 5);
//   - what the policy hides and what a tool set leaves out stay unknown names (-32602): an
//     envelope would tell the caller the name exists, which the draft's own rule on hints
//     (nothing that itself needs authorization to learn) forbids.
//
// Only a tools/call has a result that can say it failed; a prompt or resource refused the same
// way keeps its error.

// SEP-2643's _meta key, reason and remediations.
const (
	metaAuthorization       = "io.modelcontextprotocol/authorization"
	reasonInsufficient      = "insufficient_authorization"
	remediationAvailable    = "available"
	remediationUnavailable  = "unavailable"
	remediationUndisclosed  = "undisclosed"
	hintURL                 = "url"
	authorizationContextTTL = time.Hour
)

// denial is one authorization denial as the envelope tells it.
type denial struct {
	// remediation is remediationAvailable, remediationUnavailable or remediationUndisclosed.
	remediation string
	// hint is the remediationHints entry's type ("url"), "" for none.
	hint string
	// text is what a refused tools/call's failed result says: why, and any remedy.
	text string
}

// lacksElicitation says why a client cannot be asked through capability (era.CapElicitationForm
// or era.CapElicitationURL): it did not declare it or, when its revision has no way to declare
// it (URL mode before 2025-11-25, any elicitation in 2025-03-26), its revision lacks it, so
// there is nothing it could declare (the words the pre-2026 edge answers such a call with when
// the denials switch is off; docs/protocol.md §9.5). A function: request is at its method bound.
func lacksElicitation(x *request, capability string) string {
	what := "elicitation"
	if capability == era.CapElicitationURL {
		what = "URL elicitation"
	}
	if !(era.ClientCaps{ElicitationForm: true, ElicitationURL: true}).ForVersion(x.era.version).Has(capability) {
		if x.era.version == v20250326 {
			what = "elicitation" // that revision has no elicitation of either mode
		}
		return "it requires " + what + ", which MCP " + x.era.version + " (the version this client speaks) does not have"
	}
	return "it did not declare " + what
}

// denialError is err carrying the denial it stands for; the error is what a client gets with the
// switch off, and on for what is not a tools/call.
func denialError(e *Error, d denial) *Error {
	e.denial = &d
	return e
}

// asDenial answers a tools/call refused with an error carrying a denial as the draft says: a
// failed tool call with the envelope. Any other error, or another method, is returned as it is.
func (d *drafts) asDenial(x *request, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.denial == nil || x.in.req.Method != mrtr.MethodToolsCall {
		return err
	}
	return d.refuseCall(x, *e.denial)
}

// refuseCall answers the tools/call with a failed tool call whose text is d's, carrying the
// envelope when denials are on: the model reads why, the client what it may do, and nothing ran.
func (d *drafts) refuseCall(x *request, dn denial) error {
	// Marshalled as the gateway always wrote these results: the same bytes with denials off.
	text, _ := json.Marshal(dn.text)
	res := append(append([]byte(`{"content":[{"type":"text","text":`), text...), `}],"isError":true`...)
	if d.denials {
		res = append(res, `,"_meta":`...)
		res = d.appendEnvelope(x, res, dn)
	}
	res = append(res, '}')
	// A write that fails ends the response; serve sees it on the client sink.
	_ = x.answer(res, outcomeDenied)
	return nil
}

// withEnvelope is result (a JSON object without _meta: the gateway's own input_required) with
// the envelope of d in _meta, or result as it is when denials are off.
func (d *drafts) withEnvelope(x *request, result []byte, dn denial) []byte {
	if !d.denials || len(result) == 0 || result[len(result)-1] != '}' {
		return result
	}
	out := append(result[:len(result)-1:len(result)-1], `,"_meta":`...)
	out = d.appendEnvelope(x, out, dn)
	return append(out, '}')
}

// appendEnvelope appends the _meta object holding d's envelope, and logs the denial with its
// authorizationContextId: the value a caller quotes and the operator finds.
func (d *drafts) appendEnvelope(x *request, dst []byte, dn denial) []byte {
	dst = append(dst, `{"`+metaAuthorization+`":{"reason":"`+reasonInsufficient+`","remediation":"`...)
	dst = append(dst, dn.remediation...)
	dst = append(dst, '"')
	ctx := d.authorizationContext(x)
	if ctx != "" {
		dst = jsonrpc.AppendString(append(dst, `,"authorizationContextId":`...), ctx)
	}
	if dn.hint != "" && dn.remediation == remediationAvailable {
		dst = append(dst, `,"remediationHints":[{"type":"`...)
		dst = append(append(dst, dn.hint...), `"}]`...)
	}
	d.log.LogAttrs(x.ctx, slog.LevelInfo, "authorization denial",
		slog.String("request_id", x.requestID), slog.String("subject", x.subject()),
		slog.String("upstream", x.route.upstream), slog.String("name", logName(x)),
		slog.String("remediation", dn.remediation), slog.String("authz_ctx", ctx))
	return append(dst, "}}"...)
}

// The authorizationContextId. The draft makes it a correlation handle only: the client echoes
// it on its retry, the server must neither refuse a retry for a missing or unknown one nor
// treat it as authorization, and every retry is evaluated afresh. The gateway reads it back for
// its log only, so that a retry is tied to the denial before it; for that the handle is sealed
// (authenticated encryption under the gateway's keys, as requestState): it opens only on a
// replica of this gateway, within an hour, for the caller, method, name and arguments it was
// minted for. A forged, replayed or misdirected handle is ignored, never logged as given. It
// holds no readable operation, resource, policy or user (the draft's SHOULD): what is sealed is
// its expiry and a digest of that binding.

// contextVersion prefixes the sealed handle's plaintext.
const contextVersion = 1

// authorizationContext mints the handle of a denial of this request; "" without keys.
func (d *drafts) authorizationContext(x *request) string {
	if d.contexts == nil {
		return ""
	}
	var p [1 + 8 + 16]byte
	p[0] = contextVersion
	binary.BigEndian.PutUint64(p[1:9], uint64(d.now().Add(authorizationContextTTL).Unix()))
	b := contextBinding(x)
	copy(p[9:], b[:])
	tok, err := d.contexts.Seal(p[:])
	if err != nil {
		return ""
	}
	return tok
}

// contextBinding is the digest of what a handle is for: the caller, the method, the name and
// the arguments of the call, as the client sent them. Not what an interceptor's mutation or a
// guardrail's redaction made of them, nor the name a mutation routed the call to: the retry
// that echoes the handle sends the client's call again, and is bound (stage authorize) before
// either changes it.
//
// The caller is its issuer and subject, not its key (callerkey.Of): the key is not a field that
// can be told from what follows it (a subject may hold any character), and a handle minted by a
// replica of the previous release must still be recognised by this one.
func contextBinding(x *request) [16]byte {
	h := sha256.New()
	if p := x.caller.principal; p != nil {
		writeBound(h, p.Issuer)
		writeBound(h, p.Subject)
	}
	writeBound(h, x.in.req.Method)
	if p := x.in.clientParams(); p != nil {
		writeBound(h, p.Name)
		writeBound(h, p.URI)
		h.Write(p.Ref)
		if args, err := mrtr.Digest(p.Arguments); err == nil {
			h.Write(args[:])
		}
	}
	var out [16]byte
	copy(out[:], h.Sum(nil))
	return out
}

// writeBound writes one field of a binding to h so that no two sequences of fields write the
// same bytes. A field as every value is in practice (no NUL, not starting with 0x01) is written
// as the previous release wrote every field, followed by NUL, so handles it minted are still
// recognised during a rolling update. Any other (a subject or name holding NUL, which JSON
// allows) would make "a" NUL "b" one field or two, and so two callers' or two calls' bindings
// one: it is written as 0x01, its length in 8 bytes and its bytes, which no field of the first
// form starts with.
func writeBound(h hash.Hash, field string) {
	if !strings.Contains(field, "\x00") && !strings.HasPrefix(field, "\x01") {
		h.Write([]byte(field + "\x00"))
		return
	}
	var n [9]byte
	n[0] = 0x01
	binary.BigEndian.PutUint64(n[1:], uint64(len(field)))
	h.Write(n[:])
	h.Write([]byte(field))
}

// correlate reads the handle a retry echoes (denials on) and logs that the retry follows the
// denial it names, when the handle is the gateway's own, unexpired, for this caller and call.
// Whatever it holds, the request goes on as any other: the handle decides nothing.
func (d *drafts) correlate(x *request) {
	raw := x.in.meta.AuthorizationContextID
	var tok string
	if d.contexts == nil || json.Unmarshal(raw, &tok) != nil || len(tok) > d.contexts.MaxTokenBytes() {
		d.logCorrelation(x, "", false)
		return
	}
	p, err := d.contexts.Open(tok)
	b := contextBinding(x)
	ok := err == nil && len(p) == 1+8+16 && p[0] == contextVersion &&
		d.now().Unix() <= int64(binary.BigEndian.Uint64(p[1:9])) && string(p[9:]) == string(b[:])
	if !ok {
		tok = ""
	}
	d.logCorrelation(x, tok, ok)
}

func (d *drafts) logCorrelation(x *request, ctx string, verified bool) {
	d.log.LogAttrs(x.ctx, slog.LevelInfo, "authorization context echoed",
		slog.String("request_id", x.requestID), slog.String("subject", x.subject()),
		slog.String("name", logName(x)), slog.Bool("verified", verified), slog.String("authz_ctx", ctx))
}
