package backend

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// nameForm is how a backend takes an Mcp-Name that SEP-2243 says to send in the base64
// sentinel form (non-ASCII text, say). The gateway sends the sentinel, as the specification
// asks. The official Go SDK server (v1.8.0) does not decode it: it compares the header with
// the body as they are and refuses the request with 400 and -32020 before running anything.
// Such a backend is sent the name as raw UTF-8 instead, which that server compares equal and a
// decoding server (the TypeScript SDK) would refuse, never misread. Which form a backend took
// last is remembered, so a Go SDK backend costs the extra round trip once, not per call, and a
// backend replaced by a decoding one finds its way back the same way.
type nameForm struct {
	raw atomic.Bool // the backend refused the sentinel and took the raw name
}

// value is the Mcp-Name value to send for name.
func (f *nameForm) value(name string) string {
	if f.raw.Load() && rawNameOK(name) {
		return name
	}
	return mcpheader.Encode(name)
}

// rawNameOK reports whether name can travel as a raw header value and still read as itself:
// what mcpheader.DecodeName takes raw (valid UTF-8 with no control character: C0, which
// net/http would refuse, DEL and C1), not empty, and with no surrounding white space (which
// every receiver trims).
func rawNameOK(name string) bool {
	return name != "" && strings.TrimSpace(name) == name && mcpheader.ValidUTF8NoControl(name)
}

// maxMismatchBody bounds how much of a 400 answer is read to tell an Mcp-Name refusal.
const maxMismatchBody = 4096

// retry resends req with the other form of its Mcp-Name when resp is the backend refusing the
// form sent (400 with -32020 naming Mcp-Name) and the name has two forms. The refusal means
// the backend ran nothing, so sending it again is safe. It returns the response to use: the
// retry's, or resp itself with its body intact.
func (f *nameForm) retry(b *Backend, req *http.Request, o *Request, resp *http.Response) (*http.Response, error) {
	if resp.StatusCode != http.StatusBadRequest || o.Name == "" || mcpheader.Encode(o.Name) == o.Name || !rawNameOK(o.Name) {
		return resp, nil
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxMismatchBody))
	if err != nil || !nameRefused(head) {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		return resp, nil
	}
	_ = resp.Body.Close()
	sent := req.Header.Get(mcpheader.Name)
	other := mcpheader.Encode(o.Name)
	if sent == other {
		other = o.Name
	}
	h := req.Header.Clone()
	h[mcpheader.Name] = []string{other}
	again := req.Clone(req.Context())
	again.Header = h
	o.reader.Reset(o.Body)
	again.Body = io.NopCloser(&o.reader)
	if len(o.Body) == 0 {
		again.Body = http.NoBody
	}
	resp, err = b.rt.RoundTrip(again)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusBadRequest {
		f.raw.Store(other == o.Name)
	}
	return resp, nil
}

// nameRefused reports whether body is a JSON-RPC error -32020 about the Mcp-Name header.
func nameRefused(body []byte) bool {
	var msg struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Error == nil {
		return false
	}
	return msg.Error.Code == -32020 && strings.Contains(strings.ToLower(msg.Error.Message), "mcp-name")
}
