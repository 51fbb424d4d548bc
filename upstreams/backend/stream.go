package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Call is one client request routed to exactly one backend.
type Call struct {
	// Method is tools/call, prompts/get, resources/read or completion/complete.
	Method string
	// ID is the client's JSON-RPC id, forwarded as is: each HTTP request to a backend carries one call,
	// so ids of different clients cannot clash at the backend.
	ID json.RawMessage
	// Params are the client's raw params. Only the routed name, uri or ref changes.
	Params json.RawMessage
	// Target is the resolved backend and backend-side name or URI.
	Target names.Target
	// Spelling is how a resource URI or template Target.Name (resources/read, a completion of
	// a template) is written toward the backend, in the body and in Mcp-Name: the spelling the
	// backend listed for it, or a URI under a template it listed respelt as the backend spelt
	// the template (catalog.ResourceSpelling). It must name Target.Name to every reader
	// (ResourceURI), or the call is refused. Empty: a resources/read sends
	// resuri.URIForm(Target.Name), any other method Target.Name.
	Spelling string
	// ProtocolVersion is sent as MCP-Protocol-Version; empty means ProtocolVersion.
	ProtocolVersion string
	// LogLevel is the io.modelcontextprotocol/logLevel of the client's request, as the gateway
	// decoded it (one of the eight levels), "" when it asked for none: a 2026-07-28 server sends
	// a request's log messages only when asked, at that level or a more severe one, and the
	// gateway holds a backend to the same.
	LogLevel string
	// ProgressToken is the progressToken of the request's _meta, as the gateway decoded it
	// (jsonrpc.Meta.ProgressToken) and as Params carry it to the backend; nil when it sent
	// none, and then no progress of the backend's is relayed.
	ProgressToken json.RawMessage
	// Header holds the pass-through headers the caller selected: Mcp-Param-*, traceparent,
	// tracestate, baggage and X-Request-Id. Anything else is dropped.
	Header http.Header
	// SubjectToken is the caller's verified bearer token. Fill it only for a backend
	// configured for token exchange: it is exchanged for the backend's own token and never
	// sent to the backend itself.
	SubjectToken string
	// SubjectKey is SubjectKey(SubjectToken), when the caller computed it (once per request);
	// "" has it computed here.
	SubjectKey string
	// Visible is the caller's policy for the resources a result names (see names.Rewriter):
	// nothing under a resource URI it hides is relayed. Nil shows every resource.
	Visible func(names.Kind, names.Target) bool
	// Embedded says whether a resource may appear in a tool or prompt result (see
	// names.Rewriter). Nil allows every resource whose URI normalises.
	Embedded func(names.Kind, names.Target) bool
	// Caller identifies the caller (its key, callerkey.Of) for a backend configured for token
	// exchange: its issuer must be one of the backend's auth.subjectIssuers (empty: the
	// SubjectToken is refused), and a pre-2026 one gets a session per caller, keyed by it.
	Caller string
	// UserToken is the caller's token for a per-user backend (Auth.Type userOAuth), looked up
	// by the pipeline before the call; sent as Authorization to this backend only.
	UserToken string
	// Bound is the key of the caller's per-caller bounds (its subject key, or without
	// authentication its client address's): the response is read within that key's share of
	// the replica's result budget (Env.CallerResults) until the Stream is closed, so that one
	// caller's responses cannot take every caller's room. "" reads within the budget alone.
	Bound string
}

// ErrResultBudget is returned when relaying a backend's response would take the buffer memory
// of every response being relayed on this replica past its bound (Env.Results). It is the
// gateway's own overload, not the backend's failure: it counts against neither the backend's
// health nor its circuit breaker.
var ErrResultBudget = errors.New("upstreams: too many response bytes in flight on this replica")

