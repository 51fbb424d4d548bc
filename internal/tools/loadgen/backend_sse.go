package loadgen

import (
	"net/http"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// sseWriter writes one request's SSE stream, flushing every event so progress is seen as it
// happens rather than when the buffer fills.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // digest quick reference: SHOULD on SSE responses
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *sseWriter) event(msg []byte) error {
	buf := make([]byte, 0, len(msg)+24)
	buf = append(append(append(buf, "event: message\ndata: "...), msg...), "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// listen serves subscriptions/listen (docs/protocol.md §5.5): the acknowledgement naming the honoured
// subset (only toolsListChanged exists here), then nothing until the client closes the stream
// or the backend closes, which ends it with the closing result.
func (b *Backend) listen(w http.ResponseWriter, r *http.Request, x *exchange) {
	notes := member(x.raw, "notifications")
	if notes == nil || notes[0] != '{' {
		writeError(w, http.StatusBadRequest, x.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: notifications must be an object"))
		return
	}
	sub := `{"_meta":{"` + jsonrpc.MetaSubscriptionID + `":` + string(x.id) + `}`
	honoured := `{}`
	if string(member(notes, "toolsListChanged")) == "true" {
		honoured = `{"toolsListChanged":true}`
	}
	sse := startSSE(w)
	if sse.event(jsonrpc.AppendNotification(nil, "notifications/subscriptions/acknowledged",
		[]byte(sub+`,"notifications":`+honoured+`}`))) != nil {
		return
	}
	select {
	case <-r.Context().Done():
	case <-b.done:
		_ = sse.event(jsonrpc.AppendResult(nil, x.id, []byte(`{"resultType":"complete",`+sub[1:]+`}`)))
	}
}
