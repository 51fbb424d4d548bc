package pre2026

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// batchMessages are the JSON-RPC messages of a response: every event of an SSE stream, or the
// JSON body.
func batchMessages(t *testing.T, r *response) map[string]jsonrpc.Message {
	t.Helper()
	out := map[string]jsonrpc.Message{}
	for id, ms := range batchAnswers(t, r) {
		if len(ms) > 1 {
			t.Fatalf("%d messages answer id %s: %s", len(ms), id, r.Body)
		}
		out[id] = ms[0]
	}
	return out
}

// batchAnswers are the messages of a response by id, in their order.
func batchAnswers(t *testing.T, r *response) map[string][]jsonrpc.Message {
	t.Helper()
	out := map[string][]jsonrpc.Message{}
	var datas [][]byte
	if strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		evs, err := eventstream.Parse(r.Body, 16<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if len(ev.Data) > 0 {
				datas = append(datas, ev.Data)
			}
		}
	} else if len(r.Body) > 0 {
		datas = append(datas, r.Body)
	}
	for _, d := range datas {
		var m jsonrpc.Message
		if err := json.Unmarshal(d, &m); err != nil {
			t.Fatalf("not a JSON-RPC message: %s", d)
		}
		out[string(m.ID)] = append(out[string(m.ID)], m)
	}
	return out
}

func rpc(id any, method, params string) string {
	idJSON, _ := json.Marshal(id)
	if id == nil {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, idJSON, method, params)
}

func batchOf(msgs ...string) string { return "[" + strings.Join(msgs, ",") + "]" }

// TestBatch20250326: a batch of a 2025-03-26 session is answered on one SSE stream with one
// response per request, each served on its own (a refused call among allowed ones answers with
// its own error), notifications answered with nothing, results in the 2025-03-26 shape; the
// backend gets each call as a 2026-07-28 request of its own.
func TestBatch20250326(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	be.Reset()
	r := do(t, "POST", gw.URL, legacyHeaders("", sid), batchOf(
		rpc(1, "ping", `{}`),
		rpc(2, "tools/call", `{"name":"be__echo","arguments":{"text":"one"}}`),
		rpc("three", "tools/call", `{"name":"be__nope","arguments":{}}`),
		rpc(nil, "notifications/initialized", `{}`),
		rpc(4, "tools/call", `{"name":"be__add","arguments":{"a":1,"b":2}}`),
		rpc(5, "tools/list", `{}`),
		rpc(6, "prompts/get", `{"name":"be__greet","arguments":{"name":"Ada"}}`),
		rpc(7, "initialize", `{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`),
		`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":1,"A":2}}`,
		`{"jsonrpc":"2.0","id":9}`,
		rpc(2, "ping", `{}`),
	))
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s: %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	all := batchAnswers(t, r)
	// The second request with id 2 is refused under the id it shares: two answers of id 2, one
	// of them that refusal.
	if twos := all["2"]; len(twos) != 2 || (twos[0].Error == nil) == (twos[1].Error == nil) {
		t.Fatalf("id 2: %+v", twos)
	}
	for _, m := range all["2"] {
		if m.Error == nil {
			all["2"] = []jsonrpc.Message{m}
		}
	}
	got := map[string]jsonrpc.Message{}
	for id, ms := range all {
		if len(ms) != 1 {
			t.Fatalf("%d answers of id %s: %s", len(ms), id, r.Body)
		}
		got[id] = ms[0]
	}
	ok := func(id string) jsonrpc.Message {
		t.Helper()
		m, found := got[id]
		if !found || m.Error != nil {
			t.Fatalf("id %s: %+v (error %+v); all: %s", id, m, m.Error, r.Body)
		}
		return m
	}
	refused := func(id string, code int) {
		t.Helper()
		if m, found := got[id]; !found || m.Error == nil || m.Error.Code != code {
			t.Errorf("id %s: want error %d, got %+v; all: %s", id, code, m, r.Body)
		}
	}
	if string(ok("1").Result) != `{}` {
		t.Errorf("ping: %s", got["1"].Result)
	}
	if !strings.Contains(string(ok("2").Result), `"one"`) {
		t.Errorf("echo: %s", got["2"].Result)
	}
	refused(`"three"`, jsonrpc.CodeInvalidParams)
	if res := string(ok("4").Result); strings.Contains(res, "structuredContent") || !strings.Contains(res, `{\"sum\":3}`) {
		t.Errorf("add, for 2025-03-26: %s", res)
	}
	if res := string(ok("5").Result); strings.Contains(res, "outputSchema") || strings.Contains(res, "resultType") {
		t.Errorf("tools/list, for 2025-03-26: %s", res)
	}
	ok("6")
	refused("7", jsonrpc.CodeInvalidRequest) // initialize must not be batched
	refused("8", jsonrpc.CodeInvalidParams)  // folded duplicate keys: its own error
	refused("9", jsonrpc.CodeInvalidRequest) // not a request
	if len(got) != 9 {
		// ids 1, 2, "three", 4..9: the notification gets nothing.
		t.Errorf("%d ids answered, want 9: %s", len(got), r.Body)
	}
	// echo and add: each call of the batch reached the backend as a request of its own; nope,
	// which the backend does not list, did not reach it.
	calls := be.RequestsOf("tools/call")
	if len(calls) != 2 {
		t.Fatalf("the backend got %d tools/call, want 2", len(calls))
	}
	for _, ex := range calls {
		if bytes.HasPrefix(bytes.TrimSpace(ex.Body), []byte("[")) {
			t.Errorf("the backend got a batch: %s", ex.Body)
		}
	}
}

