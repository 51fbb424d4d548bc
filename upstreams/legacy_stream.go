package upstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// legacyRequest is a client request rewritten for a legacy backend.
type legacyRequest struct {
	method string
	params json.RawMessage // nil when the request had none
	logs   bool            // the client asked for log notifications (logLevel)
}

// openLegacy is open for a legacy backend: the request goes on a pooled session with a
// session-unique id, and the Stream translates what comes back.
func (r *Registry) openLegacy(s *Stream, o *outgoing) (*Stream, error) {
	lr, err := parseLegacyRequest(o.body)
	if err != nil {
		err = errorf(ErrBadResponse, s.b, "request for a legacy backend: %v", err)
		s.fail(err)
		return nil, err
	}
	if o.fromCaller && s.b.exchanges() {
		// Every request of this call, the side ones included, goes as the caller.
		s.ctx = withLegacyCaller(s.ctx, o.subject)
	}
	x, err := r.legacyStart(s.ctx, s.b, lr, o)
	if err != nil {
		s.fail(err)
		return nil, err
	}
	s.leg, s.resp, s.status = x, x.resp, x.resp.StatusCode
	if x.sse != nil {
		s.isSSE = true
		return s, nil
	}
	m, _ := x.next(s.ctx)
	if s.pending, err = s.final(translateLegacy(s.method, m)); err != nil {
		s.fail(err)
		return nil, err
	}
	return s, nil
}

// legacyStart sends lr on a pooled session: for a caller of a token-exchange backend one of
// that caller's own sessions, else one of the gateway's. A 404 to a request carrying a session
// id means the session expired (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management):
// the session is dropped, a fresh one initialized, and the request sent once more.
func (r *Registry) legacyStart(ctx context.Context, b *backend, lr *legacyRequest, o *outgoing) (*legacyExchange, error) {
	if err := b.breaker.allow(r.now(), false); err != nil {
		return nil, err
	}
	pool, owner, err := r.legacyPool(b, o)
	if err != nil {
		b.breaker.result(r.now(), OutcomeCanceled) // frees a half-open slot this request may hold
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		sess, err := pool.acquire(ctx, r, b)
		if err != nil {
			if owner != nil {
				b.legacy.callers.give(owner, r.now())
			}
			return nil, err
		}
		x := &legacyExchange{r: r, b: b, sess: sess, pool: pool, owner: owner, uid: sess.nextID(), logs: lr.logs}
		resp, err := r.legacyDo(ctx, b, sess, http.MethodPost, legacyRequestBody(x.uid, lr.method, lr.params), o.pass, "")
		if err != nil {
			if ctx.Err() != nil {
				x.end(ctx, outcomeOf(err)) // the request may have reached the backend
			}
			x.release()
			return nil, err
		}
		if resp.StatusCode == http.StatusNotFound && sess.id != "" && attempt == 0 {
			drainClose(resp.Body)
			pool.drop(sess)
			pool.release(sess)
			r.log.Info("legacy upstream session expired; initializing a new one", "upstream", b.name)
			continue
		}
		if err := x.accept(resp); err != nil {
			x.close()
			x.release()
			return nil, readErr(ctx, b, err)
		}
		return x, nil
	}
}

// legacyPool returns the pool o's request goes to. A caller of a token-exchange backend gets
// its own (owner, to hand back when done); without the caller's token the request is refused
// before anything is sent, never sent as the gateway. Sessions the pools closed to make room are
// ended in the background.
func (r *Registry) legacyPool(b *backend, o *outgoing) (*sessionPool, *callerPool, error) {
	if !o.fromCaller || !b.exchanges() {
		return &b.legacy.pool, nil, nil
	}
	if o.subject == "" {
		return nil, nil, fmt.Errorf("%w: %w: %s: no caller token to exchange", ErrUnavailable, ErrCredentials, b.name)
	}
	owner, closed, err := b.legacy.callers.take(callerKey(o), r.now())
	if len(closed) > 0 {
		go r.deleteSessions(b, closed)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w (limit %d)", ErrUnavailable, b.name, err, b.legacy.callers.max)
	}
	return &owner.pool, owner, nil
}

// nextLegacy is Stream.Next for a legacy SSE response: progress passes through, logs only when
// the client asked for them, and any other notification is dropped, as a 2026 response stream
// carries only notifications about its request (digest §2.1).
func (s *Stream) nextLegacy() ([]byte, bool, error) {
	for range maxSkippedNotifications {
		m, err := s.leg.next(s.ctx)
		if err != nil {
			err = readErr(s.ctx, s.b, err)
			s.fail(err)
			return nil, false, err
		}
		s.resp = s.leg.resp // a resumed stream has a new response
		switch {
		case m.IsResponse():
			msg, err := s.final(translateLegacy(s.method, m))
			if err != nil {
				s.fail(err)
				return nil, false, err
			}
			s.finish(s.outcome, nil)
			return msg, true, nil
		case m.Method == notifProgress, m.Method == notifMessage && s.leg.logs:
			return jsonrpc.AppendNotification(nil, m.Method, m.Params), false, nil
		}
	}
	err := errorf(ErrBadResponse, s.b, "too many notifications before the response")
	s.fail(err)
	return nil, false, err
}

