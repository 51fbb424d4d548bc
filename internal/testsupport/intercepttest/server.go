// Package intercepttest runs interceptors for tests: an Interceptor Server (SEP-2624) built on
// the official Go SDK, which declares the io.modelcontextprotocol/interceptors extension and
// answers interceptors/list and interceptor/invoke over Streamable HTTP (2026-07-28 stateless,
// or a 2025-11-25 session), and a plain HTTP webhook with the same contract. No release of the
// extension's reference implementation can be installed (its Go and TypeScript SDKs are
// "planned"), so the server speaks the messages the SEP documents: the hooks array, the
// ValidationResult and MutationResult shapes, -32602 for an unknown name and -32603 for a
// failure or a timeout.
//
// What an interceptor decides is a Handler; Allow, Deny, Mutate, Slow and Raw make the usual
// ones. A server can also be made to crash (every connection is dropped), to answer garbage, or
// to answer with another request's id.
package intercepttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ExtensionID is the extension identifier the server declares.
const ExtensionID = "io.modelcontextprotocol/interceptors"

// Invocation is one interceptor/invoke as the server received it.
type Invocation struct {
	Name      string          `json:"name"`
	Event     string          `json:"event"`
	Phase     string          `json:"phase"`
	Payload   json.RawMessage `json:"payload"`
	Config    json.RawMessage `json:"config,omitempty"`
	TimeoutMs int64           `json:"timeoutMs,omitempty"`
	Context   json.RawMessage `json:"context,omitempty"`
}

// Handler decides one invocation: the result object to answer with, or an error (a
// *jsonrpc.Error is answered as it is, any other as -32603).
type Handler func(ctx context.Context, inv *Invocation) (json.RawMessage, error)

// Interceptor is one interceptor the server hosts.
type Interceptor struct {
	Name   string
	Type   string   // "validation" or "mutation"
	Events []string // default tools/call, prompts/get, resources/read
	Handle Handler
}

// Server is a running interceptor: an Interceptor Server or a webhook.
type Server struct {
	http    *httptest.Server
	mu      sync.Mutex
	byName  map[string]Interceptor
	order   []string
	invs    []Invocation
	headers []http.Header
	crashed atomic.Bool
	garbage atomic.Bool
	otherID atomic.Bool
	stall   atomic.Pointer[stall]
}

// Option configures a server.
type Option func(*options)

type options struct{ legacy bool }

// Legacy starts the Interceptor Server in the stateful 2025-11-25 mode: the gateway must
// initialize a session first, as with any pre-2026 server.
func Legacy() Option { return func(o *options) { o.legacy = true } }

// Start starts an Interceptor Server hosting ics on a loopback address, closed when tb ends.
func Start(tb testing.TB, ics []Interceptor, opts ...Option) *Server {
	tb.Helper()
	var o options
	for _, f := range opts {
		f(&o)
	}
	s := newServer(ics)
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(ExtensionID, map[string]any{"supportedEvents": []string{"tools/call", "prompts/get", "resources/read"}})
	srv := mcp.NewServer(&mcp.Implementation{Name: "interceptors", Version: "1.0.0"}, &mcp.ServerOptions{Capabilities: caps})
	must(tb, mcp.AddReceivingCustomMethod(srv, "interceptors/list", s.list))
	must(tb, mcp.AddReceivingCustomMethod(srv, "interceptor/invoke", s.invoke))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: !o.legacy, PropagateRequestCancellation: true})
	s.start(tb, h)
	return s
}

// StartWebhook starts a webhook hosting ics: POST the interceptor/invoke params, get the
// result object back (200), or 500 for a failure.
func StartWebhook(tb testing.TB, ics []Interceptor) *Server {
	tb.Helper()
	s := newServer(ics)
	s.start(tb, http.HandlerFunc(s.serveWebhook))
	return s
}

func newServer(ics []Interceptor) *Server {
	s := &Server{byName: map[string]Interceptor{}}
	for _, ic := range ics {
		if ic.Events == nil {
			ic.Events = []string{"tools/call", "prompts/get", "resources/read"}
		}
		s.byName[ic.Name] = ic
		s.order = append(s.order, ic.Name)
	}
	return s
}

