package mcphttp

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Tool-definition pinning at stage pin (docs/pinning.md): once a tools/call or prompts/get is
// authorized (or a resources/read, judged on the resource templates its URI could come from),
// the item's definition as its backend lists it now (the list this replica holds
// for the caller, refetched after a list_changed or its expiry) is judged against its pin. A
// blocked item is refused here and the backend receives nothing; a confirmed one goes through
// the gateway's confirmation (stage mrtr-in) with the change named; a logged one only left its audit
// line when the list was read. The verdicts were computed once per backend list: a call costs a
// map lookup.

// checkPin judges the routed item's pin verdict.
func (x *request) checkPin(target upstreams.Target) error {
	s := x.s
	if !s.backends.PinsEnabled(target.Upstream) && !s.backends.PinGuard().JudgesShadows(target.Upstream) {
		return nil
	}
	m, complete, err := x.pinMethod()
	if m == "" || err != nil {
		return err
	}
	q := &upstreams.PinQuery{
		ProtocolVersion: x.in.meta.ProtocolVersion,
		Header:          x.trace().headers(),
		CacheKey:        x.subject(),
		SubjectToken:    x.subjectToken(target.Upstream),
		SubjectKey:      x.caller.keyOf(x.subjectToken(target.Upstream)),
	}
	var v pins.Verdict
	x.route.pinItem = x.route.name
	if m == upstreams.MethodResourcesRead {
		// A URI is judged on the resource templates it could come from: the drifted item
		// the user is told about is the template, not the URI.
		var tmpl string
		v, tmpl, err = s.backends.TemplatePinVerdict(x.ctx, q, target)
		if tmpl != "" {
			x.route.pinItem = s.backends.Namespaced(upstreams.KindResource, upstreams.Target{Upstream: target.Upstream, Name: tmpl})
		}
		if !complete {
			x.route.uiReadPin = s.backends.UIReadPin(target.Upstream, target.Name)
		}
	} else {
		v, err = s.backends.PinVerdict(x.ctx, q, m, target)
	}
	if errors.Is(err, upstreams.ErrUnknownName) {
		return errUnknownName(kindNoun(x.route.kind)) // not listed (listed.go)
	}
	if err != nil {
		return err
	}
	if v.Unverified() {
		// Its pin cannot be read now (the shared store does not answer, or holds pins that do
		// not open): refused, never forwarded unverified, and retryable.
		x.logPin("pin unverified: call refused", v)
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUnavailable, "Pin store unavailable; retry later"))
		e.Header = http.Header{"Retry-After": {"1"}}
		e.Outcome = outcomeUnavailable
		return e
	}
	x.route.pinClasses = v.Classes
	confirm := !complete && (v.Confirm() || (s.cfg.ConfirmDestructiveTools && v.Classes.Has(pins.ClassDestructiveHintCleared)))
	switch {
	case v.Blocked():
		x.logPin("pin drift: call refused", v)
		e := pinDriftError(x.route.pinItem, v, shadowed(x, v))
		// Final for the caller: only the operator's review of the change lifts it.
		return denialError(e, denial{remediation: remediationUnavailable, text: e.RPC.Message})
	case confirm:
		if s.confirm.codec == nil {
			// Fail closed: a call that needs confirmation is never forwarded unconfirmed.
			return errors.New("pin drift needs confirmation but no requestState codec is configured")
		}
		x.route.pinDrift, x.route.pinCurrent = v.Classes, v.Current
	}
	return nil
}

// pinMethod returns the method whose pin verdict governs the request: tools/call, prompts/get
// and resources/read their own; completion/complete that of the prompt or resource template
// its ref names, for blocking only (complete is true): a completion is typed interactively,
// with no one to confirm it. "" for every other method.
func (x *request) pinMethod() (method string, complete bool, err error) {
	switch m := x.in.req.Method; m {
	case upstreams.MethodToolsCall, upstreams.MethodPromptsGet, upstreams.MethodResourcesRead:
		return m, false, nil
	case upstreams.MethodComplete:
		kind, _, err := x.completionRef()
		if kind == upstreams.KindPrompt {
			return upstreams.MethodPromptsGet, true, err
		}
		return upstreams.MethodResourcesRead, true, err
	}
	return "", false, nil
}

