package mcphttp

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The built-in guardrails (docs/guardrails.md) at two places of the pipeline: stage guardrails
// checks a routed request's arguments once it is authorized, pinned and its headers bound, and
// the relay checks the backend's answer (and every notification relayed while it runs) before
// the client sees it. Both eras pass through here: the pre-2026 edge runs its clients' calls
// through the same stages and relay.
//
// A gateway without rules has no railer (Server.rails is nil), and a request no rule covers has
// no rails (request.rails is nil): the relay tests one pointer per message.

// railer is the guardrails' component: the compiled rules, their metrics and the decision log.
type railer struct {
	engine   *guardrails.Engine
	rec      *metrics.GuardrailRecorder
	log      *slog.Logger
	backends *upstreams.Registry
	now      func() time.Time
	// states are railStates of requests that ended, with their reports' buffers: a clean call
	// allocates nothing of its own.
	states sync.Pool
	// uriScanned, nil but in tests, is called with the backend's URI at every scan of a URI a
	// request names.
	uriScanned func(backendURI string)
}

// railState is what the guardrails keep of one request: the rule that covers it, and what the
// notifications relayed so far had (flagged findings the result names, a blocked one that
// withholds it).
type railState struct {
	rule  *guardrails.Rule
	notes []guardrails.Finding
	// notesMore counts the flagged and redacted findings of notifications not in notes, which
	// the annotation counts.
	notesMore int
	blocked   *guardrails.Finding
	// blockedIn names what blocked was found in, for the refusal: empty for a notification.
	blockedIn string
	failed    bool
	// nameFound: a detector found something in the URI the request names, which the log
	// lines leave out (they name the request by its upstream and id).
	nameFound bool
	// args and result are the reports of the request's checks of its arguments and of its
	// result, kept here to be reused (railer.states).
	args, result guardrails.Report
	// handles is the report of the _meta members the gateway reads itself, reused member by
	// member (paramsScan.handle).
	handles guardrails.Report
}

// state returns an empty railState for a request rule covers.
func (g *railer) state(rule *guardrails.Rule) *railState {
	st, _ := g.states.Get().(*railState)
	if st == nil {
		st = &railState{}
	}
	st.rule = rule
	return st
}

// release gives back the railState of x, a request that has ended: nothing reads it any more.
// A request another edge built or a batch's message leaves its own to the collector.
func (g *railer) release(x *request) {
	st := x.rails
	if g == nil || st == nil || st.rule == nil {
		return
	}
	x.rails = nil
	clear(st.notes)
	st.args.Reset("", 0)
	st.result.Reset("", 0)
	*st = railState{notes: st.notes[:0], args: st.args, result: st.result}
	g.states.Put(st)
}

// maxNotes bounds the findings notifications leave for the result's annotation.
const maxNotes = 32

// guardKind maps the routed methods the guardrails cover to what a rule names (0: none).
// completion/complete is covered as what its ref names: it carries a prompt's argument values
// (or a resource template's), as a person types them, to the backend that prompts/get would
// carry them to.
func guardKind(x *request) guardrails.Kind {
	switch x.in.req.Method {
	case upstreams.MethodToolsCall:
		return guardrails.KindTool
	case upstreams.MethodPromptsGet:
		return guardrails.KindPrompt
	case upstreams.MethodResourcesRead:
		return guardrails.KindResource
	case upstreams.MethodComplete:
		return completionKind(x.in.params.Ref)
	}
	return 0
}

// completionKind is what a completion's ref names (stage route read it already).
func completionKind(raw []byte) guardrails.Kind {
	ref, err := jsonrpc.ParseRef(raw)
	switch {
	case err != nil:
	case ref.Type == "ref/prompt":
		return guardrails.KindPrompt
	case ref.Type == "ref/resource":
		return guardrails.KindResource
	}
	return 0
}

