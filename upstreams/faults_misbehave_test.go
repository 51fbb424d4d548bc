package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestCallFinalResultTwice: a backend whose stream answers a call twice, 2026-07-28 or
// pre-2026, has its first answer relayed as the call's one final message and the second never
// relayed, neither as a second final nor as a notification.
func TestCallFinalResultTwice(t *testing.T) {
	modern := faultBackend(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"first"}]}}`)
		upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"second"}]}}`)
	}, func(u *UpstreamConfig) { u.Protocol = ProtocolVersion })
	s, err := faultCall(modern, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if msgs := collect(t, s); len(msgs) != 1 || !strings.Contains(msgs[0], "first") {
		t.Errorf("2026-07-28: relayed %q, want the first answer alone", msgs)
	}
	raw := startRawLegacy(t)
	legacy := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}}, Options{})
	s, err = legacy.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`3`),
		Target: Target{Upstream: "raw", Name: "twice"}, Params: json.RawMessage(`{"name":"raw__twice"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if msgs := collect(t, s); len(msgs) != 1 || !strings.Contains(msgs[0], "first") || !strings.Contains(msgs[0], `"id":3`) {
		t.Errorf("pre-2026: relayed %q, want the first answer alone", msgs)
	}
}

// typedEvents writes, on an event stream, events of other types than message: an answer to
// the request sent with id, a keep-alive whose data is no JSON, and one whose event field
// follows its data. Both official SDKs' clients pass over such events.
func typedEvents(w http.ResponseWriter, id json.RawMessage) {
	io.WriteString(w, "event: ping\ndata: "+`{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"ping event"}],"tools":[{"name":"from_a_ping","inputSchema":{"type":"object"}}]}}`+"\n\n")
	io.WriteString(w, "event: heartbeat\ndata: keep-alive\n\n")
	io.WriteString(w, "data: "+`{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"typed after"}]}}`+"\nevent: Message\n\n")
	w.(http.Flusher).Flush()
}

// TestEventsOfAnotherTypePassedOver: an event whose type is not message is no message, as both
// official SDKs' clients read a backend's stream: on a 2026-07-28 call's stream, on a list's,
// and on a pre-2026 backend's, the gateway relays the answer of the message event after them,
// neither the answer such an event carries nor a failure over a keep-alive's data.
func TestEventsOfAnotherTypePassedOver(t *testing.T) {
	const tool = `{"name":"real","inputSchema":{"type":"object"}}`
	modern := faultBackend(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := json.RawMessage(upstreamstest.RequestID(body))
		w.Header().Set("Content-Type", "text/event-stream")
		typedEvents(w, id)
		upstreamstest.SSEEvent(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"message event"}],"tools":[`+tool+`]}}`)
	}, func(u *UpstreamConfig) { u.Protocol = ProtocolVersion })
	s, err := faultCall(modern, context.Background())
	if err != nil {
		t.Fatalf("2026-07-28 call: %v", err)
	}
	if msgs := collect(t, s); len(msgs) != 1 || !strings.Contains(msgs[0], "message event") {
		t.Errorf("2026-07-28 call: relayed %q, want the message event's answer alone", msgs)
	}
	res, err := modern.List(context.Background(), &ListRequest{Method: MethodToolsList,
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
	if err != nil {
		t.Fatalf("2026-07-28 list: %v", err)
	}
	if !strings.Contains(string(res), `"fault__real"`) || strings.Contains(string(res), "from_a_ping") {
		t.Errorf("2026-07-28 list: %s, want the message event's tool alone", res)
	}
	raw := startRawLegacy(t)
	legacy := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}}, Options{})
	s, err = legacy.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`5`),
		Target: Target{Upstream: "raw", Name: "typed"}, Params: json.RawMessage(`{"name":"raw__typed"}`)})
	if err != nil {
		t.Fatalf("pre-2026 call: %v", err)
	}
	if msgs := collect(t, s); len(msgs) != 1 || !strings.Contains(msgs[0], "message event") {
		t.Errorf("pre-2026 call: relayed %q, want the message event's answer alone", msgs)
	}
}

