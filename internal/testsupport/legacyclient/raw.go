package legacyclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/eventstream"
)

// Raw-transport settings.
const (
	// Version is the version raw legacy requests negotiate.
	Version = "2025-11-25"
	// RawTimeout bounds one raw request, or the wait for one message of a stream.
	RawTimeout = 15 * time.Second
	// streamTimeout bounds a whole streamed response, which spans several waits.
	streamTimeout = 4 * RawTimeout
	// maxEvent bounds one SSE line or event's data.
	maxEvent = 4 << 20
)

// Raw speaks the 2025-11-25 Streamable HTTP transport by hand for one caller, so a test
// controls every byte: which replica gets which request, a tampered session id, a forged answer.
// Every method takes the endpoint, so one caller can spread one session over several replicas.
type Raw struct {
	// Token is sent as a bearer token; empty sends none.
	Token string
	// Header is added to every request (a test's own headers, a Mcp-Name say).
	Header http.Header
	// Protocol is the version offered at initialize; empty is Version. A 2025-03-26 client
	// sends no MCP-Protocol-Version header, which came with 2025-06-18.
	Protocol string
	ids      atomic.Int64
}

// version is the version the client speaks.
func (c *Raw) version() string {
	if c.Protocol == "" {
		return Version
	}
	return c.Protocol
}

// Response is one HTTP response: status, headers, the whole body and, for JSON or SSE, the
// JSON-RPC messages it carried.
type Response struct {
	Status int
	Header http.Header
	Body   string
	Msgs   []json.RawMessage
}

func (r Response) String() string {
	return fmt.Sprintf("HTTP %d %s", r.Status, strings.TrimSpace(r.Body))
}

// Request builds a legacy POST to url: no MCP-Protocol-Version without a session (initialize
// never carries one), the negotiated version and the session id with one.
func (c *Raw) Request(ctx context.Context, url, sid, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		if v := c.version(); v != Protocol20250326 {
			req.Header.Set("MCP-Protocol-Version", v)
		}
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	return req, nil
}

// Post sends body to url on the session sid ("" for none) and reads the whole response.
func (c *Raw) Post(tb testing.TB, url, sid, body string) Response {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), RawTimeout)
	defer cancel()
	req, err := c.Request(ctx, url, sid, body)
	if err != nil {
		tb.Fatal(err)
	}
	return Do(tb, req)
}

// OpenGet opens the GET stream of the session sid at url and returns its response as it
// arrives, its body left to read; the stream is closed when the test ends.
func (c *Raw) OpenGet(tb testing.TB, url, sid string) *http.Response {
	tb.Helper()
	req, err := c.Request(tb.Context(), url, sid, "")
	if err != nil {
		tb.Fatal(err)
	}
	req.Method, req.Body = http.MethodGet, nil
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = res.Body.Close() })
	return res
}

// Do sends req and reads the whole response.
func Do(tb testing.TB, req *http.Request) Response {
	tb.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	r := Response{Status: res.StatusCode, Header: res.Header, Body: string(b)}
	switch ct := res.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/event-stream"):
		r.Msgs = SSEMessages(b)
	case strings.HasPrefix(ct, "application/json") && json.Valid(b):
		r.Msgs = []json.RawMessage{b}
	}
	return r
}

// SSEMessages returns the data of each event of a complete SSE body, read as the event-stream
// standard says (package eventstream: CR LF, LF or CR line ends), so a server that ends its
// lines with CR is read as it means.
func SSEMessages(b []byte) []json.RawMessage {
	var out []json.RawMessage
	evs, _ := eventstream.Parse(b, maxEvent)
	for _, ev := range evs {
		if len(ev.Data) > 0 {
			out = append(out, json.RawMessage(ev.Data))
		}
	}
	return out
}

// Initialize runs the handshake at url (initialize declaring form elicitation, then
// notifications/initialized) and returns the session id the server minted.
func (c *Raw) Initialize(tb testing.TB, url string) string {
	tb.Helper()
	v := c.version()
	r := c.Post(tb, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v+
		`","capabilities":{"elicitation":{}},"clientInfo":{"name":"legacy-raw","version":"1.0.0"}}}`)
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" || len(r.Msgs) == 0 || !strings.Contains(string(r.Msgs[len(r.Msgs)-1]), `"protocolVersion":"`+v+`"`) {
		tb.Fatalf("initialize: want 200 with Mcp-Session-Id and %s, got %s (session id present: %v)", v, r, sid != "")
	}
	if n := c.Post(tb, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); n.Status != http.StatusAccepted {
		tb.Fatalf("notifications/initialized: want 202, got %s", n)
	}
	return sid
}

// CallBody is a tools/call of name with the arguments {"text": text}, under a fresh id.
func (c *Raw) CallBody(name, text string) string {
	args, _ := json.Marshal(map[string]string{"text": text})
	return c.CallArgs(name, string(args))
}