// checkRequest is stage guardrails: it finds the request's rule, runs the argument detectors
// and then validates a tools/call's arguments, as redacted, against the tool's schema: what is
// validated is what is forwarded. A refusal answers the request (a tool error for tools/call,
// which the model can read; invalid params for prompts/get); a redaction replaces the arguments
// the later stages see and forward.
func (g *railer) checkRequest(x *request) (bool, error) {
	kind := guardKind(x)
	if kind == 0 {
		return false, nil
	}
	rule := g.engine.Rule(kind, x.route.upstream, x.route.upstreamName)
	if rule == nil {
		return false, nil
	}
	x.rails = g.state(rule)
	rep := &x.rails.args
	if rule.ScansArguments() && len(x.in.params.Arguments) > 0 {
		start := g.now()
		rule.ScanArgumentsInto(rep, x.in.params.Arguments)
		g.rec.Duration(metrics.CheckContent, guardrails.DirArguments, g.now().Sub(start))
	} else {
		rep.Reset(rule.ID(), guardrails.DirArguments)
	}
	if !rep.Blocked() && rep.Redacted() {
		if err := g.redactArguments(x, rep); err != nil {
			return false, err
		}
	}
	if !rep.Blocked() && rule.ScansArguments() {
		by, err := g.checkParams(x, rule, rep)
		if err != nil {
			return false, err
		}
		if by != nil {
			g.record(x, rule, rep)
			return true, g.refuseRequest(x, refusalText(by, "the request's params"))
		}
	}
	if a := argumentsAction(rule, rep); !rep.Blocked() && kind == guardrails.KindTool && a != guardrails.Off {
		if err := g.validateArguments(x, rep, a, rule.ValidateArguments() != guardrails.Off); err != nil {
			return false, err
		}
	}
	g.record(x, rule, rep)
	if rep.Blocked() {
		return true, g.refuseRequest(x, refusalText(rep, "the arguments"))
	}
	return false, nil
}

// refuseRequest answers a refused request: a tool error for tools/call, invalid params for
// prompts/get. The message names the rule, the detector and where, never the value.
func (g *railer) refuseRequest(x *request, msg string) error {
	if x.in.req.Method == upstreams.MethodToolsCall {
		return x.answer(toolError(msg), outcomeDenied)
	}
	return invalidParams("Invalid params: " + msg)
}

// toolError is a tools/call result the model reads as the tool's failure.
func toolError(msg string) []byte {
	text, _ := json.Marshal(msg)
	return []byte(`{"content":[{"type":"text","text":` + string(text) + `}],"isError":true}`)
}

// refusalText says why a message was refused, from the report: the rule, the finding's
// detector and path (or the schema violation), never the text that matched.
func refusalText(rep *guardrails.Report, what string) string {
	var b strings.Builder
	b.WriteString("Refused by guardrail rule ")
	b.WriteString(strconv.Quote(rep.Rule))
	b.WriteString(": ")
	f := rep.First(guardrails.Block)
	switch {
	case f != nil && f.Note != "":
		verb := " fails"
		if strings.HasSuffix(what, "s") {
			verb = " fail" // the arguments, the request's params
		}
		b.WriteString(what + verb + " the tool's schema at " + pointerOrRoot(f.Path) + ": " + f.Note)
	case f != nil:
		b.WriteString("found " + f.Detector.Guardrail().String() + " (" + f.Detector.String() + ") in " + what +
			" at " + pointerOrRoot(f.Path))
	case errors.Is(rep.Err, guardrails.ErrUnreadableContent):
		// Names the reason and the place, never the content.
		b.WriteString(what + " could not be checked: " + strings.TrimPrefix(rep.Err.Error(), "guardrails: "))
	default:
		b.WriteString(what + " could not be checked")
	}
	return b.String()
}

// railName is the name of x for its log lines: none when the guardrails find something in it.
// Every log line that names a routed request names it so, those written before stage
// guardrails included (routing decides it: request.resolve asks scanURI). A function:
// request is at its bound of methods.
func railName(x *request) string {
	if x.route.nameHidden || x.rails != nil && x.rails.nameFound {
		return ""
	}
	return x.route.name
}

