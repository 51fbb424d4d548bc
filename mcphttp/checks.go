package mcphttp

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// decode is stage decode: one strict JSON-RPC message, and its params and _meta members. A body
// that does not decode keeps whatever could be read (the id, to echo in the error) for the era
// stage, which may still serve it as a pre-2026 client's answer.
func (s *Server) decode(x *request) error {
	leave, err := s.decodes.enter(x.ctx, len(x.in.body))
	if err != nil {
		return err
	}
	defer leave()
	return s.decodeBody(x)
}

// decodeBody is decode without a turn at the gate: for a message of a batch, whose edge holds
// one for the whole batch (Incoming.DecodeTurn).
func (s *Server) decodeBody(x *request) error {
	req, answer, err := jsonrpc.DecodeClient(x.in.body, s.limits)
	if err != nil {
		x.in.answer = answer
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && rpc.Code != jsonrpc.CodeParseError {
			// Echo the id when it can be read, as clients match errors to requests by id.
			x.setMessage(&jsonrpc.Request{ID: jsonrpc.IDOf(x.in.body)})
		}
		return err
	}
	x.setMessage(req)
	if x.in.params, err = jsonrpc.ParseParams(req.Params); err != nil {
		return err
	}
	x.in.meta, err = jsonrpc.ParseMeta(x.in.params.Meta)
	return err
}

// setMessage records the decoded message; the response answers its id from then on.
func (x *request) setMessage(req *jsonrpc.Request) {
	x.in.req = req
	x.client.setID(req.ID)
}

// checkVersion is stage version. It compares MCP-Protocol-Version with _meta and checks that the
// version is served and the required _meta keys are present (docs/protocol.md §1, §2). A
// mismatch is reported before an unsupported version, as the conformance suite expects.
func checkVersion(h http.Header, m *jsonrpc.Meta, req *jsonrpc.Request) error {
	hdr, hasHdr, err := headerValue(h, mcpheader.ProtocolVersion)
	if err != nil {
		return err
	}
	switch {
	case m.HasVersion && !hasHdr:
		return headerMismatch("Header mismatch: MCP-Protocol-Version header is required")
	case m.HasVersion && hdr != m.ProtocolVersion:
		return headerMismatch("Header mismatch: MCP-Protocol-Version header value " + quote(hdr) +
			" does not match body value " + quote(m.ProtocolVersion))
	case !m.HasVersion && (!hasHdr || hdr < ProtocolVersion):
		// A pre-2026 client (initialize, no per-request metadata) on a gateway that does not
		// serve them: tell it what we speak so it can detect the era ("a modern-only server
		// SHOULD name its supported versions", docs/protocol.md §1), in the message too, since
		// SDKs show their users the message.
		return legacyRefused(hdr, req)
	case !m.HasVersion:
		return invalidParams("Invalid params: _meta." + jsonrpc.MetaProtocolVersion + " is required")
	case m.ProtocolVersion != ProtocolVersion:
		return unsupportedVersion(m.ProtocolVersion)
	case m.ClientCapabilities == nil:
		return invalidParams("Invalid params: _meta." + jsonrpc.MetaClientCapabilities + " is required")
	}
	return nil
}

// legacyRefused is the -32022 for a pre-2026 client. requested is what it asked for: the
// protocolVersion of its initialize, else its MCP-Protocol-Version header.
func legacyRefused(hdr string, req *jsonrpc.Request) *Error {
	requested := hdr
	if req.Method == "initialize" && len(req.Params) > 0 {
		_ = jsonrpc.Members(req.Params, func(key, val []byte) error {
			var v string
			if string(key) == "protocolVersion" && json.Unmarshal(val, &v) == nil {
				requested = v
			}
			return nil
		})
	}
	e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion,
		"Unsupported protocol version "+quote(requested)+": this server supports "+ProtocolVersion).
		WithData(map[string]any{"supported": []string{ProtocolVersion}, "requested": requested})
	return rpcError(e)
}

func unsupportedVersion(requested string) *Error {
	e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version").
		WithData(map[string]any{"supported": []string{ProtocolVersion}, "requested": requested})
	return rpcError(e)
}