// TestBatchRefusals: what is refused whole, as the specification and JSON-RPC 2.0 say, and
// batches of every revision but 2025-03-26.
func TestBatchRefusals(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{Edge: Config{MaxBatchMessages: 3, MaxBatchBytes: 400}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid0326, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	sid1125, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	ping := rpc(1, "ping", `{}`)
	withHeader := legacyHeaders("", sid0326)
	withHeader.Set("Mcp-Method", "ping")
	be.Reset()
	for _, tt := range []struct {
		name   string
		h      http.Header
		body   string
		status int
		code   int
	}{
		{"empty", legacyHeaders("", sid0326), `[]`, 400, jsonrpc.CodeInvalidRequest},
		{"empty, spaced", legacyHeaders("", sid0326), " [ ] ", 400, jsonrpc.CodeInvalidRequest},
		{"too many messages", legacyHeaders("", sid0326), batchOf(ping, ping, ping, ping), 413, jsonrpc.CodeInvalidRequest},
		{"too many bytes", legacyHeaders("", sid0326), batchOf(rpc(1, "tools/call", `{"name":"be__echo","arguments":{"text":"`+strings.Repeat("x", 400)+`"}}`)), 413, jsonrpc.CodeInvalidRequest},
		{"not JSON", legacyHeaders("", sid0326), `[{"jsonrpc"`, 400, jsonrpc.CodeParseError},
		{"answers and requests", legacyHeaders("", sid0326), batchOf(ping, `{"jsonrpc":"2.0","id":"g1.a.b","result":{}}`), 400, jsonrpc.CodeInvalidRequest},
		{"Mcp-Method on a batch", withHeader, batchOf(ping), 400, jsonrpc.CodeHeaderMismatch},
		{"2025-11-25 session", legacyHeaders("", sid1125), batchOf(ping), 400, jsonrpc.CodeInvalidRequest},
		{"2025-11-25 session and header", legacyHeaders("2025-11-25", sid1125), batchOf(ping), 400, jsonrpc.CodeInvalidRequest},
		{"session-less 2025-06-18", legacyHeaders("2025-06-18", ""), batchOf(ping), 400, jsonrpc.CodeInvalidRequest},
		{"2026-07-28 header", legacyHeaders("2026-07-28", ""), batchOf(ping), 400, jsonrpc.CodeInvalidRequest},
		{"unknown session", legacyHeaders("", "s1.nope"), batchOf(ping), 404, jsonrpc.CodeInvalidRequest},
		{"answers nobody waits for", legacyHeaders("", sid0326), batchOf(`{"jsonrpc":"2.0","id":"g1.a.b","result":{}}`), 400, jsonrpc.CodeInvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", gw.URL, tt.h, tt.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if string(r.RPC.ID) != "null" {
				t.Errorf("a batch's refusal answers no id: %s", r.Body)
			}
			mcptest.CheckRPC(t, r, tt.code)
		})
	}
	// Notifications only: accepted with nothing to answer; session-less (no header, no
	// session) is 2025-03-26 too.
	for _, h := range []http.Header{legacyHeaders("", sid0326), legacyHeaders("", "")} {
		if r := do(t, "POST", gw.URL, h, batchOf(rpc(nil, "notifications/initialized", `{}`), rpc(nil, "notifications/cancelled", `{"requestId":1}`))); r.Status != http.StatusAccepted || len(r.Body) != 0 {
			t.Errorf("notifications only: %d %s", r.Status, r.Body)
		}
	}
	if r := do(t, "POST", gw.URL, legacyHeaders("", ""), batchOf(ping)); r.Status != http.StatusOK || batchMessages(t, r)["1"].Error != nil {
		t.Errorf("session-less 2025-03-26 batch: %d %s", r.Status, r.Body)
	}
	if n := len(be.Requests()); n != 0 {
		t.Errorf("the backend got %d requests from refused batches", n)
	}
}