// Stream yields a backend's messages for one call, in order, as complete JSON-RPC messages with
// resource URIs rewritten back to namespaced form: notifications (progress, log) first, then the
// response, which carries the client's id and ends the call. It is not safe for concurrent use.
type Stream struct {
	b       *Backend
	method  string
	id      json.RawMessage
	rw      names.Rewriter
	ctx     context.Context
	stop    context.CancelFunc // ends the backend request and releases the timeout timer
	outcome string             // of the response: OutcomeOK or OutcomeBackendError
	last    *jsonrpc.Message   // the decoded response, the call's last message
	result  json.RawMessage    // the response's result with names rewritten back (nil for an error)
	probe   bool               // a health probe: failures do not trigger another probe
	charge  string             // who a failure is charged to (Request.charge)
	resp    *http.Response
	sse     *wire.SSEReader
	leg     *legacy.RoundTrip // set for a legacy backend (legacystream.go)
	body    *bodyread.Buffer  // a JSON response; Result may point into it until Close
	results *bodyread.Budget  // what the response is read against (Request.results)
	// resultOnly: the caller takes a successful response from Result, so Next does
	// not render it (see ResultOnly).
	resultOnly bool
	pending    []byte
	status     int
	isSSE      bool
	done       bool
	start      time.Time
	once       sync.Once
	dropped    int // notifications not relayed: off the call, or logs the request did not ask for
	// logLevel is the least severe notifications/message level the client's request asked
	// for (its io.modelcontextprotocol/logLevel); "" when it asked for none, and then no log
	// message of the backend's is relayed.
	logLevel string
	// progress is the progressToken of the request's _meta (progressToken), as the backend
	// receives it; nil when it carries none, and then no progress of the backend's is relayed.
	progress json.RawMessage
	relayed  int // notifications returned by Next, at most b.maxNotes
	// uri is a resources/read's URI as the caller sent it (its params' uri, decoded as the
	// gateway decodes them), which an answer naming only hidden resources names.
	uri string
	// shares holds the share of the caller bound (Call.Bound) the response is read within,
	// given back by Close; nil when it is read within the replica's budget alone.
	shares *bodyread.Shares
	bound  string
}

// Call forwards c to the backend, whose name c.Target.Upstream is, and returns the response
// stream once the backend has answered with headers (and, for a JSON answer, its whole body).
// The backend request is cancelled when ctx ends, when the backend's timeout passes, or when
// the Stream is closed. A JSON response that is not a valid JSON-RPC response fails here with
// wire.ErrBadResponse.
func (b *Backend) Call(ctx context.Context, c *Call) (*Stream, error) {
	if len(c.ID) == 0 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: a call needs an id")
	}
	// The request body is not pooled: the transport may still read it (a retry on a stale
	// keep-alive connection rewinds it) after the response has arrived.
	sent, err := spelling(c)
	if err != nil {
		return nil, err
	}
	body, err := appendRequest(make([]byte, 0, len(c.Params)+len(c.ID)+len(c.Method)+64), c, sent)
	if err != nil {
		return nil, fmt.Errorf("%w: params: %v", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params"), err)
	}
	name := ""
	switch c.Method {
	case wire.MethodToolsCall, wire.MethodPromptsGet, wire.MethodResourcesRead:
		name = sent // docs/protocol.md §2.2: only these three carry Mcp-Name
	}
	var completion *names.Completion
	if c.Method == wire.MethodComplete && c.Visible != nil {
		completion = names.ParseCompletion(c.Params, c.Target.Name)
	}
	shares := b.env.CallerResults
	s, err := b.open(ctx, c.ID, &Request{Method: c.Method, Name: name, Version: c.ProtocolVersion, Header: c.Header, Body: body,
		Subject: b.SubjectFor(c.SubjectToken), SubjectKey: c.SubjectKey, Caller: c.Caller, UserToken: userTokenFor(b.PerUser(), c.UserToken), FromCaller: true,
		visible: c.Visible, embedded: c.Embedded, completion: completion, uri: askedURI(c), Results: shares.Take(c.Bound)})
	if err != nil {
		shares.Give(c.Bound) // a failed open holds no buffer
		return nil, err
	}
	s.logLevel, s.progress, s.shares, s.bound = c.LogLevel, c.ProgressToken, shares, c.Bound
	return s, nil
}

// askedURI is a resources/read's URI as c's caller sent it, decoded as the gateway decodes
// params; "" for any other method.
func askedURI(c *Call) string {
	if c.Method != wire.MethodResourcesRead {
		return ""
	}
	p, err := jsonrpc.ParseParams(c.Params)
	if err != nil {
		return ""
	}
	return p.URI
}