// CallArgs is a tools/call of name with the arguments args (a JSON object), under a fresh id.
func (c *Raw) CallArgs(name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`,
		c.ids.Add(1), name, args)
}

// CallText sends tools/call name {"text": text} to url on the session and reads the response.
func (c *Raw) CallText(tb testing.TB, url, sid, name, text string) Response {
	tb.Helper()
	return c.Post(tb, url, sid, c.CallBody(name, text))
}

// ResultText is the text of the first result among msgs, "" when there is none.
func ResultText(msgs []json.RawMessage) string {
	for _, m := range msgs {
		var msg struct {
			Result *struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Result != nil {
			var b strings.Builder
			for _, c := range msg.Result.Content {
				b.WriteString(c.Text)
			}
			return b.String()
		}
	}
	return ""
}

// Tamper changes one character near the end of id, inside whatever a server seals or looks up.
func Tamper(id string) string {
	b := []byte(id)
	i := max(len(b)-5, 0)
	if len(b) == 0 {
		return "A"
	}
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// Stream is a POST whose response is read as it arrives, message by message.
type Stream struct {
	res     *http.Response
	msgs    chan json.RawMessage
	stop    chan struct{}
	done    chan struct{}
	eventID atomic.Bool // an SSE "id:" field was seen
}

// SawEventID reports whether the stream has so far carried an SSE event id, which invites a
// 2025 client to resume the stream later with GET and Last-Event-ID.
func (s *Stream) SawEventID() bool { return s.eventID.Load() }

// Open sends body to url on the session and starts reading the response's messages. The stream
// is closed when the test ends.
func (c *Raw) Open(tb testing.TB, url, sid, body string) *Stream {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), streamTimeout)
	req, err := c.Request(ctx, url, sid, body)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	s := &Stream{res: res, msgs: make(chan json.RawMessage, 16), stop: make(chan struct{}), done: make(chan struct{})}
	go s.read()
	tb.Cleanup(func() {
		close(s.stop)
		cancel()
		res.Body.Close()
		<-s.done
	})
	return s
}

// Status is the response's HTTP status.
func (s *Stream) Status() int { return s.res.StatusCode }

func (s *Stream) read() {
	defer close(s.done)
	defer close(s.msgs)
	send := func(m json.RawMessage) bool {
		select {
		case s.msgs <- m:
			return true
		case <-s.stop:
			return false
		}
	}
	if !strings.HasPrefix(s.res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(s.res.Body)
		if json.Valid(b) {
			send(b)
		}
		return
	}
	e := eventstream.NewReader(s.res.Body, 64<<10, maxEvent)
	for {
		ev, err := e.Next()
		if err != nil {
			return
		}
		if ev.HasID {
			s.eventID.Store(true)
		}
		if len(ev.Data) > 0 && !send(json.RawMessage(ev.Data)) {
			return
		}
	}
}

// Next returns the next message, failing the test when the stream ends or stalls first.
func (s *Stream) Next(tb testing.TB, what string) Message {
	tb.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			tb.Fatalf("%s: the stream ended (HTTP %d)", what, s.res.StatusCode)
		}
		var msg Message
		if err := json.Unmarshal(m, &msg); err != nil {
			tb.Fatalf("%s: %v in %s", what, err, m)
		}
		return msg
	case <-time.After(RawTimeout):
		tb.Fatalf("%s: nothing on the stream within %v", what, RawTimeout)
	}
	return Message{}
}

// NextRequest skips notifications until a request with method arrives and returns it; a result
// or error first fails the test.
func (s *Stream) NextRequest(tb testing.TB, method string) Message {
	tb.Helper()
	for {
		m := s.Next(tb, "waiting for "+method)
		if m.Result != nil || m.Error != nil {
			tb.Fatalf("the call ended before %s: result %s error %s", method, m.Result, m.Error)
		}
		if m.Method == method {
			return m
		}
	}
}

// NextResult skips notifications and requests until the response arrives and returns it.
func (s *Stream) NextResult(tb testing.TB) Message {
	tb.Helper()
	for {
		if m := s.Next(tb, "waiting for the result"); m.Result != nil || m.Error != nil {
			return m
		}
	}
}

// Message is the part of a JSON-RPC message the raw tests read.
type Message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// ForgeID returns an id of the same kind as id that its issuer never issued.
func ForgeID(id json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(id, &s) == nil {
		b, _ := json.Marshal(Tamper(s))
		return b
	}
	return json.RawMessage(`987654321`)
}

// AnswerBody is the client's response to the server request id: a form accepted with approve.
func AnswerBody(id json.RawMessage, approve bool) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"approve":%t}}}`, id, approve)
}
