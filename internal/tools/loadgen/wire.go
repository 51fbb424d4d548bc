package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// ProtocolVersion is the MCP revision the harness speaks and its backend serves.
const ProtocolVersion = "2026-07-28"

// ClientName is the clientInfo name the harness sends (docs/protocol.md §1: a SHOULD, never relied on).
const ClientName = "mcpload"

// maxBody bounds how much of one JSON body or SSE event the harness buffers; answers beyond it
// count as bad_response instead of exhausting memory.
const maxBody = 16 << 20

// request is one JSON-RPC request to send: the method, the Mcp-Name value (tools/call only),
// the client capabilities for _meta, an optional progress token, and the params members that
// follow _meta, already encoded with a leading comma (or empty).
type request struct {
	method string
	name   string
	caps   string
	token  string
	rest   []byte
}

// reply is what a request produced when it ended in a JSON-RPC result.
type reply struct {
	result   json.RawMessage
	progress int
}

// wire sends requests and reads answers. One per worker: buf and rd are reused, never shared.
type wire struct {
	http *http.Client
	url  string
	auth string
	ids  func() int64
	buf  []byte
	rd   *events
	// session is the pre-2026 session id of the legacy-call operation (empty until its
	// handshake); the runner keeps it across phases, so warm-up pays for the handshake.
	session string
}

// appendBody renders req with id, all required _meta keys first (docs/protocol.md §1).
func appendBody(dst []byte, id int64, req *request) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, req.method...)
	dst = append(dst, `","params":{"_meta":{"`+jsonrpc.MetaProtocolVersion+`":"`+ProtocolVersion+
		`","`+jsonrpc.MetaClientCapabilities+`":`...)
	dst = append(dst, req.caps...)
	dst = append(dst, `,"`+jsonrpc.MetaClientInfo+`":{"name":"`+ClientName+`","version":"1"}`...)
	if req.token != "" {
		dst = append(dst, `,"progressToken":`...)
		dst = strconv.AppendQuote(dst, req.token)
	}
	dst = append(dst, '}')
	dst = append(dst, req.rest...)
	return append(dst, "}}"...)
}

// do sends req and returns its result, or an *OpError saying which kind of failure it was.
func (w *wire) do(ctx context.Context, req *request) (reply, error) {
	resp, id, err := w.send(ctx, req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	rep, err := w.read(ctx, resp, id)
	// Reading to EOF is what lets net/http put the connection back in the idle pool.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	return rep, err
}

// send posts req with a fresh id and the mirrored headers (docs/protocol.md §2.2) and returns the
// response unread.
func (w *wire) send(ctx context.Context, req *request) (*http.Response, int64, error) {
	id := w.ids()
	w.buf = appendBody(w.buf[:0], id, req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(w.buf))
	if err != nil {
		return nil, id, opErr(KindTransport, err)
	}
	h := hr.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	h[mcpheader.ProtocolVersion] = []string{ProtocolVersion}
	h[mcpheader.Method] = []string{req.method}
	if req.name != "" {
		h[mcpheader.Name] = []string{mcpheader.Encode(req.name)}
	}
	if w.auth != "" {
		h["Authorization"] = []string{w.auth}
	}
	resp, err := w.http.Do(hr)
	if err != nil {
		return nil, id, transportErr(ctx, err)
	}
	return resp, id, nil
}

func (w *wire) read(ctx context.Context, resp *http.Response, id int64) (reply, error) {
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode != http.StatusOK:
		return reply{}, statusErr(resp)
	case strings.HasPrefix(ct, "application/json"):
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if err != nil {
			return reply{}, transportErr(ctx, err)
		}
		if len(body) > maxBody {
			return reply{}, opErr(KindBadResponse, errors.New("response body too large"))
		}
		return final(body, id, 0)
	case strings.HasPrefix(ct, "text/event-stream"):
		return w.readSSE(ctx, resp.Body, id)
	}
	return reply{}, opErr(KindBadResponse, errors.New("unexpected Content-Type "+strconv.Quote(ct)))
}

// statusErr classifies a non-200 answer: by its JSON-RPC error code when the body carries one
// (docs/protocol.md §2.3: errors arrive on 400 and 404 too), else by the HTTP status.
func statusErr(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if m, err := jsonrpc.DecodeMessage(body, jsonrpc.Limits{}); err == nil && m.Error != nil {
		return opErr(rpcKind(m.Error.Code), m.Error)
	}
	return opErr(httpKind(resp.StatusCode), errors.New(resp.Status))
}

// final decodes the message that should answer request id.
func final(body []byte, id int64, progress int) (reply, error) {
	m, err := jsonrpc.DecodeMessage(body, jsonrpc.Limits{})
	if err != nil {
		return reply{}, opErr(KindBadResponse, err)
	}
	if !m.IsResponse() || string(m.ID) != strconv.FormatInt(id, 10) {
		return reply{}, opErr(KindBadResponse, errors.New("not the response to this request"))
	}
	if m.Error != nil {
		return reply{}, opErr(rpcKind(m.Error.Code), m.Error)
	}
	return reply{result: m.Result, progress: progress}, nil
}

// readSSE reads events until the response to id arrives (docs/protocol.md §2.1: notifications about the
// request may come first; the final response should end the stream).
func (w *wire) readSSE(ctx context.Context, body io.Reader, id int64) (reply, error) {
	if w.rd == nil {
		w.rd = newEvents(body, 32<<10)
	} else {
		w.rd.reset(body)
	}
	progress := 0
	for {
		data, err := w.rd.next()
		if err != nil {
			var oe *OpError
			if errors.As(err, &oe) {
				return reply{}, err
			}
			if errors.Is(err, io.EOF) {
				return reply{}, opErr(KindIncompleteStream, errors.New("stream ended before the response"))
			}
			return reply{}, transportErr(ctx, err)
		}
		if data == nil {
			continue
		}
		m, err := jsonrpc.DecodeMessage(data, jsonrpc.Limits{})
		if err != nil {
			return reply{}, opErr(KindBadResponse, err)
		}
		if m.Method == "notifications/progress" {
			progress++
			continue
		}
		if m.IsResponse() {
			return final(data, id, progress)
		}
	}
}

// events reads the data of an event stream's events (package eventstream: the standard's line
// ends, byte-order mark and fields), each event's and line's bytes bounded by maxBody.
type events struct{ r *eventstream.Reader }

func newEvents(r io.Reader, size int) *events {
	return &events{r: eventstream.NewReader(r, size, maxBody)}
}

// reset continues on a new stream.
func (e *events) reset(r io.Reader) { e.r.Reset(r) }

// next returns the data of the next SSE event (data lines joined by \n), nil for an event
// with empty data. Events without data, comments, event names, ids and retry fields are
// skipped.
func (e *events) next() ([]byte, error) {
	for {
		ev, err := e.r.Next()
		switch {
		case errors.Is(err, eventstream.ErrTooLarge):
			return nil, opErr(KindBadResponse, errors.New("SSE line or event too large"))
		case err != nil:
			return nil, err
		case !ev.HasData:
			continue
		case len(ev.Data) == 0:
			return nil, nil
		}
		return ev.Data, nil
	}
}
