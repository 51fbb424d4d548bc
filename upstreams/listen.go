package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// subscriptions is the notifications object of subscriptions/listen and of its acknowledgement.
type subscriptions struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

func (s *subscriptions) empty() bool {
	return !s.ToolsListChanged && !s.PromptsListChanged && !s.ResourcesListChanged && len(s.ResourceSubscriptions) == 0
}

// Listen serves subscriptions/listen (digest §5.5). It first emits the gateway's own
// notifications/subscriptions/acknowledged with the honoured subset of the request: the
// list_changed kinds some backend supports, and the resource subscriptions whose URIs name a
// configured backend that supports resource subscriptions. It then opens one listen per backend that has a share, and emits their
// list_changed and resources/updated notifications re-tagged with the client's id (URIs in
// namespaced form); backends' acknowledgements and anything else are dropped. Backends that fail
// are skipped. Listen returns nil when ctx is done (the client closed the stream) or after
// emitting the graceful-end result once every backend stream has ended; it returns emit's error
// if emit fails. emit is never called concurrently.
func (r *Registry) Listen(ctx context.Context, id, params json.RawMessage, hdr http.Header, emit func(msg []byte) error) error {
	meta, want, err := parseListen(params)
	if err != nil {
		return err
	}
	m, err := jsonrpc.ParseMeta(meta)
	if err != nil {
		return err
	}
	honoured, shares := r.planListen(ctx, want, hdr)
	if err := emit(ackMessage(id, honoured)); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l := &listener{r: r, id: id, emit: emit, cancel: cancel}
	var wg sync.WaitGroup
	for i, b := range r.backends {
		if shares[i].empty() {
			continue
		}
		body := appendListenRequest(id, meta, &shares[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b.legacy.known() == eraLegacy {
				l.legacyBackend(ctx, b, &shares[i], hdr) // digest §7: the legacy GET stream
				return
			}
			l.backend(ctx, b, &outgoing{method: MethodListen, version: m.ProtocolVersion, pass: hdr, body: body})
		}()
	}
	wg.Wait()
	if err := l.emitErr(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	return l.send(jsonrpc.AppendResult(nil, id, listenEndResult(id)))
}

func parseListen(params json.RawMessage) (json.RawMessage, *subscriptions, error) {
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
	var want subscriptions
	if notifs == nil || notifs[0] != '{' || json.Unmarshal(notifs, &want) != nil {
		return nil, nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: notifications must be an object")
	}
	return meta, &want, nil
}

// planListen decides the honoured subset and each backend's share of it.
func (r *Registry) planListen(ctx context.Context, want *subscriptions, hdr http.Header) (subscriptions, []subscriptions) {
	var honoured subscriptions
	shares := make([]subscriptions, len(r.backends))
	ds, _ := r.discoverAll(ctx, hdr)
	for i, d := range ds {
		if d == nil {
			continue
		}
		c, s := &d.caps, &shares[i]
		s.ToolsListChanged = want.ToolsListChanged && c.Tools != nil && c.Tools.ListChanged
		s.PromptsListChanged = want.PromptsListChanged && c.Prompts != nil && c.Prompts.ListChanged
		s.ResourcesListChanged = want.ResourcesListChanged && c.Resources != nil && c.Resources.ListChanged
		honoured.ToolsListChanged = honoured.ToolsListChanged || s.ToolsListChanged
		honoured.PromptsListChanged = honoured.PromptsListChanged || s.PromptsListChanged
		honoured.ResourcesListChanged = honoured.ResourcesListChanged || s.ResourcesListChanged
	}
	for _, uri := range want.ResourceSubscriptions {
		t, err := r.ns.resolve(KindResource, uri)
		if err != nil {
			continue
		}
		i := r.indexOf(t.Upstream)
		if d := ds[i]; d == nil || d.caps.Resources == nil || !d.caps.Resources.Subscribe {
			continue // that backend cannot honour it
		}
		shares[i].ResourceSubscriptions = append(shares[i].ResourceSubscriptions, t.Name)
		honoured.ResourceSubscriptions = append(honoured.ResourceSubscriptions, uri)
	}
	return honoured, shares
}

func (r *Registry) indexOf(name string) int {
	for i, b := range r.backends {
		if b.name == name {
			return i
		}
	}
	return -1
}

func ackMessage(id json.RawMessage, honoured subscriptions) []byte {
	n, _ := json.Marshal(honoured)
	p := append([]byte(`{"_meta":{"`+jsonrpc.MetaSubscriptionID+`":`), id...)
	p = append(append(append(p, `},"notifications":`...), n...), '}')
	return jsonrpc.AppendNotification(nil, notifAcknowledged, p)
}

func listenEndResult(id json.RawMessage) []byte {
	p := append([]byte(`{"resultType":"complete","_meta":{"`+jsonrpc.MetaSubscriptionID+`":`), id...)
	return append(p, "}}"...)
}

func appendListenRequest(id, meta json.RawMessage, share *subscriptions) []byte {
	n, _ := json.Marshal(share)
	dst := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	dst = append(dst, `,"method":"subscriptions/listen","params":{`...)
	if meta != nil {
		dst = append(append(append(dst, `"_meta":`...), meta...), ',')
	}
	dst = append(append(dst, `"notifications":`...), n...)
	return append(dst, "}}"...)
}

// listener relays the backends' listen streams to one client.
type listener struct {
	r      *Registry
	id     json.RawMessage
	emit   func([]byte) error
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	err    error
}

func (l *listener) send(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if err := l.emit(msg); err != nil {
		l.err = err
		l.cancel(err)
		return err
	}
	return nil
}

func (l *listener) emitErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// backend runs one backend's listen stream until it ends, fails or ctx is done.
func (l *listener) backend(ctx context.Context, b *backend, o *outgoing) {
	start := l.r.now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Only the wait for response headers is bounded: the stream itself is long-lived.
	headers := time.AfterFunc(b.timeout, func() { cancel(errCallTimeout) })
	resp, err := l.r.send(ctx, b, o)
	headers.Stop()
	if err == nil {
		err = l.relay(ctx, b, resp)
		resp.Body.Close()
	}
	if err != nil && ctx.Err() == nil {
		l.r.log.Warn("upstream listen stream failed", "upstream", b.name, "error", err.Error())
	}
	l.r.record(b, MethodListen, outcomeOf(err), start, err, true)
}

// relay forwards the notifications of one backend listen stream.
func (l *listener) relay(ctx context.Context, b *backend, resp *http.Response) error {
	if _, isSSE := mediaType(resp.Header.Get("Content-Type")); !isSSE || resp.StatusCode/100 != 2 {
		return statusError(b.name, resp.StatusCode, "listen was not answered with an event stream")
	}
	rw := uriRewriter{ns: l.r.ns, upstream: b.name}
	sse := newSSEReader(resp.Body, int(b.maxBytes))
	for {
		data, err := sse.next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errEventTooLarge):
			return fmt.Errorf("%w: %s: %v", ErrBadResponse, b.name, err)
		case err != nil:
			return classify(ctx, b.name, err)
		}
		m, err := jsonrpc.DecodeMessage(data, jsonLimits(b.maxBytes))
		if err != nil {
			return fmt.Errorf("%w: %s: listen event is not a JSON-RPC message", ErrBadResponse, b.name)
		}
		if m.IsResponse() {
			return nil // the backend ended its subscription gracefully
		}
		if msg := l.retag(rw, m); msg != nil {
			if err := l.send(msg); err != nil {
				return err
			}
		}
	}
}

// retag renders a backend notification for the client, tagged with the client's listen id, or
// returns nil for messages that are not relayed.
func (l *listener) retag(rw uriRewriter, m *jsonrpc.Message) []byte {
	p := append([]byte(`{"_meta":{"`+jsonrpc.MetaSubscriptionID+`":`), l.id...)
	p = append(p, '}')
	switch m.Method {
	case notifToolsListChanged, notifPromptsListChanged, notifResourcesListChanged:
	case notifResourcesUpdated:
		uri, ok := updatedURI(m.Params)
		if !ok {
			return nil
		}
		p = append(p, `,"uri":`...)
		p = appendString(p, rw.ns.name(KindResource, Target{Upstream: rw.upstream, Name: uri}))
	default:
		return nil
	}
	return jsonrpc.AppendNotification(nil, m.Method, append(p, '}'))
}

func updatedURI(params json.RawMessage) (string, bool) {
	var uri string
	var ok bool
	if params == nil || params[0] != '{' {
		return "", false
	}
	_ = jsonrpc.Members(params, func(key, val []byte) error {
		if string(key) == "uri" {
			uri, ok = jsonString(val)
		}
		return nil
	})
	return uri, ok
}