// open sends o and prepares the Stream of its response; id is the id the response gets.
func (b *Backend) open(ctx context.Context, id json.RawMessage, o *Request) (*Stream, error) {
	s := &Stream{b: b, method: o.Method, id: id, start: b.env.Now(), probe: o.probe, charge: o.charge(), results: o.results(b), uri: o.uri,
		rw: names.Rewriter{Space: b.env.Names, Upstream: b.name, Visible: o.visible, Embedded: o.embedded, Completion: o.completion}}
	s.ctx, s.stop = context.WithTimeoutCause(ctx, b.timeout, wire.ErrCallTimeout)
	if legacy, _, err := b.isLegacy(s.ctx, o); err != nil {
		s.fail(err)
		return nil, err
	} else if legacy {
		return s.openLegacy(o) // docs/protocol.md §7: bridged to a pre-2026 backend
	}
	resp, err := b.Post(s.ctx, o)
	if err != nil {
		s.fail(err)
		return nil, err
	}
	s.resp, s.status = resp, resp.StatusCode
	isJSON, isSSE := wire.MediaType(resp.Header.Get("Content-Type"))
	switch {
	case isSSE && resp.StatusCode/100 == 2:
		s.isSSE = true
		s.sse = wire.NewSSEReader(resp.Body, int(b.maxBytes))
		s.sse.Budget = s.results
		return s, nil
	case isJSON:
		err = s.readJSON()
	default:
		err = wire.StatusError(b.name, resp.StatusCode, "neither JSON nor an event stream")
	}
	if err != nil {
		s.fail(err)
		return nil, err
	}
	return s, nil
}

// maxSkippedNotifications bounds how many notifications roundTrip skips before the response.
const maxSkippedNotifications = 10000

// roundTripOnce sends one gateway-originated request (list page, discover, an interceptor's
// invocation) and returns the decoded response, skipping notifications. roundTrip (retry.go)
// retries it. The Stream takes only an answer with the request's id (wire.CheckAnswer): an
// interceptor's verdict on another call is no verdict on this one.
func (b *Backend) roundTripOnce(ctx context.Context, o *Request) (*jsonrpc.Message, error) {
	s, err := b.open(ctx, json.RawMessage(gatewayID), o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for range maxSkippedNotifications {
		_, last, err := s.Next()
		if err != nil {
			return nil, err
		}
		if last {
			// s.last is handed on after Close, which releases the buffer it was read into.
			m := *s.last
			m.Result = bytes.Clone(m.Result)
			return &m, nil
		}
	}
	err = fmt.Errorf("%w: %s: too many notifications before the response", wire.ErrBadResponse, b.name)
	s.fail(err)
	return nil, err
}

// gatewayID is the id of the gateway's own requests; each is alone on its HTTP request.
const gatewayID = "1"

// errSpelling: a Call's Spelling does not name its Target. A caller's bug; nothing is sent.
var errSpelling = errors.New("backend: the spelling of a resource URI does not name the authorised URI")

// spelling returns the routed name as the backend receives it (see Call.Spelling).
func spelling(c *Call) (string, error) {
	if c.Spelling == "" && c.Method != wire.MethodResourcesRead {
		return c.Target.Name, nil
	}
	return ResourceURI(c.Target.Name, c.Spelling)
}

// ResourceURI returns how the resource URI (or template) n, authorised in its normal form, is
// written toward its backend, given the spelling that backend listed for it, or that a URI
// under a template it listed is respelt in (catalog.ResourceSpelling): that spelling, else (an
// empty one) n's URI form. A spelling that does not name n to every reader is refused: one
// that differs from n in more than its non-ASCII text (resuri.SpellsAs) must normalise to n
// without a dot segment (resuri.ReadsAs), or a backend might read it as another resource. A
// resources/read and a subscription to the same resource go by this one rule, so a backend
// hears of one resource under one spelling.
func ResourceURI(n, spelling string) (string, error) {
	if spelling == "" {
		return resuri.URIForm(n), nil
	}
	// What the gateway authorised is what the backend acts on: no spelling of another URI,
	// nor one a backend could read as another.
	if !resuri.SpellsAs(spelling, n) && !resuri.ReadsAs(spelling, n) {
		return "", errSpelling
	}
	return spelling, nil
}

// appendRequest builds the JSON-RPC request for the backend, the routed name written as sent.
func appendRequest(dst []byte, c *Call, sent string) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, c.ID...)
	dst = append(dst, `,"method":`...)
	dst = jsonrpc.AppendString(dst, c.Method)
	dst = append(dst, `,"params":`...)
	dst, err := names.RewriteParams(dst, c.Params, c.Method, names.Target{Upstream: c.Target.Upstream, Name: sent})
	return append(dst, '}'), err
}