// pinDriftError is the answer to a call of a blocked item (name: the tool, the prompt, or the
// resource template a read URI could come from): 403 with -32013, the gateway's code for a
// call policy refuses (docs/protocol.md), and a message and data that name pin drift and its
// classes, so the user learns why and the operator what to review.
//
// A tool or prompt flagged as shadowing another backend's names that item (shadows, namespaced)
// in the message ("shadows:files__read") and in data.shadows.
func pinDriftError(name string, v pins.Verdict, shadows string) *Error {
	classes := v.Classes.Classes()
	names := make([]string, len(classes))
	shown := make([]string, len(classes))
	for i, c := range classes {
		names[i], shown[i] = string(c), string(c)
		if c == pins.ClassShadows && shadows != "" {
			shown[i] += ":" + shadows
		}
	}
	data := map[string]any{"reason": "pin-drift", "classes": names}
	if shadows != "" {
		data["shadows"] = shadows
	}
	e := jsonrpc.NewError(jsonrpc.CodeUnauthorized, "Refused: "+strconv.Quote(name)+
		" changed since it was pinned (pin drift: "+strings.Join(shown, ", ")+"); the gateway did not forward the call").
		WithData(data)
	return &Error{Status: http.StatusForbidden, RPC: e, Outcome: outcomeDenied}
}

// shadowed is the namespaced name of the tool, or prompt, v says the item shadows, "" when
// none, and "" too when x's caller could not reach that item on this endpoint (the tool set
// leaves it out, or the policy hides it): naming it would tell the caller of a clone that an
// item exists which an unknown-name refusal never reveals (errUnknownName). The refusal still
// says shadows. A function: request is at its bound of methods.
func shadowed(x *request, v pins.Verdict) string {
	if v.Shadows == nil {
		return ""
	}
	t := upstreams.Target{Upstream: v.Shadows.Backend, Name: v.Shadows.Key}
	kind := upstreams.KindTool
	if v.Shadows.Kind == pins.KindPrompt {
		kind = upstreams.KindPrompt
	}
	if !callableHere(x, kind)(t) {
		return ""
	}
	return x.s.backends.Namespaced(kind, t)
}

// pinNote puts the drift in front of a confirmation's message, when the confirmation is asked
// because of it: the user approves a tool that changed since it was pinned, knowing how.
func (x *request) pinNote(res *mrtr.InputRequiredResult) {
	if x.route.pinDrift.Empty() {
		return
	}
	req, ok := res.InputRequests[mrtr.ConfirmKey]
	if !ok {
		return
	}
	req.Params.Message = strconv.Quote(x.route.pinItem) + " changed since it was pinned (" +
		x.route.pinDrift.String() + "). " + req.Params.Message
	res.InputRequests[mrtr.ConfirmKey] = req
}

// logPin writes the decision log line for a call judged on its pin, at info like the other
// decisions (the audit line of the drift itself was written once, when the list was read): the
// classes, never the arguments.
func (x *request) logPin(what string, v pins.Verdict) {
	x.s.log.LogAttrs(x.ctx, slog.LevelInfo, what,
		slog.String("request_id", x.requestID), slog.String("subject", x.subject()),
		slog.String("upstream", x.route.upstream), slog.String("name", logName(x)),
		slog.String("classes", v.Classes.String()), slog.String("pinned", v.Pinned),
		slog.String("current", v.Current))
}

// pinReport is the admin listener's GET /pins: each pinned backend's state and every item
// whose current definition differs from its pin, with its classes, action and both
// fingerprints.
type pinReport struct {
	Backends []pinBackend       `json:"backends"`
	Drift    []pins.DriftRecord `json:"drift"`
}

type pinBackend struct {
	Name string `json:"name"`
	*pins.BackendState
}

// pinDrift serves GET /pins.
func (a *Admin) pinDrift(c echo.Context) error {
	g := a.deps.Backends.PinGuard()
	r := pinReport{Backends: []pinBackend{}, Drift: g.Drift()}
	for _, name := range a.deps.Backends.Upstreams() {
		if st := g.State(name); st != nil {
			r.Backends = append(r.Backends, pinBackend{Name: name, BackendState: st})
		}
	}
	return c.JSON(http.StatusOK, r)
}
