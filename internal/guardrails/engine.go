package guardrails

import (
	"sync"

	"github.com/mcp-gateway/gateway/authz"
)

// Kind is what a request names: a tool, a prompt or a resource.
type Kind uint8

// The kinds a rule covers.
const (
	KindTool Kind = iota + 1
	KindPrompt
	KindResource
)

// Engine is the compiled guardrails configuration: the rules, the scanner's tables and the
// cache of compiled schemas. It is safe for concurrent use.
type Engine struct {
	rules []Rule
	// caseless are the backends whose resource paths are case-insensitive (SetCaseInsensitive).
	caseless authz.Caseless
	tb       *tables
	schemas  *schemaCache
	walkers  sync.Pool // *walker, with their window buffers
}

// New compiles a validated configuration. It returns nil for a configuration without rules:
// then no guardrail runs and callers skip them at no cost.
func New(cfg *Config) (*Engine, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	size := cfg.SchemaCache
	if size == 0 {
		size = DefaultSchemaCache
	}
	e := &Engine{tb: newTables(), schemas: newSchemaCache(size)}
	for i := range cfg.Rules {
		e.rules = append(e.rules, compileRule(cfg, i, e))
	}
	return e, nil
}

// Rule is one compiled guardrail rule.
type Rule struct {
	e         *Engine
	id        string
	upstream  authz.Glob
	tools     []authz.Glob
	prompts   []authz.Glob
	resources []authz.Glob
	// foldedResources are resources case-folded, for backends with case-insensitive paths.
	foldedResources []authz.Glob
	// validateArgs and validateOut are the schema guardrail's actions.
	validateArgs, validateOut Action
	args, results             direction
	// handles is args without the high-entropy detector, for the members the gateway reads
	// itself whose values are random handles (ScanHandles).
	handles direction
	hosts   *hostSet
	// runs is, per direction, the set of guardrails that run (Runs).
	runs [numDirections]uint8
}

// direction is the actions of the content detectors on one direction.
type direction struct {
	actions [numDetectors]Action
	on      detSet // the detectors whose action is not Off
}

func compileRule(cfg *Config, i int, e *Engine) Rule {
	rc := &cfg.Rules[i]
	up := rc.Upstream
	if up == "" {
		up = "*"
	}
	r := Rule{e: e, id: rc.ruleID(i), upstream: authz.CompileGlob(up), tools: globs(rc.Tools),
		prompts: globs(rc.Prompts), resources: globs(rc.Resources), foldedResources: authz.FoldGlobs(rc.Resources)}
	r.validateArgs, _ = parseAction(orOff(rc.Validate.Arguments))
	r.validateOut, _ = parseAction(orOff(rc.Validate.StructuredContent))
	r.args = compileDirection(&rc.Arguments)
	r.results = compileDirection(&rc.Results)
	r.handles = r.args.without(DetHighEntropy)
	hosts := rc.AllowedHosts
	if hosts == nil {
		hosts = cfg.AllowedHosts
	}
	r.hosts = newHostSet(hosts)
	r.runs = r.guardrailsRun()
	return r
}

func compileDirection(dc *DirectionConfig) direction {
	var d direction
	group := [numGuardrails]Action{}
	group[Secrets], _ = parseAction(orOff(dc.Secrets))
	group[PII], _ = parseAction(orOff(dc.PII))
	group[Injection], _ = parseAction(orOff(dc.Injection))
	for k := range detectorTable {
		if g := detectorTable[k].g; g != Schema {
			d.actions[k] = group[g]
		}
	}
	for name, act := range dc.Detectors {
		det, _ := detectorByName(name)
		d.actions[det], _ = parseAction(act)
	}
	for k, a := range d.actions {
		if a != Off {
			d.on = d.on.with(Detector(k))
		}
	}
	return d
}

// without returns d with detector det off.
func (d direction) without(det Detector) direction {
	d.actions[det] = Off
	d.on &^= 1 << det
	return d
}