func (s *Server) start(tb testing.TB, h http.Handler) {
	s.http = httptest.NewServer(s.wrap(h))
	tb.Cleanup(s.Close)
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// wrap records each invocation's headers and plays the crash and garbage modes.
func (s *Server) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.crashed.Load() {
			panic(http.ErrAbortHandler) // the connection is dropped, as by a process dying
		}
		if r.Method == http.MethodPost && (r.Header.Get("Mcp-Method") == "interceptor/invoke" || r.Header.Get("Mcp-Method") == "") {
			s.mu.Lock()
			s.headers = append(s.headers, r.Header.Clone())
			s.mu.Unlock()
		}
		if s.garbage.Load() && r.Method == http.MethodPost {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{this is not json"))
			return
		}
		if st := s.stall.Load(); st != nil && r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(st.marker)) {
				sw := &stallWriter{ResponseWriter: w, st: st, ctx: r.Context()}
				h.ServeHTTP(sw, r)
				sw.settle()
				return
			}
		}
		if s.otherID.Load() && r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "interceptor/invoke" {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(bytes.Replace(rec.Body.Bytes(), []byte(`"id":1,`), []byte(`"id":2,`), 1))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// URL is the endpoint: the MCP endpoint of an Interceptor Server, the webhook's URL.
func (s *Server) URL() string { return s.http.URL + "/interceptors" }

// Close stops the server; it is registered with tb.Cleanup.
func (s *Server) Close() {
	s.http.CloseClientConnections()
	s.http.Close()
}

// SetCrashed makes every request drop its connection (true) or be served again (false).
func (s *Server) SetCrashed(on bool) { s.crashed.Store(on) }

// SetOtherID makes an Interceptor Server answer each invocation with its answer's id changed
// (on true): an answer to another request.
func (s *Server) SetOtherID(on bool) { s.otherID.Store(on) }

// Stall makes the answer to each request whose body contains marker stop once its first after
// bytes are written and flushed, until release is called or the request ends: an answer the
// client is still reading, holding what has arrived. settled receives once for each such
// request, when its answer stops there, or when its handler returns first (the client went
// away before, say).
func (s *Server) Stall(marker string, after int) (settled <-chan struct{}, release func()) {
	st := &stall{marker: marker, after: after, settled: make(chan struct{}, 1024), release: make(chan struct{})}
	s.stall.Store(st)
	var once sync.Once
	return st.settled, func() { once.Do(func() { close(st.release) }) }
}

// stall is the setting of Stall.
type stall struct {
	marker  string
	after   int
	settled chan struct{}
	release chan struct{}
}

// stallWriter writes an answer up to its stall point, then waits.
type stallWriter struct {
	http.ResponseWriter
	st      *stall
	ctx     context.Context
	written int
	done    bool // settled
}

func (w *stallWriter) Write(p []byte) (int, error) {
	if w.done || w.written+len(p) <= w.st.after {
		n, err := w.ResponseWriter.Write(p)
		w.written += n
		return n, err
	}
	k := w.st.after - w.written
	n, err := w.ResponseWriter.Write(p[:k])
	w.written += n
	if err != nil {
		return n, err
	}
	w.Flush()
	w.settle()
	select {
	case <-w.st.release:
	case <-w.ctx.Done():
		return n, w.ctx.Err()
	}
	m, err := w.ResponseWriter.Write(p[k:])
	w.written += m
	return n + m, err
}

// Flush flushes what is written, for the handlers that stream.
func (w *stallWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap is the writer wrapped, for http.ResponseController.
func (w *stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *stallWriter) settle() {
	if !w.done {
		w.done = true
		w.st.settled <- struct{}{}
	}
}

// SetGarbage makes every POST answered 200 with a body that is not JSON.
func (s *Server) SetGarbage(on bool) { s.garbage.Store(on) }

// Invocations returns the invocations received so far, oldest first.
func (s *Server) Invocations() []Invocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.invs)
}

// Headers returns the HTTP headers of the invocations received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.headers)
}

// Reset forgets the invocations and headers received.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invs, s.headers = nil, nil
}

type listParams struct {
	mcp.ParamsBase
	Event string `json:"event,omitempty"`
}

type invokeParams struct {
	mcp.ParamsBase
	Invocation
}

// rawResult is a result whose JSON is given as it is, so a handler can answer any shape, even
// a wrong one.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

type hook struct {
	Events []string `json:"events"`
	Phase  string   `json:"phase"`
}

func (ic Interceptor) hooks() []hook {
	return []hook{{ic.Events, "request"}, {ic.Events, "response"}}
}

func (s *Server) list(_ context.Context, _ *mcp.ServerSession, p *listParams) (*rawResult, error) {
	type desc struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Hooks []hook `json:"hooks"`
	}
	out := struct {
		Interceptors []desc `json:"interceptors"`
	}{Interceptors: []desc{}}
	for _, n := range s.order {
		ic := s.byName[n]
		if p.Event == "" || slices.Contains(ic.Events, p.Event) {
			out.Interceptors = append(out.Interceptors, desc{ic.Name, ic.Type, ic.hooks()})
		}
	}
	b, err := json.Marshal(out)
	return &rawResult{raw: b}, err
}