// TestNoVersionWithout20250326: with 2025-03-26 not served, a request with neither a session
// nor a version is refused as before, and so is a batch.
func TestNoVersionWithout20250326(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{Edge: Config{Versions: []string{"2025-11-25", "2025-06-18"}}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	for _, body := range []string{rpc(1, "ping", `{}`), batchOf(rpc(1, "ping", `{}`))} {
		r := do(t, "POST", gw.URL, legacyHeaders("", ""), body)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%s: status %d: %s", body, r.Status, r.Body)
		}
		mcptest.CheckRPC(t, r, jsonrpc.CodeInvalidRequest)
	}
	// And a client asking for 2025-03-26 gets the nearest served version.
	_, r := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	if !strings.Contains(string(r.Body), `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize at 2025-03-26: %s", r.Body)
	}
}

// TestBatchDuplicateIDsAsDecoded: two requests of a batch have the same id when a client
// decodes them so ("b1" and "\u0062\u0031"), not only when their bytes match: their responses
// could not be told apart, and a notifications/cancelled of that id reaches both. The second is
// refused under the id it shares, as a byte-for-byte duplicate is.
func TestBatchDuplicateIDsAsDecoded(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	r := do(t, "POST", gw.URL, legacyHeaders("", sid), batchOf(
		`{"jsonrpc":"2.0","id":"b1","method":"ping","params":{}}`,
		`{"jsonrpc":"2.0","id":"\u0062\u0031","method":"ping","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}`,
		`{"jsonrpc":"2.0","id":"7","method":"ping","params":{}}`,
	))
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	answered, refused := map[string]int{}, 0
	for _, ms := range batchAnswers(t, r) {
		for _, m := range ms {
			var id any
			if err := json.Unmarshal(m.ID, &id); err != nil {
				t.Fatalf("id %s: %v", m.ID, err)
			}
			answered[fmt.Sprintf("%T %v", id, id)]++
			if m.Error != nil {
				if m.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(m.Error.Message, "same id") {
					t.Errorf("id %s: %+v", m.ID, m.Error)
				}
				refused++
			}
		}
	}
	// "b1" twice (one refused); 7 and "7" are different ids, each answered.
	want := map[string]int{"string b1": 2, "float64 7": 1, "string 7": 1}
	if fmt.Sprint(answered) != fmt.Sprint(want) || refused != 1 {
		t.Fatalf("answers by id %v with %d refused, want %v with 1: %s", answered, refused, want, r.Body)
	}
}

