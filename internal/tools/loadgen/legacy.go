package loadgen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// LegacyProtocolVersion is the pre-2026 revision the legacy-call operation speaks: the
// initialization-based era the gateway serves at its edge (docs/protocol.md §9).
const LegacyProtocolVersion = "2025-11-25"

// KindNoSession: the gateway answered initialize without an Mcp-Session-Id header, or with a
// version other than the one asked for, so the legacy client cannot go on.
const KindNoSession = "no_session"

// legacyInitRest is the params of the legacy initialize, after the opening brace: the version
// asked for, no capabilities (so the gateway never needs to ask the client anything) and the
// client's name.
const legacyInitRest = `"protocolVersion":"` + LegacyProtocolVersion + `","capabilities":{},` +
	`"clientInfo":{"name":"` + ClientName + `","version":"1"}`

// initializedBody is the notification a client sends once initialize succeeded.
const initializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// legacyHandshake is what a 2025-11-25 client does once per session: initialize without a
// version header, keep the Mcp-Session-Id the answer carries, and send notifications/initialized
// with it (which must be accepted with 202). It returns how many HTTP requests it made.
func (w *wire) legacyHandshake(ctx context.Context) (int, error) {
	id := w.ids()
	w.buf = append(w.buf[:0], `{"jsonrpc":"2.0","id":`...)
	w.buf = strconv.AppendInt(w.buf, id, 10)
	w.buf = append(w.buf, `,"method":"initialize","params":{`+legacyInitRest+`}}`...)
	resp, err := w.post(ctx, "", "")
	if err != nil {
		return 1, err
	}
	rep, err := w.read(ctx, resp, id)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	if err != nil {
		return 1, err
	}
	sid := resp.Header.Get(mcpheader.SessionID)
	if sid == "" {
		return 1, opErr(KindNoSession, errors.New("initialize answered without "+mcpheader.SessionID))
	}
	var version string
	if err := jsonrpc.Members(rep.result, func(key, val []byte) error {
		if string(key) == "protocolVersion" {
			v, err := strconv.Unquote(string(val))
			version = v
			return err
		}
		return nil
	}); err != nil {
		return 1, opErr(KindBadResult, err)
	}
	if version != LegacyProtocolVersion {
		return 1, opErr(KindNoSession, errors.New("initialize negotiated "+strconv.Quote(version)))
	}
	w.buf = append(w.buf[:0], initializedBody...)
	resp, err = w.post(ctx, LegacyProtocolVersion, sid)
	if err != nil {
		return 2, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return 2, statusErr(resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	w.session = sid
	return 2, nil
}

// legacyCall is one tools/call as a 2025-11-25 client sends it: no _meta protocol keys, no
// Mcp-Method or Mcp-Name headers, the session id and the version header. The result must be a
// success in the 2025-11-25 shape: no resultType (the gateway drops it at the edge) and no
// isError. A 404 means the session is gone (docs/protocol.md §9.2): the error is counted and the
// worker initializes again before its next call.
func (p *plan) legacyCall(ctx context.Context, w *wire) (int, error) {
	id := w.ids()
	w.buf = append(w.buf[:0], `{"jsonrpc":"2.0","id":`...)
	w.buf = strconv.AppendInt(w.buf, id, 10)
	w.buf = append(w.buf, `,"method":"tools/call","params":{`...)
	w.buf = append(w.buf, p.call.rest[1:]...) // callRest starts with the comma after _meta
	w.buf = append(w.buf, "}}"...)
	resp, err := w.post(ctx, LegacyProtocolVersion, w.session)
	if err != nil {
		return 1, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		w.session = ""
	}
	rep, err := w.read(ctx, resp, id)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	return 1, expectLegacySuccess(rep, err)
}

// expectLegacySuccess turns a legacy reply into the operation's outcome: success only for a
// result without resultType that is not a tool error.
func expectLegacySuccess(rep reply, err error) error {
	if err != nil {
		return err
	}
	info, err := parseResult(rep.result)
	switch {
	case err != nil:
		return err
	case info.typ != "":
		return opErr(KindBadResult, errors.New("a pre-2026 result carries resultType "+strconv.Quote(info.typ)))
	case info.isError:
		return opErr(KindToolError, errors.New("tool result has isError true"))
	}
	return nil
}

// post sends w.buf as a pre-2026 client does: the version header only when given (initialize
// has none), the session id when there is one, and never Mcp-Method or Mcp-Name.
func (w *wire) post(ctx context.Context, version, session string) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(w.buf))
	if err != nil {
		return nil, opErr(KindTransport, err)
	}
	h := hr.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	if version != "" {
		h[mcpheader.ProtocolVersion] = []string{version}
	}
	if session != "" {
		h[mcpheader.SessionID] = []string{session}
	}
	if w.auth != "" {
		h["Authorization"] = []string{w.auth}
	}
	resp, err := w.http.Do(hr)
	if err != nil {
		return nil, transportErr(ctx, err)
	}
	return resp, nil
}