// endLegacy is called once when the Stream finishes.
func (s *Stream) endLegacy(outcome string) {
	s.leg.end(s.ctx, outcome)
	s.leg.release()
}

// parseLegacyRequest takes the JSON-RPC request built for a modern backend apart and strips
// what a legacy backend must not see (digest §7 "Forwarding"): the modern _meta keys, which
// make an SDK treat the request as modern, and the MRTR members, which no legacy backend
// issued. progressToken, trace keys and everything else stay.
func parseLegacyRequest(body []byte) (*legacyRequest, error) {
	lr := &legacyRequest{}
	var params json.RawMessage
	err := jsonrpc.Members(body, func(key, val []byte) error {
		switch string(key) {
		case "method":
			return json.Unmarshal(val, &lr.method)
		case "params":
			params = val
		}
		return nil
	})
	if err != nil || params == nil || params[0] != '{' {
		return lr, err
	}
	lr.params, err = filterObject(nil, params, func(key string, val []byte) ([]byte, bool) {
		switch key {
		case "inputResponses", "requestState":
			return nil, false
		case "_meta":
			if val[0] != '{' {
				return val, true
			}
			meta, err := filterObject(nil, val, func(k string, v []byte) ([]byte, bool) {
				if k == jsonrpc.MetaLogLevel {
					lr.logs = true
				}
				return v, !modernMetaKey(k)
			})
			return meta, err == nil && string(meta) != "{}"
		}
		return val, true
	})
	return lr, err
}

func modernMetaKey(k string) bool {
	switch k {
	case jsonrpc.MetaProtocolVersion, jsonrpc.MetaClientCapabilities, jsonrpc.MetaClientInfo, jsonrpc.MetaLogLevel:
		return true
	}
	return false
}

// filterObject appends obj to dst keeping only the members fn keeps, with the values it returns.
func filterObject(dst, obj []byte, fn func(key string, val []byte) ([]byte, bool)) ([]byte, error) {
	dst = append(dst, '{')
	n := 0
	err := jsonrpc.Members(obj, func(key, val []byte) error {
		v, keep := fn(string(key), val)
		if !keep {
			return nil
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(appendString(dst, string(key)), ':')
		dst = append(dst, v...)
		return nil
	})
	return append(dst, '}'), err
}

// translateLegacy turns a legacy response into its 2026-07-28 form (digest §7 "Rewrite
// results"): -32002 (resource not found) becomes -32602, results get resultType, and cacheable
// results get ttlMs 0 and cacheScope private, since a legacy backend says nothing about caching.
func translateLegacy(method string, m *jsonrpc.Message) *jsonrpc.Message {
	if m.Error != nil {
		if m.Error.Code == legacyResourceNotFound {
			e := *m.Error
			e.Code = jsonrpc.CodeInvalidParams
			m.Error = &e
		}
		return m
	}
	cacheable := cacheableMethod(method)
	hasType := false
	res, err := filterObject(make([]byte, 0, len(m.Result)+48), m.Result, func(key string, val []byte) ([]byte, bool) {
		switch key {
		case "resultType":
			hasType = true
		case "ttlMs", "cacheScope":
			// Not legacy protocol: whatever an SDK put there was not meant for 2026 caches.
			return nil, !cacheable
		}
		return val, true
	})
	if err != nil {
		return m
	}
	var add []byte
	if !hasType {
		add = append(add, `"resultType":"complete"`...)
	}
	if cacheable {
		add = appendMember(add, `"ttlMs":0,"cacheScope":"private"`)
	}
	if len(add) > 0 {
		res = insertMembers(res, add)
	}
	m.Result = res
	return m
}

// legacyResourceNotFound is the pre-2026 resource-not-found code (digest §6: now -32602).
const legacyResourceNotFound = -32002

func cacheableMethod(method string) bool {
	switch method {
	case MethodToolsList, MethodPromptsList, MethodResourcesList, MethodResourceTemplates, MethodResourcesRead:
		return true
	}
	return false
}

func appendMember(dst []byte, member string) []byte {
	if len(dst) > 0 {
		dst = append(dst, ',')
	}
	return append(dst, member...)
}

// insertMembers adds members to the end of the scanned JSON object obj.
func insertMembers(obj, members []byte) []byte {
	end := len(obj) - 1
	for end > 0 && obj[end] != '}' {
		end--
	}
	empty := skipWS(obj, 1) == end
	out := make([]byte, 0, len(obj)+len(members)+1)
	out = append(out, obj[:end]...)
	if !empty {
		out = append(out, ',')
	}
	out = append(out, members...)
	return append(out, obj[end:]...)
}