// TestBatchDuplicateIDsAsNumbers: a number id is the number a client decodes, not its digits.
// JavaScript clients (the TypeScript SDK, so mcp-remote) read every JSON number as a double: 0
// and -0 are one id to them, and so are two integers beyond 2^53 that round to the same double.
// Two requests of a batch with such ids are answered under what the client takes for one id, so
// the second is refused as a byte-for-byte duplicate is; integers a double tells apart stay
// apart.
func TestBatchDuplicateIDsAsNumbers(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	ids := []string{"0", "-0", "9007199254740992", "9007199254740993", "9007199254740994",
		"123456789012345678901234567", "123456789012345678901234568", "-5", "5"}
	var msgs []string
	for _, id := range ids {
		msgs = append(msgs, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping","params":{}}`)
	}
	r := do(t, "POST", gw.URL, legacyHeaders("", sid), batchOf(msgs...))
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	answered, refused := map[float64]int{}, map[float64]int{}
	for _, ms := range batchAnswers(t, r) {
		for _, m := range ms {
			var id float64 // as a JavaScript client decodes it
			if err := json.Unmarshal(m.ID, &id); err != nil {
				t.Fatalf("id %s: %v", m.ID, err)
			}
			answered[id]++
			if m.Error != nil {
				if m.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(m.Error.Message, "same id") {
					t.Errorf("id %s: %+v", m.ID, m.Error)
				}
				refused[id]++
			}
		}
	}
	// Six ids as a double reads them (0; 2^53 twice; 2^53+2; the 27-digit pair; -5; 5), each
	// answered once by a result, the second spelling of 0, of 2^53 and of the pair refused.
	if len(answered) != 6 || len(refused) != 3 {
		t.Fatalf("answers by id %v, refused %v: %s", answered, refused, r.Body)
	}
	for id, n := range answered {
		if n-refused[id] != 1 {
			t.Errorf("id %v: %d answers, %d refused, want one result", id, n, refused[id])
		}
	}
}

// TestBatchLoneSurrogateIDs: a JavaScript client keeps a lone surrogate of a string id, so
// "\ud800", "\udc00" and "\ufffd" are three ids to it (encoding/json would read all three as
// U+FFFD): a batch of the three is three requests, each answered by its result, none refused
// as sharing another's id.
func TestBatchLoneSurrogateIDs(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	var msgs []string
	for _, id := range []string{`"\ud800"`, `"\udc00"`, `"\ufffd"`} {
		msgs = append(msgs, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping","params":{}}`)
	}
	r := do(t, "POST", gw.URL, legacyHeaders("", sid), batchOf(msgs...))
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	results := 0
	for _, ms := range batchAnswers(t, r) {
		for _, m := range ms {
			if m.Error != nil {
				t.Errorf("id %s refused: %+v", m.ID, m.Error)
				continue
			}
			results++
		}
	}
	if results != 3 {
		t.Fatalf("%d results, want 3: %s", results, r.Body)
	}
}

// TestBatchCountedBeforeDecoding: a batch over legacy.maxBatchMessages is refused before its
// elements are decoded. A 1 MB body of half a million tiny elements was decoded whole (an
// allocation and a copy per element, some 500,000 allocations and 60 MB) before its count was
// looked at; it is now refused after one pass over its bytes. The figure held is a count of
// allocations, far above what one refused request makes and far below one per element.
func TestBatchCountedBeforeDecoding(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	const elements = 500_000
	for _, body := range []string{"[" + strings.Repeat("0,", elements-1) + "0]", "[" + strings.Repeat(`{"a":"[,]"},`, elements/10) + "{}]"} {
		h := legacyHeaders("", sid)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := do(t, "POST", gw.URL, h, body)
		runtime.ReadMemStats(&after)
		if r.Status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.Body), "more than 32 messages") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if n := after.Mallocs - before.Mallocs; n > 20_000 {
			t.Errorf("refusing a batch of %d bytes made %d allocations", len(body), n)
		}
	}
	// The count agrees with a decoder's on what it must not refuse: strings holding brackets,
	// commas and escaped quotes, nested arrays, white space.
	for body, want := range map[string]int{`[]`: 0, " [ ] ": 0, `[0]`: 1, `[ 1 , 2 ]`: 2, `[[1,2],{"a":[3,4]}]`: 2,
		`["a,b","c\",d","[{","x"]`: 4, `[{"s":"\\"},1]`: 2} {
		if got := countBatch([]byte(body), 32); got != want {
			t.Errorf("countBatch(%s) = %d, want %d", body, got, want)
		}
	}
}