func (s *Stream) readJSON() error {
	// One buffer growing as the response arrives (toward its declared length, while it keeps
	// to it), charged to the replica's budget for responses in flight, kept until Close:
	// the result is relayed from it without a copy.
	buf, err := bodyread.ReadSized(s.resp.Body, s.b.maxBytes, s.resp.ContentLength, s.results)
	if err != nil {
		return s.readError(err)
	}
	s.body = buf
	m, err := wire.DecodeResponse(s.b.name, s.status, buf.B, s.b.maxBytes, s.id)
	if err != nil {
		return err
	}
	// Rendered by Next, once the caller has had the chance to ask for ResultOnly.
	s.last = m
	return nil
}

// ResultOnly tells the Stream that the caller takes a successful response from
// Result and re-renders it itself: Next then returns a nil msg for it, sparing a copy of a
// result that may be megabytes. Call it before Next.
func (s *Stream) ResultOnly() { s.resultOnly = true }

// render renders the response with the client's id and namespaced URIs. With resultOnly
// a success is not rendered, and its result stays where it was read (the response buffer or
// the event) until Close.
func (s *Stream) render(m *jsonrpc.Message) ([]byte, error) {
	s.last = m
	if m.Error != nil {
		s.outcome = OutcomeBackendError
		e := m.Error
		data, ok := s.rw.ErrorData(e.Data)
		switch {
		case !ok && s.method == wire.MethodResourcesRead:
			return s.hiddenResource(), nil
		case !ok:
			e = &jsonrpc.Error{Code: e.Code, Message: e.Message} // its data names a hidden resource
		case !bytes.Equal(data, e.Data):
			e = &jsonrpc.Error{Code: e.Code, Message: e.Message, Data: data}
		}
		return jsonrpc.AppendError(nil, s.id, e), nil
	}
	s.outcome = OutcomeOK
	res, err := s.rw.Result(s.method, m)
	if errors.Is(err, names.ErrHiddenResource) {
		s.outcome = OutcomeBackendError
		return s.hiddenResource(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: result: %v", wire.ErrBadResponse, s.b.name, err)
	}
	if s.resultOnly && s.leg == nil {
		// A legacy round trip reads on after its response (legacystream.go), so its result
		// is copied below instead.
		s.result = res
		return nil, nil
	}
	out := jsonrpc.AppendResultHead(make([]byte, 0, len(res)+len(s.id)+32), s.id)
	head := len(out)
	out = append(append(out, res...), '}')
	// res may point into a buffer that is reused; the result handed out is the copy in out.
	s.result = out[head : len(out)-1 : len(out)-1]
	return out, nil
}

// readError classifies an error met while reading the response body.
func (s *Stream) readError(err error) error {
	switch {
	case errors.Is(err, bodyread.ErrBudget):
		return resultBudgetErr(s.results, err)
	case errors.Is(err, wire.ErrTooLarge), errors.Is(err, bodyread.ErrTooLarge), errors.Is(err, wire.ErrEventTooLarge):
		return fmt.Errorf("%w: %s: %v (limit %d bytes)", wire.ErrBadResponse, s.b.name, err, s.b.maxBytes)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %s: the stream ended without a response", wire.ErrBadResponse, s.b.name)
	}
	return wire.Classify(s.ctx, s.b.name, err)
}

// Result returns the response's result object, names rewritten back, once Next has
// returned the response; nil when the response was an error or has not come yet. It
// spares the caller decoding again what the stream has just decoded. It is valid until Close.
func (s *Stream) Result() json.RawMessage { return s.result }

// Next returns the next message. last is true for the response, which ends the call; after it
// Next returns io.EOF. A notification may be returned in the Stream's own buffer: it is valid
// until the next call. Any other error ends the stream: it wraps wire.ErrUnavailable (connection reset
// mid-stream), wire.ErrTimeout, wire.ErrBadResponse, or the caller's context error.
func (s *Stream) Next() (msg []byte, last bool, err error) {
	if s.done {
		return nil, false, io.EOF
	}
	if !s.isSSE {
		if s.leg == nil {
			if msg, err = s.render(s.last); err != nil {
				s.fail(err)
				return nil, false, err
			}
		} else {
			msg, s.pending = s.pending, nil
		}
		s.end(s.outcome, nil)
		return msg, true, nil
	}
	if s.leg != nil {
		return s.nextLegacy()
	}
	for {
		data, err := s.sse.Next()
		if err != nil {
			err = s.readError(err)
			s.fail(err)
			return nil, false, err
		}
		m, err := jsonrpc.DecodeMessage(data, wire.JSONLimits(s.b.maxBytes))
		switch {
		case err != nil:
			err = fmt.Errorf("%w: %s: event is not a JSON-RPC message", wire.ErrBadResponse, s.b.name)
		case m.IsResponse():
			if err = wire.CheckAnswer(s.b.name, m, s.id); err != nil {
				break
			}
			if msg, err = s.render(m); err == nil {
				s.end(s.outcome, nil)
				return msg, true, nil
			}
		case m.ID != nil:
			// A 2026-07-28 response stream must not carry JSON-RPC requests (server-to-client
			// requests go through MRTR instead).
			err = fmt.Errorf("%w: %s: request %q on a response stream", wire.ErrBadResponse, s.b.name, m.Method)
		case !callNotification(m.Method):
			// Not about this call: a list_changed, a resources/updated (whose URI is the
			// backend's own, not the client's), or a method the client never asked for.
			// Consumed like a hidden resource's, and reported once per backend.
			if s.b.offCallNote.CompareAndSwap(false, true) {
				s.b.env.Log.Warn("backend sent a notification unrelated to the call; such notifications are dropped",
					"upstream", s.b.name, "method", logMethod(m.Method))
			}
			if s.dropped++; s.dropped <= maxSkippedNotifications {
				continue
			}
			err = fmt.Errorf("%w: %s: too many notifications dropped", wire.ErrBadResponse, s.b.name)
		case m.Method == era.NotifMessage && (s.logLevel == "" || !era.LogAtLeast(m.Params, s.logLevel)),
			m.Method == era.NotifProgress && !ownProgress(m.Params, s.progress):
			// A log message the request did not ask for, or below the level it asked for; the
			// progress of a token the request did not send.
			if s.dropped++; s.dropped <= maxSkippedNotifications {
				continue
			}
			err = fmt.Errorf("%w: %s: too many notifications dropped", wire.ErrBadResponse, s.b.name)
		default:
			// Progress, or a log message the request asked for: neither names anything the
			// gateway rewrites.
			if s.overNotes() {
				continue
			}
			if isCanonicalNotification(data, m.Method, m.Params) {
				return data, false, nil // what would be rendered is what was read
			}
			return jsonrpc.AppendNotification(nil, m.Method, m.Params), false, nil
		}
		s.fail(err)
		return nil, false, err
	}
}

// ownProgress reports whether progress notification params name token, the progressToken of
// the request the stream answers, as its client reads them: one member spelt progressToken in
// any case (a decoder that folds names may read another), named exactly, holding the same
// string or integer (jsonrpc.CanonicalID, as a response's id is matched). A request without a
// token has no progress: a client ties a progress notification to its request by the token
// alone (https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/progress), so
// relayed under another one it would tell of another of the client's requests, perhaps one to
// another backend.
func ownProgress(params, token json.RawMessage) bool {
	if token == nil || len(params) == 0 || params[0] != '{' {
		return false
	}
	var got json.RawMessage
	n := 0
	_ = jsonrpc.Members(params, func(key, val []byte) error {
		if jsonrpc.FoldEqual(key, []byte(jsonrpc.MetaProgressToken)) {
			n++
			if string(key) == jsonrpc.MetaProgressToken {
				got = val
			}
		}
		return nil
	})
	switch {
	case n != 1 || got == nil:
		return false
	case bytes.Equal(got, token):
		return true // the token as the request wrote it, the usual echo
	}
	a, okA := jsonrpc.CanonicalID(got)
	b, okB := jsonrpc.CanonicalID(token)
	return okA && okB && a == b
}

// callNotification reports whether a notification may be relayed on a call's response stream:
// those about the request itself, its progress and its log messages (sent only when the request
// asked for them). Everything else a backend sends there is dropped, as on a pre-2026 session.
func callNotification(method string) bool {
	return method == era.NotifProgress || method == era.NotifMessage
}

// logMethod is a backend's notification method as it may be logged: clipped, since it is the
// backend's text.
func logMethod(m string) string {
	const max = 64
	if len(m) > max {
		return m[:max] + "…"
	}
	return m
}

// overNotes reports whether the call has relayed as many notifications as the backend's
// bound (Config.MaxNotificationsPerCall), counting the one about to be relayed otherwise. One
// over the bound is dropped and counted, never an error: the call goes on to its response,
// which the backend's timeout bounds like the reading of what it drops.
func (s *Stream) overNotes() bool {
	if s.relayed < s.b.maxNotes {
		s.relayed++
		return false
	}
	if f := s.b.env.NotificationDropped; f != nil {
		f(s.b.name)
	}
	return true
}

// notificationHead is how jsonrpc.AppendNotification starts a notification whose method needs
// no escaping.
const notificationHead = `{"jsonrpc":"2.0","method":"`

// isCanonicalNotification reports whether data, a notification that passed
// jsonrpc.DecodeMessage with method and params (a slice of data), is byte for byte what
// jsonrpc.AppendNotification renders for them: then data itself can be relayed, and the client
// receives exactly the bytes the gateway checked. Anything else (spacing, member order, unknown
// members, a method with escapes or characters AppendString escapes or replaces) is rendered as before.
func isCanonicalNotification(data []byte, method string, params []byte) bool {
	for i := 0; i < len(method); i++ {
		switch c := method[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\':
			return false
		}
	}
	n := len(notificationHead) + len(method) + 1 // through the method's closing quote
	if len(data) < n+1 || string(data[:len(notificationHead)]) != notificationHead ||
		string(data[len(notificationHead):n-1]) != method || data[n-1] != '"' || data[len(data)-1] != '}' {
		return false
	}
	rest := data[n : len(data)-1]
	if params == nil {
		return len(rest) == 0
	}
	const member = `,"params":`
	// params must be the very bytes after the member name, not an equal copy elsewhere.
	return len(rest) == len(member)+len(params) && string(rest[:len(member)]) == member &&
		&rest[len(member)] == &params[0]
}

// OnWait sets fn to run whenever Next is about to wait for more of the backend's event stream,
// so a caller that holds back what it has relayed can send it first: events the backend sent
// together are relayed together, and none waits on a backend that pauses. It reports false for
// a stream that cannot tell (a JSON response, a pre-2026 backend), for which the caller must
// hold nothing back.
func (s *Stream) OnWait(fn func()) bool {
	if s.sse == nil || s.leg != nil {
		return false
	}
	s.sse.OnWait = fn
	return true
}

// hiddenResource is the response for a result (or error) that names only resources the
// caller may not see: the answer a hidden resource gets from the gateway itself, status and
// bytes, naming the URI the caller asked for, so the caller cannot tell the two apart. The
// result is not relayed.
func (s *Stream) hiddenResource() []byte {
	s.outcome = OutcomeBackendError
	s.status = http.StatusBadRequest
	msg := names.HiddenResourceMessage // a read always has a URI; this Stream was made without one
	if s.uri != "" {
		msg = names.UnknownResourceMessage(s.uri)
	}
	s.last = &jsonrpc.Message{Error: jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg)}
	return jsonrpc.AppendError(nil, s.id, s.last.Error)
}

