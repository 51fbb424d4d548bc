package upstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// Bounds of a legacy round trip.
const (
	// maxResumes bounds the SEP-1699 reconnections of one response stream.
	maxResumes = 10
	// maxResumeDelay caps the backend's retry hint before reconnecting.
	maxResumeDelay = 5 * time.Second
	// legacySideTimeout bounds the gateway's side messages to a legacy backend: answers to its
	// requests, notifications/cancelled, DELETE of a listen session.
	legacySideTimeout = 5 * time.Second
)

// legacyDo sends one HTTP request on session s: a POST of body, or a GET stream (body nil)
// resuming after lastEventID when set.
func (r *Registry) legacyDo(ctx context.Context, b *backend, s *legacySession, method string, body []byte, pass http.Header, lastEventID string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.url, rd)
	if err != nil {
		return nil, errorf(ErrUnavailable, b, "building request: %v", err)
	}
	req.Header = legacyHeader(b, s, pass)
	if body == nil {
		req.Header.Del("Content-Type")
		req.Header.Set("Accept", "text/event-stream")
	}
	if lastEventID != "" {
		req.Header.Set(mcpheader.LastEventID, lastEventID)
	}
	if b.creds != nil {
		auth, err := legacyAuth(ctx, b, s)
		if err != nil {
			if !errors.Is(err, ErrUnavailable) {
				err = wire.Classify(ctx, b.name, err)
			}
			return nil, err
		}
		req.Header.Set("Authorization", auth)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, wire.Classify(ctx, b.name, err)
	}
	return resp, nil
}

// legacyAuth returns the Authorization of a request on session s. A session of the gateway
// (shared by the callers of a backend that sees the gateway as one identity, or the gateway's
// own discover, probes and listens) authenticates with the client credentials grant; a session
// of one caller of a token-exchange backend with that caller's exchanged token, from the subject
// the request's ctx carries. A caller's request on a gateway session, or a request without the
// caller on a caller's session, fails closed.
func legacyAuth(ctx context.Context, b *backend, s *legacySession) (string, error) {
	subject, fromCaller := legacySubject(ctx)
	if fromCaller != s.caller {
		return "", fmt.Errorf("%w: %w: %s: a legacy session is used only by the identity it was opened for",
			ErrUnavailable, ErrCredentials, b.name)
	}
	return b.creds.authorization(ctx, subject, fromCaller)
}

// legacyCallerKey is the context key of the caller's token for a token-exchange legacy backend.
type legacyCallerKey struct{}

// withLegacyCaller marks ctx as a caller's request to a token-exchange legacy backend: the
// requests made under it (the call, its handshake, answers to the backend's requests, resumes
// and cancellations) exchange subject, the caller's verified token, which is never sent itself.
func withLegacyCaller(ctx context.Context, subject string) context.Context {
	return context.WithValue(ctx, legacyCallerKey{}, subject)
}

func legacySubject(ctx context.Context) (subject string, fromCaller bool) {
	subject, fromCaller = ctx.Value(legacyCallerKey{}).(string)
	return subject, fromCaller
}

// legacyRoundTrip is one request on a legacy session and its response, read as JSON or as an
// SSE stream that may be resumed.
type legacyRoundTrip struct {
	r        *Registry
	b        *backend
	sess     *legacySession
	pool     *sessionPool    // where sess came from, when the round trip holds it (legacyStart)
	owner    *callerPool     // the caller's pool holding pool, for a token-exchange backend
	uid      json.RawMessage // the request's id on the session
	resp     *http.Response
	sse      *legacySSE
	json     *jsonrpc.Message // the response, when it came as JSON
	resumes  int
	answered bool // the response to the request has been read
	logs     bool // relay notifications/message: the client's request asked for logs
}

// accept takes the POST response: an SSE stream, or a JSON body read at once.
func (x *legacyRoundTrip) accept(resp *http.Response) error {
	x.resp = resp
	isJSON, isSSE := wire.MediaType(resp.Header.Get("Content-Type"))
	switch {
	case isSSE && resp.StatusCode/100 == 2:
		x.sse = newLegacySSE(resp.Body, int(x.b.maxBytes))
		return nil
	case isJSON:
		var buf bytes.Buffer
		if err := wire.ReadBody(&buf, resp.Body, x.b.maxBytes); err != nil {
			return err
		}
		m, err := wire.DecodeResponse(x.b.name, resp.StatusCode, buf.Bytes(), x.b.maxBytes)
		if err != nil {
			return err
		}
		x.json = m
		return nil
	}
	return wire.StatusError(x.b.name, resp.StatusCode, "neither JSON nor an event stream")
}