// TestLegacyProgressOnlyUnderItsToken: a pre-2026 backend's progress reaches the caller only
// under the progressToken of the request, as a 2026-07-28 backend's does
// (gateway.TestCallStreamRelaysOnlyItsOwnProgress): not under another token, nor one of another
// type, and none to a request without one.
func TestLegacyProgressOnlyUnderItsToken(t *testing.T) {
	raw := startRawLegacy(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}}, Options{})
	for meta, want := range map[string]int{`{"progressToken":42}`: 1, `{}`: 0, `{"progressToken":44}`: 0} {
		var token json.RawMessage // as the gateway's decode of the request reads it
		if _, tok, ok := strings.Cut(strings.TrimSuffix(meta, "}"), `"progressToken":`); ok {
			token = json.RawMessage(tok)
		}
		s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`6`),
			Target: Target{Upstream: "raw", Name: "progress_tokens"}, Params: json.RawMessage(`{"_meta":` + meta + `,"name":"raw__progress_tokens"}`),
			ProgressToken: token})
		if err != nil {
			t.Fatalf("%s: %v", meta, err)
		}
		msgs := collect(t, s)
		if len(msgs) != want+1 || !strings.Contains(msgs[len(msgs)-1], `"id":6`) || want == 1 && !strings.Contains(msgs[0], `"progressToken":42,`) {
			t.Errorf("%s: relayed %q, want %d progress notifications under 42 and the answer", meta, msgs, want)
		}
	}
}

// TestLegacyStreamResultAndError: a pre-2026 backend's answer on its stream that is a result
// and an error at once is a bad response, as it is in JSON (TestLegacyRawAnswerNotOurs).
func TestLegacyStreamResultAndError(t *testing.T) {
	raw := startRawLegacy(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}}, Options{})
	s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`4`),
		Target: Target{Upstream: "raw", Name: "both_sse"}, Params: json.RawMessage(`{"name":"raw__both_sse"}`)})
	if err == nil {
		err = drain(s)
	}
	if !errors.Is(err, ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

// TestLegacySessionIDNotChangedByAnAnswer: a pre-2026 backend's session id is the one its
// initialize answered with. A response that carries another Mcp-Session-Id header (a backend
// confused, or one trying to move the gateway's callers onto a session of its choosing) changes
// nothing: the next request on the session carries the id it had.
func TestLegacySessionIDNotChangedByAnAnswer(t *testing.T) {
	raw := startRawLegacy(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}}, Options{})
	for _, tool := range []string{"sid_change", "sid_change", "elicit_many"} {
		callOnce(t, r, MethodToolsCall, "raw__"+tool, KindTool, `{"_meta":`+upstreamstest.Meta+`,"name":"raw__`+tool+`"}`)
	}
	for _, req := range raw.requests() {
		if strings.Contains(req, "evil") {
			t.Errorf("a request went with the session id an answer named: %q", req)
		}
	}
	if calls := strings.Count(strings.Join(raw.requests(), "\n"), "POST tools/call s"); calls != 3 {
		t.Errorf("%d calls went with a session id the backend assigned, want 3: %q", calls, raw.requests())
	}
}

// TestCallIDBeyondDoubles: a client's id is relayed as the client wrote it, and a backend's
// answer is its answer only under an id a reader of the backend's (a double) takes for it: an
// integer past 2^53 the backend echoed rounded is, the same number as a fraction or exponent,
// a string, or another integer past the range of doubles is not.
func TestCallIDBeyondDoubles(t *testing.T) {
	long := "1" + strings.Repeat("0", 400)
	for _, tt := range []struct {
		name, client, answer string
		ok                   bool
	}{
		{"rounded to the double", "9007199254740993", "9007199254740992", true},
		{"as written", "9007199254740993", "9007199254740993", true},
		{"exponent", "9007199254740993", "9.007199254740993e15", false},
		{"string", "9007199254740993", `"9007199254740993"`, false},
		{"another integer", "9007199254740993", "9007199254740995", false},
		{"past doubles, as written", long, long, true},
		{"past doubles, another", long, "1" + strings.Repeat("0", 399) + "1", false},
		{"past doubles, as infinity's exponent", long, "1e400", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := faultBackend(t, func(w http.ResponseWriter, _ *http.Request) {
				upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":`+tt.answer+`,"result":{"content":[]}}`)
			}, func(u *UpstreamConfig) { u.Protocol = ProtocolVersion })
			s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(tt.client),
				Target: Target{Upstream: "fault", Name: "t"}, Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"t"}`)})
			if !tt.ok {
				if !errors.Is(err, ErrBadResponse) {
					t.Fatalf("err = %v, want ErrBadResponse", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msgs := collect(t, s); len(msgs) != 1 || !strings.HasPrefix(msgs[0], `{"jsonrpc":"2.0","id":`+tt.client+`,"result"`) {
				t.Fatalf("relayed %.200q, want the result under the client's id", msgs)
			}
		})
	}
}