// TestCountBatchAgreesWithDecoder: on well-formed arrays of every kind of value (strings holding
// brackets, commas, quotes and backslashes; nested arrays and objects; numbers and literals),
// countBatch counts what json.Unmarshal decodes, or more than the bound when there are more.
func TestCountBatchAgreesWithDecoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"[", "]", "{", "}", ",", `"`, `\`, "a", " ", "\\\"", "\n"}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(6); {
		case k == 0 && depth < 4:
			arr := make([]any, rng.IntN(4))
			for i := range arr {
				arr[i] = value(depth + 1)
			}
			return arr
		case k == 1 && depth < 4:
			obj := map[string]any{}
			for range rng.IntN(3) {
				obj[pieces[rng.IntN(len(pieces))]] = value(depth + 1)
			}
			return obj
		case k == 2:
			var b strings.Builder
			for range rng.IntN(6) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			return b.String()
		case k == 3:
			return rng.Float64() * 1e6
		}
		return []any{nil, true, false}[rng.IntN(3)]
	}
	for range 2000 {
		arr := make([]any, rng.IntN(40))
		for i := range arr {
			arr[i] = value(1)
		}
		body, err := json.Marshal(arr)
		if rng.IntN(2) == 0 {
			body, err = json.MarshalIndent(arr, " ", "\t") // white space between every token
		}
		if err != nil {
			t.Fatal(err)
		}
		want := min(len(arr), 33)
		if got := countBatch(body, 32); min(got, 33) != want {
			t.Fatalf("countBatch(%s) = %d, want %d", body, got, want)
		}
	}
}

// TestBatchBoundedByItsDeadline: a batch ends within legacy.batchTimeout however many of its
// messages wait behind hung ones: the requests running when it passes are cancelled and
// answered with a timeout error saying they may have run; those still waiting for their turn
// are answered with one saying they were sent to no backend (and never reach it); what finished
// before keeps its result. No more than legacy.batchConcurrency run at once meanwhile.
func TestBatchBoundedByItsDeadline(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	// The deadline must pass only after the echo has finished and call 3 has taken its turn,
	// and before the slow calls end (60 s): 2 s is far on both sides even on a loaded machine,
	// where a round trip through the gateway under -race can take a good part of 500 ms.
	gw, _ := startLegacyGateway(t, gwSpec{Edge: Config{BatchConcurrency: 2, BatchTimeout: 2 * time.Second}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL(), Timeout: time.Minute})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	be.Reset()
	slow := func(id int) string {
		return rpc(id, "tools/call", `{"name":"be__slow","arguments":{"ms":60000}}`)
	}
	r := do(t, "POST", gw.URL, legacyHeaders("", sid), batchOf(
		rpc(1, "tools/call", `{"name":"be__echo","arguments":{"text":"one"}}`),
		slow(2), slow(3), slow(4), slow(5)))
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	got := batchMessages(t, r)
	if len(got) != 5 || got["1"].Error != nil || !strings.Contains(string(got["1"].Result), `"one"`) {
		t.Fatalf("answers %s, want the echo's result and the four slow calls' errors", r.Body)
	}
	for id, want := range map[string]string{"2": "while this request ran", "3": "while this request ran",
		"4": "not sent to any backend", "5": "not sent to any backend"} {
		e := got[id].Error
		if e == nil || e.Code != jsonrpc.CodeUpstreamTimeout || !strings.Contains(e.Message, want) {
			t.Errorf("id %s: %s, want a -32011 error saying %q", id, r.Body, want)
		}
	}
	if n := len(backendCalls(be)); n != 3 {
		t.Errorf("the backend got %d calls, want the echo and the two slow calls that had their turn", n)
	}
}

// backendCalls are the tools/call requests a backend received.
func backendCalls(be *mcptest.Server) []mcptest.Exchange {
	var out []mcptest.Exchange
	for _, ex := range be.Requests() {
		if ex.Header.Get("Mcp-Method") == "tools/call" {
			out = append(out, ex)
		}
	}
	return out
}

// TestBatchCancelsItsOwnRequests: a notifications/cancelled in a batch that names a request
// before it in the array cancels that request before it is sent: it is answered as cancelled
// and its backend never sees it, every time (the two used to race: served at once, the call ran
// or not depending on which was first). One that names a request after it (not yet sent when
// the cancel was) is ignored, as one naming an unknown id is: those calls run. Twenty batches
// with a session and twenty without; run with -count to repeat.
func TestBatchCancelsItsOwnRequests(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	cancel := func(id string) string { // id as JSON
		return rpc(nil, "notifications/cancelled", `{"requestId":`+id+`,"reason":"changed my mind"}`)
	}
	echo := func(id any, text string) string {
		return rpc(id, "tools/call", `{"name":"be__echo","arguments":{"text":"`+text+`"}}`)
	}
	for i := range 40 {
		session := sid
		if i%2 == 1 {
			session = "" // a session-less batch of a client with no version header
		}
		be.Reset()
		gone, kept, later := fmt.Sprintf("gone-%d", i), fmt.Sprintf("kept-%d", i), fmt.Sprintf("later-%d", i)
		r := do(t, "POST", gw.URL, legacyHeaders("", session), batchOf(
			echo("a", gone), // cancelled by the next message
			cancel(`"a"`),
			cancel(`"b"`), // names the request after it: ignored
			echo("b", later),
			cancel(`"unknown"`),
			echo(3, kept),
			cancel(`"\u0061"`), // the same id as "a", as decoded: a second cancel changes nothing
		))
		if r.Status != http.StatusOK {
			t.Fatalf("batch %d: status %d: %s", i, r.Status, r.Body)
		}
		got := batchMessages(t, r)
		if e := got[`"a"`].Error; len(got) != 3 || e == nil || e.Message != "Request cancelled by the client" {
			t.Fatalf("batch %d: %s, want id \"a\" answered as cancelled and two results", i, r.Body)
		}
		for id, text := range map[string]string{`"b"`: later, "3": kept} {
			if m := got[id]; m.Error != nil || !strings.Contains(string(m.Result), text) {
				t.Fatalf("batch %d: id %s: %s", i, id, r.Body)
			}
		}
		calls := backendCalls(be)
		for _, ex := range calls {
			if bytes.Contains(ex.Body, []byte(gone)) {
				t.Fatalf("batch %d: the backend received the cancelled call: %s", i, ex.Body)
			}
		}
		if len(calls) != 2 {
			t.Fatalf("batch %d: the backend received %d calls, want the two not cancelled", i, len(calls))
		}
	}
}