// logName is railName as a log line writes it: a resource URI quoted by configerr.URL, the rule
// every URL the gateway shows goes through, since a URI carries a credential where a URL does
// (user information, a presigned query, a token as a path segment). A tool or prompt name holds
// no "://" and is written as it is, without allocating.
func logName(x *request) string { return configerr.URL(railName(x)) }

func pointerOrRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// record counts the check in the metrics and writes its decision line when it found anything:
// the rule, the direction, the action and each detector's count, never the text or the path.
func (g *railer) record(x *request, rule *guardrails.Rule, rep *guardrails.Report) {
	dir := rep.Dir
	for gr := guardrails.Schema; gr <= guardrails.Injection; gr++ {
		if rule.Runs(gr, dir) {
			g.rec.Check(gr, dir, rep.GuardrailAction(gr), rep.Err != nil)
		}
	}
	if rep.Clean() {
		return
	}
	var kinds strings.Builder
	rep.EachDetector(func(det guardrails.Detector, a guardrails.Action, n int) {
		g.rec.Findings(det, dir, a, n)
		if kinds.Len() > 0 {
			kinds.WriteByte(',')
		}
		kinds.WriteString(det.String() + ":" + a.String() + ":" + strconv.Itoa(n))
	})
	level, what := slog.LevelInfo, "guardrail finding"
	if rep.Blocked() {
		level, what = slog.LevelWarn, "guardrail refused"
	}
	attrs := []slog.Attr{slog.String("request_id", x.requestID), slog.String("subject", x.subject()),
		slog.String("upstream", x.route.upstream), slog.String("name", logName(x)),
		slog.String("rule", rep.Rule), slog.String("direction", dir.String()),
		slog.String("action", rep.Action.String()), slog.String("findings", kinds.String())}
	if rep.Err != nil {
		attrs = append(attrs, slog.String("error", checkError(rep.Err)))
	}
	g.log.LogAttrs(x.ctx, level, what, attrs...)
}

// checkError names why a check failed, in the guardrails package's words (never the input's).
func checkError(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, ':'); i > 0 && strings.HasPrefix(msg, "guardrails") {
		return strings.TrimSpace(msg[i+1:])
	}
	return "check failed"
}

// redactArguments replaces the request's arguments with their redacted text: the params the
// later stages confirm and forward, and the Mcp-Param-* headers bound to them.
func (g *railer) redactArguments(x *request, rep *guardrails.Report) error {
	args := rep.Rewrite(x.in.params.Arguments)
	params, err := spliceMember(x.in.req.Params, x.in.params.Arguments, "arguments", args)
	if err != nil {
		return err
	}
	parsed := *x.in.params
	parsed.Arguments = args
	x.in.replaceParams(params, &parsed)
	if len(x.route.paramHeaders) > 0 {
		// A mirrored argument must say what the backend reads: the headers are derived again
		// from the redacted arguments by stage bind-headers' own code, as for a call an
		// interceptor changed (the client's headers mirrored what it sent).
		x.hdr, x.mutated, x.route.paramHeaders = withoutParamHeaders(x.hdr), true, nil
		return x.bindParamHeaders(x.route.target)
	}
	return nil
}

// spliceMember returns obj with the value of member name, old (a slice of obj, as the decode
// left it), replaced with val.
func spliceMember(obj, old []byte, name string, val []byte) ([]byte, error) {
	if off := cap(obj) - cap(old); len(old) > 0 && off >= 0 && off+len(old) <= len(obj) && &obj[off] == &old[0] {
		out := make([]byte, 0, len(obj)-len(old)+len(val))
		out = append(append(append(out, obj[:off]...), val...), obj[off+len(old):]...)
		return out, nil
	}
	// Not a slice of obj (a request another edge built): rebuilt member by member.
	out := []byte{'{'}
	err := jsonrpc.Members(obj, func(k, v []byte) error {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsonrpc.AppendString(out, k)
		out = append(out, ':')
		if string(k) == name {
			v = val
		}
		out = append(out, v...)
		return nil
	})
	return append(out, '}'), err
}

