// Package listen serves subscriptions/listen through the gateway: the acknowledgement of what the
// backends can honour for this caller, one backend listen stream per backend with a share of the
// subscriptions (a pre-2026 backend's GET stream on a session of its own, legacy.go), shared
// between identical listens (feed.go), and a bounded queue per client between a shared stream
// and the client's own writes (queue.go).
//
// It sees the backends through package backend and a Source, which also says what each backend
// offers (its server/discover answer) and hears of every list_changed a stream brings, so the
// lists' cache can drop what it makes stale.
package listen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Source is what listens need of the backends they listen to.
type Source struct {
	// Backends are the backends, in configuration order.
	Backends []*backend.Backend
	// Names namespaces their names and URIs.
	Names *names.Space
	// Discover returns each backend's server/discover answer (cached or fetched), in the order
	// of Backends, nil for a backend that did not answer.
	Discover func(ctx context.Context, hdr http.Header) []*backend.Discovered
	// Changed, when set, hears each list_changed notification (its method) a backend sends on a
	// stream, on the stream's goroutine before the stream's subscribers hear it, so that the
	// lists it makes stale are gone when they list again; it must return promptly.
	Changed func(upstream, method string)
	// Results is the replica's budget of result bytes in flight: the notifications waiting for
	// clients (Listens) and the buffers of the backend listen streams are charged to it. Nil
	// charges nothing.
	Results *bodyread.Budget
	// Log receives the streams that fail. Required.
	Log *slog.Logger
	// Now returns the current time. Required.
	Now func() time.Time
}