// next returns the next message for the caller: a notification, or the response.
// Requests from the backend are answered here; a stream that ends early after an event id is
// resumed (SEP-1699).
func (x *legacyRoundTrip) next(ctx context.Context) (*jsonrpc.Message, error) {
	if x.json != nil {
		m := x.json
		x.json, x.answered = nil, true
		return m, nil
	}
	if x.sse == nil || x.answered {
		return nil, io.EOF
	}
	for range maxSkippedNotifications {
		data, err := x.sse.Next()
		if err != nil {
			if !x.resumable(ctx, err) {
				return nil, err
			}
			if err := x.resume(ctx); err != nil {
				return nil, err
			}
			continue
		}
		m, err := jsonrpc.DecodeMessage(data, wire.JSONLimits(x.b.maxBytes))
		switch {
		case err != nil:
			return nil, errorf(ErrBadResponse, x.b, "event is not a JSON-RPC message")
		case m.IsResponse():
			if bytes.Equal(m.ID, x.uid) {
				x.answered = true
				return m, nil
			}
		case m.ID != nil:
			x.answer(ctx, m)
		case m.Method != era.NotifElicitationDone: // digest §7: dropped, 2026 has no such thing
			return m, nil
		}
	}
	return nil, errorf(ErrBadResponse, x.b, "too many messages before the response")
}

// resumable reports whether a stream that stopped with err may be resumed: it ended or broke
// after an event id, the caller is still there, and the resume budget is not spent.
func (x *legacyRoundTrip) resumable(ctx context.Context, err error) bool {
	return x.sse.lastID != "" && ctx.Err() == nil && x.resumes < maxResumes &&
		!errors.Is(err, wire.ErrEventTooLarge)
}

// resume reconnects with GET and Last-Event-ID after the backend's retry delay (digest §7,
// SEP-1699 polling).
func (x *legacyRoundTrip) resume(ctx context.Context) error {
	x.resumes++
	x.resp.Body.Close()
	if d := min(x.sse.retry, maxResumeDelay); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return wire.Classify(ctx, x.b.name, ctx.Err())
		case <-t.C:
		}
	}
	resp, err := x.r.legacyDo(ctx, x.b, x.sess, http.MethodGet, nil, nil, x.sse.lastID)
	if err != nil {
		return err
	}
	x.resp = resp
	if _, isSSE := wire.MediaType(resp.Header.Get("Content-Type")); !isSSE || resp.StatusCode/100 != 2 {
		return wire.StatusError(x.b.name, resp.StatusCode, "resuming the response stream failed")
	}
	x.sse.reset(resp.Body)
	return nil
}

// answer replies to a request the backend sent on the stream (digest §7 "Server→client
// requests"): ping gets {}; elicitation, sampling and roots are refused for now, since bridging
// them into MRTR is a later step; anything else is an unknown method. A failed reply is logged:
// the backend decides what its request's failure means for the call.
func (x *legacyRoundTrip) answer(ctx context.Context, m *jsonrpc.Message) {
	var reply []byte
	switch m.Method {
	case era.MethodPing:
		reply = jsonrpc.AppendResult(nil, m.ID, json.RawMessage(`{}`))
	case era.MethodElicitationCreate, era.MethodSamplingCreate, era.MethodRootsList:
		x.r.log.Warn("legacy upstream request refused: not supported through the gateway yet",
			"upstream", x.b.name, "method", m.Method)
		reply = jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
			m.Method+" is not supported through the gateway yet"))
	default:
		reply = jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"))
	}
	ctx, cancel := context.WithTimeout(ctx, legacySideTimeout)
	defer cancel()
	resp, err := x.r.legacyDo(ctx, x.b, x.sess, http.MethodPost, reply, nil, "")
	if err == nil {
		drainClose(resp.Body)
		if resp.StatusCode/100 != 2 {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
	}
	if err != nil {
		x.r.log.Warn("answering a legacy upstream request failed", "upstream", x.b.name,
			"method", m.Method, "error", err.Error())
	}
}

// end ends the round trip. A caller that left before the response is a cancellation
// the backend must be told about: closing a legacy stream is not one (digest §7).
func (x *legacyRoundTrip) end(ctx context.Context, outcome string) {
	x.close()
	if x.answered || (outcome != OutcomeCanceled && outcome != OutcomeTimeout) {
		return
	}
	reason := "the client went away"
	if outcome == OutcomeTimeout {
		reason = "the gateway's timeout for this backend passed"
	}
	p := append([]byte(`{"requestId":`), x.uid...)
	p = appendString(append(p, `,"reason":`...), reason)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), legacySideTimeout)
	defer cancel()
	if err := x.r.legacyNotify(ctx, x.b, x.sess, era.NotifCancelled, append(p, '}')); err != nil {
		x.r.log.Warn("sending notifications/cancelled to a legacy upstream failed",
			"upstream", x.b.name, "error", err.Error())
	}
}

func (x *legacyRoundTrip) close() {
	if x.resp != nil {
		x.resp.Body.Close()
	}
}

// release gives the session (and the caller's pool) back; once only, from legacyStart's
// failures or the Stream's end.
func (x *legacyRoundTrip) release() {
	if x.pool != nil {
		x.pool.release(x.sess)
		x.pool = nil
	}
	if x.owner != nil {
		x.b.legacy.callers.give(x.owner, x.r.now())
		x.owner = nil
	}
}
