package mcphttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams"
)

// passHeaders selects what the backend may see of the client's headers: the Mcp-Param-*
// mirrors (intermediaries MUST forward them, digest §2.2), trace context and the request id.
// Authorization and cookies are never among them.
func (x *exchange) passHeaders() http.Header {
	out := make(http.Header, 4)
	for k, v := range x.r.Header {
		if strings.HasPrefix(k, mcpheader.ParamPrefix) {
			out[k] = v
		}
	}
	// Trace context from the caller's headers, or from its _meta when it sent none (SEP-414),
	// validated; invalid values are dropped. With tracing on, the parent is the gateway's span.
	for k, v := range x.trace().headers() {
		out[k] = v
	}
	out[mcpheader.RequestID] = x.requestIDValue
	return out
}

// writeResult answers with a JSON-RPC success response around a result object, which gets the
// gateway's resultType and serverInfo.
func (x *exchange) writeResult(result []byte) {
	x.writeJSON(http.StatusOK, x.s.appendResponse(make([]byte, 0, len(result)+len(x.s.serverInfo)+96), x.req.ID, result))
	x.outcome = outcomeOK
}

// chunkingThreshold is net/http's buffer before it falls back to chunked encoding
// (bufferBeforeChunkingSize in net/http).
const chunkingThreshold = 2048

// Header values every response of a kind carries. They are shared between responses, which is
// safe because nothing modifies a header value in place (Header.Add appends to a full slice,
// which copies), and it spares an allocation per response.
var (
	contentTypeJSON = []string{"application/json"}
	contentTypeSSE  = []string{"text/event-stream"}
	noCache         = []string{"no-cache"}
	accelNo         = []string{"no"}
)

func (x *exchange) writeJSON(status int, body []byte) {
	h := x.w.Header()
	h["Content-Type"] = contentTypeJSON
	if len(body) > chunkingThreshold {
		// net/http measures a body itself only when it fits its 2 KiB buffer; a larger one
		// (a page of tools) would go out chunked, and its closing chunk in a write of its own.
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	x.w.WriteHeader(status)
	_, _ = x.w.Write(body)
	x.status = status
}

// writeError answers with e: the status, its headers, and a JSON-RPC error body with the
// request's id (null when the id could not be read).
func (x *exchange) writeError(e *Error) {
	x.outcome = e.Outcome
	if x.sse {
		// Headers are gone; the error becomes the stream's final message.
		if e.RPC != nil {
			_ = x.writeEvent(jsonrpc.AppendError(nil, x.id(), e.RPC))
		}
		return
	}
	for k, v := range e.Header {
		x.w.Header()[k] = v
	}
	if e.RPC == nil || e.Status == 499 {
		x.w.WriteHeader(e.Status)
		x.status = e.Status
		return
	}
	x.writeJSON(e.Status, jsonrpc.AppendError(nil, x.id(), e.RPC))
}

func (x *exchange) id() json.RawMessage {
	if x.req == nil {
		return nil
	}
	return x.req.ID
}

// relay copies a backend's response to the client as it arrives: a single JSON response stays
// JSON; an SSE response is streamed event by event, so progress reaches the client before the
// result (DESIGN.md "Responses"). The final message is the only one rewritten. While the backend
// is quiet, keep-alive comments hold the stream open (keepalive.go).
func (x *exchange) relay(st *upstreams.Stream) error {
	for {
		msg, final, err := st.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if final {
			if msg, err = x.s.finalMessage(x, st, msg); err != nil {
				return err
			}
			status := http.StatusOK
			if s := st.Status(); s >= 400 && s < 500 {
				// A backend's JSON-RPC error keeps the status the backend chose for it.
				status = s
			}
			return x.send(msg, status, true)
		}
		if err := x.send(msg, 0, false); err != nil {
			return err
		}
	}
}

// send writes one message: the final one as JSON when no stream has started, everything else as
// an SSE event. It serializes with the keep-alive timer, and a final send disarms it.
func (x *exchange) send(msg []byte, status int, final bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if final {
		x.stopKeepAliveLocked()
		if !x.sse {
			x.writeJSON(status, msg)
			return nil
		}
	}
	if !x.sse {
		x.startSSE()
	}
	return x.writeEvent(msg)
}

// finalMessage rewrites a backend's final response: results get the gateway's resultType and
// serverInfo (and MRTR state sealed, stage 10); errors pass through untouched. The stream has
// decoded the message already and hands over its result.
func (s *Server) finalMessage(x *exchange, st *upstreams.Stream, msg []byte) ([]byte, error) {
	result := st.FinalResult()
	if result == nil {
		x.outcome = outcomeUpstreamError
		return msg, nil
	}
	x.outcome = outcomeOK
	result, err := s.mrtrOut(x, result)
	if err != nil {
		return nil, err
	}
	return s.appendResponse(make([]byte, 0, len(result)+len(s.serverInfo)+96), x.req.ID, result), nil
}

// startSSE switches the response to an event stream for this request only (digest §2.1).
func (x *exchange) startSSE() {
	h := x.w.Header()
	h["Content-Type"] = contentTypeSSE
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = accelNo // keep nginx-style proxies from buffering the stream
	x.w.WriteHeader(http.StatusOK)
	x.status, x.sse = http.StatusOK, true
	x.streamClosed = x.s.metrics.StreamOpened()
}

// writeEvent writes one SSE event carrying a JSON-RPC message and flushes it.
func (x *exchange) writeEvent(msg []byte) error {
	if bytes.ContainsAny(msg, "\r\n") {
		// An SSE data line cannot hold a line break; JSON outside strings can lose it.
		var c bytes.Buffer
		if err := json.Compact(&c, msg); err != nil {
			return upstreams.ErrBadResponse
		}
		msg = c.Bytes()
	}
	buf := make([]byte, 0, len(msg)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, msg...)
	buf = append(buf, "\n\n"...)
	if _, err := x.w.Write(buf); err != nil {
		return err
	}
	return http.NewResponseController(x.w).Flush()
}