// SSE reports whether the backend answered with an event stream; the caller then streams too.
func (s *Stream) SSE() bool { return s.isSSE }

// Status is the backend's HTTP status, to relay with a JSON-RPC error response.
func (s *Stream) Status() int { return s.status }

// Close ends the backend request, cancelling it if the response has not been
// read, and releases its buffers: Result must not be used afterwards. It is safe to call
// more than once.
func (s *Stream) Close() error {
	s.end(OutcomeCanceled, nil)
	s.body.Release()
	s.body = nil
	if s.sse != nil {
		s.sse.Release()
	}
	if s.leg != nil {
		s.leg.Free()
	}
	if s.shares != nil {
		s.shares.Give(s.bound) // after the buffers went back to the share
		s.shares = nil
	}
	return nil
}

func (s *Stream) fail(err error) {
	s.end(outcomeOf(err), err) // a failure never changes the backend's learnt era (era.go)
}

// end records the outcome once and releases the backend request.
func (s *Stream) end(outcome string, err error) {
	s.done = true
	s.once.Do(func() {
		s.b.record(s.method, s.charge, outcome, s.start, err, !s.probe)
		s.stop()
		if s.resp != nil {
			s.resp.Body.Close()
		}
		if s.leg != nil {
			s.endLegacy(outcome)
		}
	})
}