func (s *Server) invoke(ctx context.Context, ss *mcp.ServerSession, p *invokeParams) (*rawResult, error) {
	res, err := s.dispatch(context.WithValue(ctx, sessionKey{}, ss), &p.Invocation)
	if err != nil {
		return nil, err
	}
	return &rawResult{raw: res}, nil
}

// sessionKey is the context key of the session an invocation came on.
type sessionKey struct{}

// SessionOf returns the session of the Interceptor Server that ctx's invocation came on (nil for
// a webhook's): a Handler that sends requests of its own to the gateway (an elicitation, a
// sampling request, roots/list) sends them through it.
func SessionOf(ctx context.Context) *mcp.ServerSession {
	ss, _ := ctx.Value(sessionKey{}).(*mcp.ServerSession)
	return ss
}

// dispatch records inv and runs its interceptor's handler, within timeoutMs as the SEP's T1
// requires of a host.
func (s *Server) dispatch(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
	s.mu.Lock()
	s.invs = append(s.invs, *inv)
	ic, ok := s.byName[inv.Name]
	s.mu.Unlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: -32602, Message: "Unknown interceptor", Data: mustJSON(map[string]string{"name": inv.Name})}
	}
	if inv.TimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(inv.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	res, err := ic.Handle(ctx, inv)
	if err == nil {
		return res, nil
	}
	if e, ok := err.(*jsonrpc.Error); ok {
		return nil, e
	}
	reason := err.Error()
	msg := "Interceptor execution failed"
	if ctx.Err() == context.DeadlineExceeded {
		reason, msg = "timeout", "Interceptor execution timeout"
	}
	return nil, &jsonrpc.Error{Code: -32603, Message: msg,
		Data: mustJSON(map[string]any{"interceptor": inv.Name, "reason": reason, "phase": inv.Phase})}
}

func (s *Server) serveWebhook(w http.ResponseWriter, r *http.Request) {
	var inv Invocation
	body, err := io.ReadAll(r.Body)
	if err != nil || json.Unmarshal(body, &inv) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	res, err := s.dispatch(r.Context(), &inv)
	if err != nil {
		http.Error(w, "interceptor failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(res)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Allow is a validator that allows every call.
func Allow() Handler {
	return func(_ context.Context, inv *Invocation) (json.RawMessage, error) {
		return Validation(inv, true, ""), nil
	}
}

// Deny is a validator that refuses every call with message.
func Deny(message string) Handler {
	return func(_ context.Context, inv *Invocation) (json.RawMessage, error) {
		return Validation(inv, false, message), nil
	}
}

// DenyIf is a validator that refuses a call whose payload contains needle.
func DenyIf(needle, message string) Handler {
	return func(_ context.Context, inv *Invocation) (json.RawMessage, error) {
		return Validation(inv, !bytes.Contains(inv.Payload, []byte(needle)), message), nil
	}
}

// Validation is the ValidationResult of inv: valid, or refused with message at severity
// error.
func Validation(inv *Invocation, valid bool, message string) json.RawMessage {
	res := map[string]any{"interceptor": inv.Name, "type": "validation", "phase": inv.Phase, "valid": valid}
	if !valid {
		res["severity"] = "error"
		res["messages"] = []map[string]string{{"message": message, "severity": "error"}}
	}
	return mustJSON(res)
}

// Mutate is a mutator that replaces the payload with fn's answer; fn returning nil leaves it
// unchanged (modified: false).
func Mutate(fn func(phase string, payload json.RawMessage) json.RawMessage) Handler {
	return func(_ context.Context, inv *Invocation) (json.RawMessage, error) {
		out := fn(inv.Phase, inv.Payload)
		modified := out != nil
		if !modified {
			out = inv.Payload
		}
		return mustJSON(map[string]any{"interceptor": inv.Name, "type": "mutation", "phase": inv.Phase,
			"modified": modified, "payload": out}), nil
	}
}

// Slow runs h after d, or fails when the invocation is cancelled or its timeoutMs passes
// first.
func Slow(d time.Duration, h Handler) Handler {
	return func(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return h(ctx, inv)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Raw answers every invocation with result, whatever it is.
func Raw(result string) Handler {
	return func(context.Context, *Invocation) (json.RawMessage, error) { return json.RawMessage(result), nil }
}