// argumentsAction is the action of the schema guardrail on a tools/call's arguments: the
// rule's, or block when the check redacted them. Arguments the gateway redacted must still be
// what the tool's inputSchema declares (a number replaced with the marker is a string), or the
// backend would act on a value of a type it never accepts: refused instead, whatever the rule
// does with a client's own violation (nothing, or log).
func argumentsAction(rule *guardrails.Rule, rep *guardrails.Report) guardrails.Action {
	if rep.Redacted() {
		return guardrails.Block
	}
	return rule.ValidateArguments()
}

// validateArguments is the schema guardrail on a tools/call's arguments with action a, against
// the pinned inputSchema when the backend is pinned and the tool has a pin, else the one its
// backend lists to the caller. A tool whose schema cannot be had or used fails the check
// (closed) when the rule validates arguments (validates); arguments checked only because they
// were redacted are then forwarded, as they are under a rule that validates nothing.
func (g *railer) validateArguments(x *request, rep *guardrails.Report, a guardrails.Action, validates bool) error {
	start := g.now()
	defer func() { g.rec.Duration(metrics.CheckSchema, guardrails.DirArguments, g.now().Sub(start)) }()
	cs, err := g.schema(x, false)
	if err != nil {
		return err
	}
	if cs == nil {
		if !validates {
			return nil
		}
		rep.Add(guardrails.DetInvalidArguments, a, "", "the tool's input schema is not known to the gateway")
		return nil
	}
	v, verr := cs.Validate(x.in.params.Arguments)
	switch {
	case verr != nil && validates:
		rep.Add(guardrails.DetInvalidArguments, a, "", "the tool's input schema cannot be used")
	case verr != nil:
	case v != nil:
		rep.Add(guardrails.DetInvalidArguments, a, v.Path, v.Problem)
	}
	return nil
}

// schema returns the compiled inputSchema (output false) or outputSchema of the routed tool:
// pinned, or listed; nil when the tool has none the gateway knows.
func (g *railer) schema(x *request, output bool) (*guardrails.CompiledSchema, error) {
	t := x.route.target
	if g.backends.PinsEnabled(t.Upstream) {
		if def := g.backends.PinGuard().Pinned(t.Upstream, pins.KindTool, t.Name); def != nil {
			member := "inputSchema"
			if output {
				member = "outputSchema"
			}
			obj, _ := def.Value.(map[string]any)
			sv, ok := obj[member]
			if !ok {
				return nil, nil
			}
			return g.engine.Schema(guardrails.PinKey(def.Fingerprint, output), func() ([]byte, error) {
				return json.Marshal(sv)
			}), nil
		}
	}
	// The tool's entry stage bind-headers found is the one this query would find (the same
	// list of the same caller), taken a moment earlier; without one, the list is fetched.
	th := x.route.toolHeaders
	if th == nil || th.Schemas == nil {
		var err error
		th, err = listedToolHeaders(x, t, true)
		if err != nil || th == nil || th.Schemas == nil {
			return nil, err
		}
	}
	return g.listedSchema(th.Schemas, output), nil
}

// listedSchema returns the compiled inputSchema (output false) or outputSchema of a listed
// tool, nil when it has none. The compiled schema is found with the tool's entry when the
// engine's cache still holds it (a weak pointer: the cache alone bounds what is kept), else in
// the cache by its text, compiled when missing.
func (g *railer) listedSchema(ts *upstreams.ToolSchemas, output bool) *guardrails.CompiledSchema {
	h, has := ts.Input, ts.HasInput
	if output {
		h, has = ts.Output, ts.HasOutput
	}
	if !has {
		return nil
	}
	if wp, ok := ts.Memo(output).(weak.Pointer[guardrails.CompiledSchema]); ok {
		if cs := wp.Value(); cs != nil {
			return cs
		}
	}
	cs := g.engine.ContentSchema(h)
	ts.SetMemo(output, weak.Make(cs))
	return cs
}