// lookupMethod is stage method: the method in the closed table of what the gateway serves.
// Everything else, including the removed initialize and ping, is 404/-32601 (docs/protocol.md
// §1).
func lookupMethod(table map[string]*handler, method string) (*handler, error) {
	h, ok := table[method]
	if !ok {
		return nil, rpcError(jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"))
	}
	return h, nil
}

// checkHeaders is stage headers: Mcp-Method and Mcp-Name against the body (SEP-2243), the base64
// sentinel decoded first, no Mcp-Name on a method that names nothing, and every Mcp-Param-*
// header once and validly encoded. Those are
// checked against the arguments once the tool is routed and authorized (stage bind-headers),
// since that needs the tool's definition.
func checkHeaders(h http.Header, hd *handler, method string, p *jsonrpc.Params) error {
	if err := CheckHeaderNames(h); err != nil {
		return err
	}
	if err := checkParamSyntax(h, method); err != nil {
		return err
	}
	got, ok, err := headerValue(h, mcpheader.Method)
	switch {
	case err != nil:
		return err
	case !ok:
		return headerMismatch("Header mismatch: Mcp-Method header is required")
	case got != method:
		return headerMismatch("Header mismatch: Mcp-Method header value " + quote(got) +
			" does not match body value " + quote(method))
	}
	if hd.nameParam == "" {
		// Mcp-Name mirrors the name or URI of the three methods that have one (SEP-2243): on
		// any other it mirrors nothing the gateway could compare, and whatever sits in front of
		// the gateway must not read it as naming what the request is about.
		if len(h.Values(mcpheader.Name)) > 0 {
			return headerMismatch("Header mismatch: Mcp-Name header is present but " + method + " names nothing")
		}
		return nil
	}
	if err := hd.requireName(p); err != nil {
		return err
	}
	want := p.Name
	if hd.nameParam == "uri" {
		want = p.URI
	}
	return CheckNameHeader(h, want, true)
}

// CheckHeaderNames refuses a header that is named as one of those stage headers compares with
// the body, but with '_' (or another character but a letter or a digit) for '-'
// (mcpheader.ReadsAs): servers that expose headers as CGI or WSGI variables read the two as one
// header, so an intermediary of that kind in front of the gateway could route on a value the
// gateway never compared with the body. The pre-2026 edge calls it too: its client may send such
// a header as well.
func CheckHeaderNames(h http.Header) error {
	for k := range h {
		if as := mcpheader.ReadsAs(k); as != "" {
			return headerMismatch("Header mismatch: the " + quote(k) + " header reads as " + as +
				" to servers that take '_' or another character for '-' in header names")
		}
	}
	return nil
}

// CheckNameHeader checks the Mcp-Name header against want, the name or URI of the body, the base64
// sentinel decoded first. required refuses a missing header; without it only a present header
// is checked (a pre-2026 client has no duty to send it, but what it sends must agree with what
// it calls).
func CheckNameHeader(h http.Header, want string, required bool) error {
	raw, ok, err := headerValue(h, mcpheader.Name)
	if err != nil {
		return err
	}
	if !ok {
		if required {
			return headerMismatch("Header mismatch: Mcp-Name header is required")
		}
		return nil
	}
	got, err := mcpheader.DecodeName(raw)
	if err != nil {
		return headerMismatch("Header mismatch: Mcp-Name header value is not validly encoded")
	}
	if got != want {
		return headerMismatch("Header mismatch: Mcp-Name header value " + quote(got) +
			" does not match body value " + quote(want))
	}
	return nil
}

// headerValue returns the single value of a header. A header that must match the body but
// appears twice is refused rather than resolved, like a duplicate JSON key: which copy a
// backend or another proxy would read is not ours to guess.
func headerValue(h http.Header, name string) (string, bool, error) {
	v := h.Values(name)
	switch len(v) {
	case 0:
		return "", false, nil
	case 1:
		return v[0], true, nil
	}
	return "", false, headerMismatch("Header mismatch: " + name + " header appears more than once")
}

// HeaderValue is headerValue for another edge: the single value of a header, a repeated one
// refused.
func HeaderValue(h http.Header, name string) (string, bool, error) { return headerValue(h, name) }