func globs(ps []string) []authz.Glob {
	out := make([]authz.Glob, len(ps))
	for i, p := range ps {
		out[i] = authz.CompileGlob(p)
	}
	return out
}

// SetCaseInsensitive marks the backends whose resource paths are case-insensitive: rules then
// select their resources case-folded, as policy matches them. Call it before the engine is
// shared.
func (e *Engine) SetCaseInsensitive(upstreams []string) {
	if e != nil {
		e.caseless = authz.NewCaseless(upstreams)
	}
}

// Rule returns the first rule that covers kind name of upstream (backend-side names), nil when
// none does.
func (e *Engine) Rule(kind Kind, upstream, name string) *Rule {
	if e == nil {
		return nil
	}
	folded := false
	if kind == KindResource {
		name, folded = e.caseless.Fold(upstream, name)
	}
	for i := range e.rules {
		r := &e.rules[i]
		if r.upstream.Covers(upstream) && authz.CoversAny(r.list(kind, folded), name, kind == KindResource) {
			return r
		}
	}
	return nil
}

// list is the rule's patterns for kind; folded picks the case-folded resource patterns.
func (r *Rule) list(kind Kind, folded bool) []authz.Glob {
	switch kind {
	case KindTool:
		return r.tools
	case KindPrompt:
		return r.prompts
	case KindResource:
		if folded {
			return r.foldedResources
		}
		return r.resources
	}
	return nil
}

// ID is the rule's id.
func (r *Rule) ID() string { return r.id }

// ValidateArguments is the schema guardrail's action on a tools/call's arguments.
func (r *Rule) ValidateArguments() Action { return r.validateArgs }

// ValidateStructuredContent is the schema guardrail's action on a tool result's
// structuredContent.
func (r *Rule) ValidateStructuredContent() Action { return r.validateOut }

// ScansArguments reports whether any content detector runs on arguments.
func (r *Rule) ScansArguments() bool { return !r.args.on.empty() }

// ScansResults reports whether any content detector runs on results and notifications.
func (r *Rule) ScansResults() bool { return !r.results.on.empty() }

// ScanArguments runs the argument detectors over args, a JSON object that passed the strict
// decode.
func (r *Rule) ScanArguments(args []byte) *Report {
	rep := &Report{}
	r.ScanArgumentsInto(rep, args)
	return rep
}

// ScanArgumentsInto is ScanArguments writing into rep, which is reset first: a caller that
// keeps its reports (one per request and direction) allocates none for a clean check.
func (r *Rule) ScanArgumentsInto(rep *Report, args []byte) {
	r.scan(rep, args, &r.args, DirArguments, false, nil)
}

// ScanHandles runs the argument detectors other than high-entropy over raw, the JSON value of
// a member the gateway reads itself and forwards as the client sent it, whose legitimate value
// is a random handle (a progress token, trace context, an authorization context id) or the
// client's description of itself (its name and capabilities). Such a member carries to the
// backend whatever text it holds, so it is read like an argument; high-entropy would take
// every random handle for a credential.
func (r *Rule) ScanHandles(raw []byte) *Report {
	rep := &Report{}
	r.ScanHandlesInto(rep, raw)
	return rep
}

// ScanHandlesInto is ScanHandles writing into rep, which is reset first (as ScanArgumentsInto).
func (r *Rule) ScanHandlesInto(rep *Report, raw []byte) {
	r.scan(rep, raw, &r.handles, DirArguments, false, nil)
}

// ScanResult runs the result detectors over result (a backend's result object, or its JSON-RPC
// error object), which passed the strict decode.
func (r *Rule) ScanResult(result []byte) *Report {
	rep := &Report{}
	r.ScanResultInto(rep, result)
	return rep
}

// ScanResultInto is ScanResult writing into rep, which is reset first (as ScanArgumentsInto).
func (r *Rule) ScanResultInto(rep *Report, result []byte) {
	r.scan(rep, result, &r.results, DirResult, true, nil)
}

