package loadgen

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The backend's working tools; tools/list appends fillers after them.
const (
	ToolEcho     = "echo"
	ToolProgress = "progress"
	ToolConfirm  = "confirm"
	ToolSlow     = "slow"
	ToolBlob     = "blob"
)

// maxBlob bounds the blob tool's text, and maxBlobSizes how many sizes it keeps rendered.
const (
	maxBlob      = 16 << 20
	maxBlobSizes = 8
)

// maxSlow bounds the slow tool's sleep.
const maxSlow = time.Minute

// confirmState is the confirm tool's requestState. It is deliberately not sealed: the backend
// exists to be measured, and a gateway must treat any backend state as opaque anyway (§3).
const confirmState = `"fast-confirm-v1"`

var realTools = []struct{ name, desc, schema string }{
	{ToolEcho, "Returns text unchanged.", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`},
	{ToolProgress, "Streams steps progress notifications over SSE, then returns.", `{"type":"object","properties":{"steps":{"type":"integer"}}}`},
	{ToolConfirm, "Asks for approval through MRTR, then returns.", `{"type":"object"}`},
	{ToolSlow, "Sleeps ms milliseconds or until cancelled.", `{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}`},
	{ToolBlob, "Returns a text of the given number of bytes: x repeated, or prose.", `{"type":"object","properties":{"bytes":{"type":"integer"},"prose":{"type":"boolean"},"note":{"type":"string"}},"required":["bytes"]}`},
}

func renderTools(n int) []byte {
	out := []byte{'['}
	add := func(name, desc, schema string) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = fmt.Appendf(out, `{"name":%q,"description":%q,"inputSchema":%s}`, name, desc, schema)
	}
	for _, t := range realTools {
		add(t.name, t.desc, t.schema)
	}
	for i := len(realTools) + 1; i <= n; i++ {
		add(fmt.Sprintf("tool_%04d", i), "A filler tool that answers ok.", `{"type":"object"}`)
	}
	return append(out, ']')
}

func (b *Backend) call(w http.ResponseWriter, r *http.Request, x *exchange) {
	switch x.params.Name {
	case ToolEcho:
		b.writeText(w, x.id, rawMember(x.params.Arguments, "text", `""`))
	case ToolProgress:
		b.progress(w, x)
	case ToolConfirm:
		b.confirm(w, x)
	case ToolSlow:
		ms, _ := strconv.Atoi(string(rawMember(x.params.Arguments, "ms", "0")))
		t := time.NewTimer(min(time.Duration(max(ms, 0))*time.Millisecond, maxSlow))
		defer t.Stop()
		select {
		case <-t.C:
			b.writeText(w, x.id, []byte(`"slept"`))
		case <-r.Context().Done():
		}
	case ToolBlob:
		n, _ := strconv.Atoi(string(rawMember(x.params.Arguments, "bytes", "0")))
		prose := string(member(x.params.Arguments, "prose")) == "true"
		writeResult(w, x.id, b.blob(min(max(n, 0), maxBlob), prose))
	default:
		if n, err := strconv.Atoi(trimPrefix(x.params.Name, "tool_")); err == nil && n > len(realTools) && n <= b.cfg.Tools {
			b.writeText(w, x.id, []byte(`"ok"`))
			return
		}
		writeError(w, http.StatusBadRequest, x.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Unknown tool"))
	}
}

func trimPrefix(s, p string) string {
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return ""
}

// blob returns the rendered result of the blob tool for n bytes of text, so that the benchmark
// measures relaying a large result rather than the backend building it: the first maxBlobSizes
// sizes asked for are kept. With prose the text is proseText repeated, what a tool that reports
// on a ticket or a build answers (words, numbers, dates, paths, links), for checks that read
// text; without, x repeated.
func (b *Backend) blob(n int, prose bool) []byte {
	key := 2 * n
	if prose {
		key++
	}
	b.blobMu.Lock()
	defer b.blobMu.Unlock()
	if res, ok := b.blobs[key]; ok {
		return res
	}
	fill := "x"
	if prose {
		fill = proseText
	}
	text := make([]byte, 0, n+2+len(fill))
	text = append(text, '"')
	text = append(text, strings.Repeat(fill, n/len(fill)+1)[:n]...)
	res := b.textResult(append(text, '"'))
	if len(b.blobs) < maxBlobSizes {
		if b.blobs == nil {
			b.blobs = map[int][]byte{}
		}
		b.blobs[key] = res
	}
	return res
}

// proseText is the unit of the blob tool's prose: plain ASCII that needs no JSON escape.
const proseText = "Build 48213 of service checkout-api finished on 2026-03-14 at 09:42 UTC with status " +
	"passed after 6m 12s. Stage compile took 71s, unit tests 3m 05s (1,284 tests, 0 failures), " +
	"and integration 1m 48s. Artifacts were published to https://artifacts.example.com/checkout-api/48213 " +
	"and the report is at /var/lib/ci/reports/48213/summary.html. Reviewers: the payments team. "

// rawMember returns the raw JSON value of key in obj when it is a string or number, else def.
func rawMember(obj json.RawMessage, key, def string) []byte {
	v := member(obj, key)
	if v == nil || !(v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return []byte(def)
	}
	return v
}

// textResult renders a complete tools/call result with one text block; text is raw JSON.
func (b *Backend) textResult(text []byte) []byte {
	res := append([]byte(`{"resultType":"complete","content":[{"type":"text","text":`), text...)
	return append(append(res, "}]"+b.meta...), '}')
}

func (b *Backend) writeText(w http.ResponseWriter, id json.RawMessage, text []byte) {
	writeResult(w, id, b.textResult(text))
}

// progress streams its notifications and result over SSE (docs/protocol.md §2.1, §5.4). Without a
// progressToken no notification may be sent, so the stream carries only the result.
func (b *Backend) progress(w http.ResponseWriter, x *exchange) {
	steps := b.cfg.Progress
	if n, err := strconv.Atoi(string(rawMember(x.params.Arguments, "steps", "-1"))); err == nil && n >= 0 {
		steps = min(n, MaxProgressSteps)
	}
	sse := startSSE(w)
	if tok := x.meta.ProgressToken; tok != nil {
		buf := make([]byte, 0, 160)
		for i := 1; i <= steps; i++ {
			p := append(append(buf[:0], `{"progressToken":`...), tok...)
			p = fmt.Appendf(p, `,"progress":%d,"total":%d,"message":"step %d of %d"}`, i, steps, i, steps)
			sse.event(jsonrpc.AppendNotification(nil, "notifications/progress", p))
		}
	}
	sse.event(jsonrpc.AppendResult(nil, x.id, b.textResult([]byte(`"done `+strconv.Itoa(steps)+`"`))))
}

// confirm is a backend-originated MRTR exchange (docs/protocol.md §3): input_required with a form
// elicitation, then, on a retry carrying the state and an answer, a complete result (isError
// when the answer was not an acceptance).
func (b *Backend) confirm(w http.ResponseWriter, x *exchange) {
	if member(x.meta.ClientCapabilities, "elicitation") == nil {
		writeError(w, http.StatusBadRequest, x.id, jsonrpc.NewError(jsonrpc.CodeMissingRequiredClientCapability,
			"Missing required client capability").WithData(map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}}}))
		return
	}
	if !x.params.HasState {
		writeResult(w, x.id, []byte(`{"resultType":"input_required","inputRequests":{"approve":{"method":"elicitation/create",`+
			`"params":{"mode":"form","message":"Approve this call?","requestedSchema":{"type":"object",`+
			`"properties":{"approve":{"type":"boolean"}},"required":["approve"]}}}},"requestState":`+confirmState+b.meta+`}`))
		return
	}
	answer := member(x.params.InputResponses, "approve")
	if strconv.Quote(x.params.RequestState) != confirmState || answer == nil || answer[0] != '{' {
		writeError(w, http.StatusBadRequest, x.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: bad requestState or answer"))
		return
	}
	if string(member(answer, "action")) != `"accept"` {
		res := []byte(`{"resultType":"complete","isError":true,"content":[{"type":"text","text":"declined"}]` + b.meta + `}`)
		writeResult(w, x.id, res)
		return
	}
	b.writeText(w, x.id, []byte(`"confirmed"`))
}

// member returns the raw value of key in the JSON object obj, nil when absent.
func member(obj json.RawMessage, key string) json.RawMessage {
	var out json.RawMessage
	if len(obj) == 0 || obj[0] != '{' {
		return nil
	}
	_ = jsonrpc.Members(obj, func(k, v []byte) error {
		if string(k) == key {
			out = v
		}
		return nil
	})
	return out
}