// subscriptions is the notifications object of subscriptions/listen and of its acknowledgement,
// its resource URIs of the form U: what a client asks for and is acknowledged (asked) names
// client URIs, what one backend's stream asks it for (share) backend URIs.
type subscriptions[U ~string] struct {
	ToolsListChanged      bool `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []U  `json:"resourceSubscriptions,omitempty"`
}

// asked is what a client's listen asks for, and the honoured part of it, in client URIs.
type asked = subscriptions[names.Namespaced]

// share is one backend's part of a listen, in that backend's URIs.
type share = subscriptions[string]

func (s *subscriptions[U]) empty() bool {
	return !s.ToolsListChanged && !s.PromptsListChanged && !s.ResourcesListChanged && len(s.ResourceSubscriptions) == 0
}

// Listen serves subscriptions/listen
// (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions). It
// first emits the gateway's own notifications/subscriptions/acknowledged with the honoured
// subset of the request: the list_changed kinds some backend the caller reaches supports
// (Caller.Reaches: a backend its policy gives it nothing of is not listened to for it), and the resource
// subscriptions whose URIs name a configured backend that supports resource subscriptions and
// that visible allows (the caller's policy: a caller must not learn when a resource it may not
// read changes; nil allows every resource). It then listens to every backend that has a share,
// and emits their list_changed and resources/updated notifications re-tagged with the client's
// id (URIs in namespaced form), each only if the client subscribed to it on that backend and,
// for resources/updated, visible allows the resource; backends' acknowledgements and anything
// else are dropped. Backends whose streams fail to start are skipped. Listen returns nil when
// ctx is done (the client closed the stream), after emitting the graceful-end result once every
// backend stream has ended or one that had started has (the client listens again, which opens
// it again: it must not go on listening without it unaware), or after emitting the Overflow
// error when the client fell too far behind; it returns emit's error if emit fails. emit is
// never called concurrently, and only on the caller's goroutine.
//
// Each call opens backend streams of its own; Listens.Listen shares them between identical
// listens.
func (src *Source) Listen(ctx context.Context, id, params json.RawMessage, hdr http.Header, visible func(names.Kind, names.Target) bool, emit func(msg []byte) error) error {
	return src.listen(ctx, nil, defaultQueueLimits, id, params, hdr, Caller{Visible: visible}, emit)
}

// listen is Listen with the backend streams taken from hub (nil: private streams). The set-up
// is in subscribe, so that its locals are not in the frame an idle listen blocks under (see
// subscriber.relay).
func (src *Source) listen(ctx context.Context, hub *Listens, limits queueLimits, id, params json.RawMessage, hdr http.Header, c Caller, emit func(msg []byte) error) error {
	s, err := src.subscribe(ctx, hub, limits, id, params, hdr, c, emit)
	if s != nil {
		defer s.leave()
	}
	if err != nil {
		return err
	}
	return s.relay(ctx, id, emit)
}

// subscribe parses the listen, joins the backend streams and emits the acknowledgement. A
// non-nil subscriber must leave, also when err is set.
//
//go:noinline
func (src *Source) subscribe(ctx context.Context, hub *Listens, limits queueLimits, id, params json.RawMessage, hdr http.Header, c Caller, emit func(msg []byte) error) (*subscriber, error) {
	meta, want, err := parseListen(params)
	if err != nil {
		return nil, err
	}
	m, err := jsonrpc.ParseMeta(meta)
	if err != nil {
		return nil, err
	}
	honoured, shares := src.plan(ctx, want, hdr, &c)
	s := newSubscriber(hub, limits, c)
	// Join before acknowledging: a client that has the acknowledgement is subscribed, and what a
	// shared backend stream delivers meanwhile waits in s's queue until relay sends it.
	for i, b := range src.Backends {
		if shares[i].empty() {
			continue
		}
		spec := &feedSpec{src: src, b: b, share: &shares[i], meta: meta, version: m.ProtocolVersion, id: id, pass: hdr}
		if spec.subject = b.SubjectFor(c.Subject); spec.subject != "" {
			spec.subjectKey, spec.caller = c.SubjectKey, c.Key
			if spec.subjectKey == "" { // cmp.Or would hash the token even when the key is given
				spec.subjectKey = backend.SubjectKey(spec.subject)
			}
		}
		hub.join(ctx, s, spec)
	}
	return s, emit(ackMessage(id, honoured))
}

func parseListen(params json.RawMessage) (json.RawMessage, *asked, error) {
	var meta, notifs json.RawMessage
	if params != nil {
		err := jsonrpc.Members(params, func(key, val []byte) error {
			switch string(key) {
			case "_meta":
				meta = val
			case "notifications":
				notifs = val
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	var want asked
	if notifs == nil || notifs[0] != '{' || json.Unmarshal(notifs, &want) != nil {
		return nil, nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: notifications must be an object")
	}
	return meta, &want, nil
}

// plan decides the honoured subset and each backend's share of it, for the caller c.
func (src *Source) plan(ctx context.Context, want *asked, hdr http.Header, c *Caller) (asked, []share) {
	visible := c.Visible
	var honoured asked
	shares := make([]share, len(src.Backends))
	ds := src.Discover(ctx, hdr)
	for i, d := range ds {
		if d == nil || !c.reaches(src.Backends[i].Name()) {
			continue // a backend the caller must not learn of: not even that its lists change
		}
		caps, s := &d.Caps, &shares[i]
		s.ToolsListChanged = want.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
		s.PromptsListChanged = want.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
		s.ResourcesListChanged = want.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
		honoured.ToolsListChanged = honoured.ToolsListChanged || s.ToolsListChanged
		honoured.PromptsListChanged = honoured.PromptsListChanged || s.PromptsListChanged
		honoured.ResourcesListChanged = honoured.ResourcesListChanged || s.ResourcesListChanged
	}
	for _, uri := range want.ResourceSubscriptions {
		t, err := src.Names.Resolve(names.KindResource, uri)
		if err != nil || visible != nil && !visible(names.KindResource, t) {
			continue // no such backend, or not the caller's to read: not honoured
		}
		i := src.indexOf(t.Upstream)
		if d := ds[i]; d == nil || d.Caps.Resources == nil || !d.Caps.Resources.Subscribe {
			continue // that backend cannot honour it
		}
		sent, err := c.backendURI(ctx, t)
		if err != nil {
			continue // a spelling that could name another resource: never sent
		}
		shares[i].ResourceSubscriptions = append(shares[i].ResourceSubscriptions, sent)
		// Acknowledged in the normal form that later updates carry, not as the client spelt it.
		honoured.ResourceSubscriptions = append(honoured.ResourceSubscriptions, src.Names.Name(names.KindResource, t))
	}
	return honoured, shares
}

// reaches reports whether the caller may learn anything of upstream (Caller.Reaches).
func (c *Caller) reaches(upstream string) bool { return c.Reaches == nil || c.Reaches(upstream) }

// backendURI is how a subscription to t goes to its backend: in the spelling resources/read of
// t is sent in (backend.ResourceURI), so the backend subscribes the resource it reads, and
// updates, under that URI.
func (c *Caller) backendURI(ctx context.Context, t names.Target) (string, error) {
	var spelling string
	if c.Spell != nil {
		spelling = c.Spell(ctx, t)
	}
	return backend.ResourceURI(t.Name, spelling)
}

func (src *Source) indexOf(upstream string) int {
	for i, b := range src.Backends {
		if b.Name() == upstream {
			return i
		}
	}
	return -1
}

func ackMessage(id json.RawMessage, honoured asked) []byte {
	n, _ := json.Marshal(honoured)
	p := append([]byte(`{"_meta":{"`+jsonrpc.MetaSubscriptionID+`":`), id...)
	p = append(append(append(p, `},"notifications":`...), n...), '}')
	return jsonrpc.AppendNotification(nil, wire.NotifAcknowledged, p)
}

func listenEndResult(id json.RawMessage) []byte {
	p := append([]byte(`{"resultType":"complete","_meta":{"`+jsonrpc.MetaSubscriptionID+`":`), id...)
	return append(p, "}}"...)
}

func appendListenRequest(id, meta json.RawMessage, sh *share) []byte {
	n, _ := json.Marshal(sh)
	dst := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	dst = append(dst, `,"method":"subscriptions/listen","params":{`...)
	if meta != nil {
		dst = append(append(append(dst, `"_meta":`...), meta...), ',')
	}
	dst = append(append(dst, `"notifications":`...), n...)
	return append(dst, "}}"...)
}

// backend runs one backend's listen stream until it ends, fails or ctx is done.
func (f *feed) backend(ctx context.Context) error {
	src, b := f.spec.src, f.spec.b
	start := src.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req := f.spec.request()
	o := &req
	o.Body = appendListenRequest(f.spec.id, f.spec.meta, f.spec.share)
	// Only the wait for response headers is bounded: the stream itself is long-lived.
	headers := time.AfterFunc(b.Timeout(), func() { cancel(wire.ErrCallTimeout) })
	resp, err := b.Post(ctx, o)
	headers.Stop()
	if err == nil {
		err = f.relay(ctx, resp)
		resp.Body.Close()
	}
	if err != nil && ctx.Err() == nil && !errors.Is(err, wire.ErrRateLimited) {
		src.Log.Warn("upstream listen stream failed", "upstream", b.Name(), "error", err.Error())
	}
	b.Record(o, start, err)
	return err
}

// relay publishes the notifications of one backend listen stream.
func (f *feed) relay(ctx context.Context, resp *http.Response) error {
	b := f.spec.b
	if _, isSSE := wire.MediaType(resp.Header.Get("Content-Type")); !isSSE || resp.StatusCode/100 != 2 {
		return wire.StatusError(b.Name(), resp.StatusCode, "listen was not answered with an event stream")
	}
	sse := wire.NewSSEReaderSize(resp.Body, int(b.MaxBytes()), wire.SSEListenBuffer)
	// What the stream's events hold is charged as they are read (streamBudget): an event that
	// does not fit ends the stream, and its listens then end as when a backend ends it.
	sse.Budget = f.streamBudget()
	defer sse.Release()
	for started := false; ; {
		data, err := sse.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			// An event past the backend's size limit is its failure; one the replica's
			// budget of result bytes cannot take (sse.Budget) is the gateway's overload.
			return backend.ReadErr(ctx, b, sse.Budget, err)
		}
		m, err := jsonrpc.DecodeMessage(data, wire.JSONLimits(b.MaxBytes()))
		if err != nil {
			return fmt.Errorf("%w: %s: listen event is not a JSON-RPC message", wire.ErrBadResponse, b.Name())
		}
		if m.IsResponse() {
			return listenAnswer(b.Name(), m, f.spec.id)
		}
		if !started {
			// The backend's first notification (its acknowledgement, as a rule) starts the
			// stream; one answered at once, with an error say, never started (feed.start).
			started = true
			f.start()
		}
		if ev, ok := eventOf(f.spec.src.Names, b.Name(), m); ok {
			f.publish(ev)
		}
	}
}

// listenAnswer is what a response on a backend listen stream says: its end. A result for the
// listen is a graceful end (nil); an error for it, the backend refusing or ending the listen;
// an answer to another request, a fault (wire.CheckAnswer), as on a call.
func listenAnswer(upstream string, m *jsonrpc.Message, id json.RawMessage) error {
	if err := wire.CheckAnswer(upstream, m, id); err != nil {
		return err
	}
	if m.Error != nil {
		return fmt.Errorf("%w: %s: listen ended with error %d", backend.ErrAnsweredWithError, upstream, m.Error.Code)
	}
	return nil
}

// listenEvent is a backend notification as every subscriber gets it, short of the
// subscription id each one's copy is tagged with.
type listenEvent struct {
	method string
	uri    names.Namespaced // the client URI of resources/updated; empty otherwise
	target string           // the backend URI of resources/updated, for the subscription and policy
	cover  names.Namespaced // the client URI of the subscription that covers it (see listenFilter)
}

// uriReader reads a backend URI of one backend, one the backend sends or is sent: its normal
// form and its client URI, or false when it has no normal form.
type uriReader func(backendURI string) (normal string, client names.Namespaced, ok bool)

// readURI returns the uriReader of upstream: names.Space.ClientResource, which eventOf reads the
// URIs of resources/updated with, so a subscription and the updates of its resource meet in one
// normal form whichever spelling each was written in.
func (src *Source) readURI(upstream string) uriReader {
	return func(uri string) (string, names.Namespaced, bool) {
		t, client, ok := src.Names.ClientResource(upstream, uri, nil)
		return t.Name, client, ok
	}
}

// eventOf returns the relayed form of a notification of the backend upstream, or false for
// messages that are not relayed.
func eventOf(ns *names.Space, upstream string, m *jsonrpc.Message) (listenEvent, bool) {
	switch m.Method {
	case wire.NotifToolsListChanged, wire.NotifPromptsListChanged, wire.NotifResourcesListChanged:
		return listenEvent{method: m.Method}, true
	case wire.NotifResourcesUpdated:
		uri, ok := updatedURI(m.Params)
		if !ok {
			return listenEvent{}, false
		}
		// The URI is matched against subscriptions and policy in its normal form, the form
		// the gateway authorises and forwards (internal/resuri); one without a normal form
		// is relayed to nobody. Each listener's policy is applied when it is offered
		// (subscriber.offer).
		t, name, ok := ns.ClientResource(upstream, uri, nil)
		if !ok {
			return listenEvent{}, false
		}
		return listenEvent{method: m.Method, uri: name, target: t.Name}, true
	}
	return listenEvent{}, false
}

// render tags ev with the client's listen id.
func (ev listenEvent) render(id json.RawMessage) []byte {
	p := append([]byte(`{"_meta":{"`+jsonrpc.MetaSubscriptionID+`":`), id...)
	p = append(p, '}')
	if ev.method == wire.NotifResourcesUpdated {
		p = append(p, `,"uri":`...)
		p = jsonrpc.AppendString(p, string(ev.uri))
	}
	return jsonrpc.AppendNotification(nil, ev.method, append(p, '}'))
}

func updatedURI(params json.RawMessage) (string, bool) {
	var uri string
	var ok bool
	if params == nil || params[0] != '{' {
		return "", false
	}
	_ = jsonrpc.Members(params, func(key, val []byte) error {
		if string(key) == "uri" {
			uri, ok = wire.JSONString(val)
		}
		return nil
	})
	return uri, ok
}