// ScanNotification runs the result detectors over params, a relayed notification's params.
func (r *Rule) ScanNotification(params []byte) *Report {
	return r.ScanRelayed(params, nil)
}

// Echo is what the client sent that a backend's message carries back to it: the request's id,
// which the gateway writes into the backend's error response, and the request's progress token,
// by which the backend names its progress notifications (as the client wrote it; the gateway
// forwards it so). They are the client's own handles, random ones as often as not, which
// high-entropy would take for credentials and a redaction would break (a client matches
// progress and answers by them): where a message holds exactly that value in that place (the
// message's id, its params' progressToken), it is not read as the backend's text. Any other
// value there is the backend's, and is scanned.
type Echo struct {
	ID, ProgressToken []byte
}

// ScanRelayed runs the result detectors over msg, a whole notification relayed to the client
// while the request runs (or, echo nil, the params of something relayed), passing over what
// echo says the client sent.
func (r *Rule) ScanRelayed(msg []byte, echo *Echo) *Report {
	rep := &Report{}
	r.scan(rep, msg, &r.results, DirNotification, false, echo)
	return rep
}

// ScanError runs the result detectors over msg, a backend's JSON-RPC error response as the
// client would receive it, passing over what echo says the client sent (its id).
func (r *Rule) ScanError(msg []byte, echo *Echo) *Report {
	rep := &Report{}
	r.scan(rep, msg, &r.results, DirResult, true, echo)
	return rep
}

func (r *Rule) scan(rep *Report, raw []byte, d *direction, dir Direction, result bool, echo *Echo) {
	r.scanOnce(rep, raw, d, dir, result, echo, false)
	if !rep.Blocked() && !d.on.empty() {
		r.disguised(raw, d, dir, result, rep, echo) // ignorable.go
	}
}

// scanOnce runs d's detectors over raw as it is, into rep (reset first), passing over what echo
// (nil: nothing) says the client sent; strip: the second reading (ignorable.go).
func (r *Rule) scanOnce(rep *Report, raw []byte, d *direction, dir Direction, result bool, echo *Echo, strip bool) {
	rep.Reset(r.id, dir)
	if len(raw) == 0 || d.on.empty() {
		return
	}
	w := r.e.walker()
	defer r.e.putWalker(w)
	w.raw, w.stripMeta, w.echo, w.strip = raw, result, echo, strip
	// ScanRelayed's params of something relayed (echo nil): a request's, whose content blocks
	// are a result's.
	w.content = result || dir == DirNotification && echo == nil
	w.msg = msgScan{rep: rep, dir: d}
	w.sc = &w.msg
	w.ts.on, w.ts.hosts, w.ts.allowedLen = d.on, r.hosts, 0
	if err := w.walk(); err != nil {
		rep.Err = err
	}
}

// walker returns a walker from the pool.
func (e *Engine) walker() *walker {
	if w, ok := e.walkers.Get().(*walker); ok {
		return w
	}
	w := &walker{ts: textScan{tb: e.tb}}
	// Bound once, for the walker's life: a method value made per scan would be an allocation.
	w.ts.emit = w.onMatch
	return w
}

// maxPooledWindow bounds the window buffer a pooled walker keeps.
const maxPooledWindow = 2 * (windowStep + maxMatch)

func (e *Engine) putWalker(w *walker) {
	w.raw, w.sc, w.msg, w.ts.t, w.path, w.echo = nil, nil, msgScan{}, nil, w.path[:0], nil
	if w.bl.edits = w.bl.edits[:0]; cap(w.bl.edits) > maxKeptEdits {
		w.bl.edits = nil
	}
	if cap(w.win) > maxPooledWindow || cap(w.marks) > maxPooledWindow {
		w.win, w.marks = nil, nil
	}
	e.walkers.Put(w)
}
