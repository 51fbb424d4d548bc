package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams"
)

// structBackend is an MCP backend written the way many Go backends are: it decodes every
// request with encoding/json into a struct, which matches member names case-insensitively and
// keeps the last match. It speaks the real wire protocol of either era: a 2026-07-28 server, or
// a 2025-11-25 one with an initialize handshake and a session, which the gateway bridges. It
// records what it would act on for every call it receives.
type structBackend struct {
	name   string
	legacy bool
	srv    *httptest.Server
	// tools is the tools/list result's tools array.
	tools string

	mu    sync.Mutex
	calls []structCall
}

// structCall is what the backend acted on: the method, the name, URI or ref it read, and the
// arguments as its struct saw them.
type structCall struct {
	Method string
	Target string
	Repo   string
	Header http.Header
	// Completes is, for a completion/complete, the argument completed and the context as read.
	Completes string
}

type structRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		URI       string `json:"uri"`
		Arguments struct {
			Repo   string `json:"repo"`
			Who    string `json:"who"`
			Region string `json:"region"`
			// Quota is read as its literal, as decimal-exact decoders read numbers.
			Quota json.Number `json:"quota"`
		} `json:"arguments"`
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		RequestState string `json:"requestState"`
		Argument     struct {
			Name string `json:"name"`
		} `json:"argument"`
		Context struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"context"`
	} `json:"params"`
}

// structShelves is the resource template a structBackend lists: shelves of items.
const structShelves = "mem://shelves/{shelf}/{item}"

const structTools = `[{"name":"get_repo","inputSchema":{"type":"object","properties":{"repo":{"type":"string"}}}},` +
	`{"name":"delete_repo","inputSchema":{"type":"object","properties":{"repo":{"type":"string"}}}},` +
	`{"name":"set_region","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
	`"quota":{"type":"integer","x-mcp-header":"Quota"}}}}]`

func startStructBackend(t *testing.T, name string, legacy bool) *structBackend {
	t.Helper()
	sb := &structBackend{name: name, legacy: legacy, tools: structTools}
	sb.srv = httptest.NewServer(http.HandlerFunc(sb.serve))
	t.Cleanup(sb.srv.Close)
	return sb
}

// startBothEras fronts a 2026-07-28 struct backend "m" and a bridged 2025-11-25 one "l" with a
// gateway whose health probes are an hour apart, and returns its MCP URL and the backends,
// modern first.
func startBothEras(t *testing.T) (string, []*structBackend) {
	t.Helper()
	modern, legacy := startStructBackend(t, "m", false), startStructBackend(t, "l", true)
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = []UpstreamConfig{modern.upstream(), legacy.upstream()}
		c.HealthInterval = time.Hour
	})
	return "http://" + gw.MCP + "/mcp", []*structBackend{modern, legacy}
}

func (sb *structBackend) upstream() UpstreamConfig {
	p := "2026-07-28"
	if sb.legacy {
		p = "2025-11-25"
	}
	return UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: sb.name, URL: sb.srv.URL + "/mcp", Protocol: p, Timeout: 5 * time.Second}}
}

func (sb *structBackend) received() []structCall {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return append([]structCall(nil), sb.calls...)
}

func (sb *structBackend) reset() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.calls = nil
}

func (sb *structBackend) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req structRequest
	if err != nil || json.Unmarshal(body, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // notifications/initialized and the like
		w.WriteHeader(http.StatusAccepted)
		return
	}
	done := ``
	if !sb.legacy {
		done = `,"resultType":"complete"`
	}
	var result string
	switch p := &req.Params; req.Method {
	case "initialize":
		if !sb.legacy {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{},"completions":{}},"serverInfo":{"name":"sb","version":"1"}}`
	case "server/discover":
		if sb.legacy {
			http.Error(w, "not initialized", http.StatusBadRequest)
			return
		}
		result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"prompts":{},"resources":{},"completions":{}},"ttlMs":60000,"cacheScope":"public"` + done + `}`
	case "tools/list":
		result = `{"tools":` + sb.tools + `,"ttlMs":60000,"cacheScope":"public"` + done + `}`
	case "prompts/list":
		result = `{"prompts":[{"name":"greet"},{"name":"secret_prompt"}],"ttlMs":60000,"cacheScope":"public"` + done + `}`
	case "resources/list":
		result = `{"resources":[],"ttlMs":60000,"cacheScope":"public"` + done + `}`
	case "resources/templates/list":
		result = `{"resourceTemplates":[{"uriTemplate":"` + structShelves + `","name":"shelves"}],"ttlMs":60000,"cacheScope":"public"` + done + `}`
	case "tools/call", "prompts/get", "resources/read", "completion/complete":
		c := structCall{Method: req.Method, Target: p.Name, Repo: p.Arguments.Repo + p.Arguments.Who + p.Arguments.Region + p.Arguments.Quota.String(), Header: r.Header.Clone()}
		switch req.Method {
		case "resources/read":
			c.Target = p.URI
		case "completion/complete":
			c.Target = p.Ref.Name + p.Ref.URI
			ctx, _ := json.Marshal(p.Context.Arguments)
			c.Completes = p.Argument.Name + " " + string(ctx)
		}
		sb.mu.Lock()
		sb.calls = append(sb.calls, c)
		sb.mu.Unlock()
		text, _ := json.Marshal("ran " + c.Target + " " + c.Repo)
		switch req.Method {
		case "tools/call":
			result = `{"content":[{"type":"text","text":` + string(text) + `}]` + done + `}`
		case "prompts/get":
			result = `{"messages":[{"role":"user","content":{"type":"text","text":` + string(text) + `}}]` + done + `}`
		case "resources/read":
			uri, _ := json.Marshal(p.URI)
			result = `{"contents":[{"uri":` + string(uri) + `,"text":` + string(text) + `}]` + done + `}`
		case "completion/complete":
			values := "[" + string(text) + "]"
			if p.Ref.URI == structShelves {
				// The values of the variable it read it was asked for, whatever the caller may read.
				values = `[]`
				if v, ok := map[string]string{"shelf": `["public","private"]`, "item": `["ledger","payroll"]`}[p.Argument.Name]; ok {
					values = v
				}
			}
			result = `{"completion":{"values":` + values + `}` + done + `}`
		}
	default:
		result = ""
	}
	w.Header().Set("Content-Type", "application/json")
	if result == "" {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
		return
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
}

// caseVariantAttack is one hostile request of TestCaseVariantMembers: params that name a
// member the gateway checks in one spelling and carry another spelling a case-insensitive
// backend would read instead.
type caseVariantAttack struct {
	name    string
	method  string
	mcpName string // the Mcp-Name header, for the methods that have one
	params  string // inside params, after _meta
}

// caseVariantAttacks is the hostile table for issue 15 §1. {b} stands for the backend's name.
var caseVariantAttacks = []caseVariantAttack{
	{"NAME after name", "tools/call", "{b}__get_repo", `"name":"{b}__get_repo","arguments":{"repo":"a"},"NAME":"delete_repo"`},
	{"Name before name", "tools/call", "{b}__get_repo", `"Name":"delete_repo","name":"{b}__get_repo","arguments":{"repo":"a"}`},
	{"escaped NAME", "tools/call", "{b}__get_repo", `"name":"{b}__get_repo","\u004eAME":"delete_repo"`},
	{"ARGUMENTS after arguments", "tools/call", "{b}__get_repo", `"name":"{b}__get_repo","arguments":{"repo":"a"},"ARGUMENTS":{"repo":"secret"}`},
	{"lone Arguments", "tools/call", "{b}__get_repo", `"name":"{b}__get_repo","Arguments":{"repo":"secret"}`},
	{"long s in arguments", "tools/call", "{b}__get_repo", `"name":"{b}__get_repo","arguments":{"repo":"a"},"argument\u017f":{"repo":"secret"}`},
	{"REPO inside arguments", "tools/call", "{b}__get_repo", `"name":"{b}__get_repo","arguments":{"repo":"a","REPO":"secret"}`},
	{"requestState variant", "tools/call", "{b}__get_repo", `"name":"{b}__get_repo","RequestState":"forged"`},
	{"_meta key variant", "tools/call", "{b}__get_repo", `"name":"{b}__get_repo","_META":{"progressToken":"x"}`},
	{"prompt NAME", "prompts/get", "{b}__greet", `"name":"{b}__greet","NAME":"secret_prompt"`},
	{"prompt Arguments", "prompts/get", "{b}__greet", `"name":"{b}__greet","arguments":{"who":"a"},"Arguments":{"who":"b"}`},
	{"resource URI", "resources/read", "{b}+mem://public", `"uri":"{b}+mem://public","URI":"mem://secret"`},
	{"resource Uri before uri", "resources/read", "{b}+mem://public", `"Uri":"mem://secret","uri":"{b}+mem://public"`},
	{"completion ref NAME", "completion/complete", "", `"ref":{"type":"ref/prompt","name":"{b}__greet","NAME":"secret_prompt"},"argument":{"name":"a","value":"b"}`},
	{"completion lone ref Name", "completion/complete", "", `"ref":{"type":"ref/prompt","Name":"secret_prompt"},"argument":{"name":"a","value":"b"}`},
	{"completion REF", "completion/complete", "", `"ref":{"type":"ref/prompt","name":"{b}__greet"},"REF":{"type":"ref/prompt","name":"secret_prompt"},"argument":{"name":"a","value":"b"}`},
	{"completion resource URI", "completion/complete", "", `"ref":{"type":"ref/resource","uri":"{b}+mem://public","URI":"mem://secret"},"argument":{"name":"a","value":"b"}`},
}

const structMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// TestCaseVariantMembers (issue 15 §1): behind a 2026-07-28 backend and a bridged 2025-11-25
// one, both decoding with encoding/json into structs, every request whose params carry a
// spelling variant of a member the gateway routes on, authorizes or binds is refused with
// 400/-32602 and the backend receives no call at all. The benign requests of the same shapes
// reach the backend, which reads what the gateway checked.
func TestCaseVariantMembers(t *testing.T) {
	url, backends := startBothEras(t)
	for _, sb := range backends {
		era := "2026"
		if sb.legacy {
			era = "legacy"
		}
		fill := func(s string) string { return strings.ReplaceAll(s, "{b}", sb.name) }
		send := func(t *testing.T, method, name, params string) (int, string) {
			t.Helper()
			status, _, body := post(t, url, modernHeaders(method, fill(name)), `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{`+structMeta+","+fill(params)+`}}`)
			return status, body
		}
		t.Run(era+"/benign", func(t *testing.T) {
			for _, ok := range []struct{ method, name, params, target string }{
				{"tools/call", "{b}__get_repo", `"name":"{b}__get_repo","arguments":{"repo":"a"}`, "get_repo"},
				{"prompts/get", "{b}__greet", `"name":"{b}__greet","arguments":{"who":"a"}`, "greet"},
				{"resources/read", "{b}+mem://public", `"uri":"{b}+mem://public"`, "mem://public"},
				{"completion/complete", "", `"ref":{"type":"ref/prompt","name":"{b}__greet"},"argument":{"name":"a","value":"b"}`, "greet"},
			} {
				sb.reset()
				if status, body := send(t, ok.method, ok.name, ok.params); status != http.StatusOK || strings.Contains(body, `"error"`) {
					t.Fatalf("%s: status %d body %s", ok.method, status, body)
				}
				got := sb.received()
				if len(got) != 1 || got[0].Method != ok.method || got[0].Target != ok.target {
					t.Fatalf("%s: backend acted on %+v, want %s", ok.method, got, ok.target)
				}
			}
		})
		for _, tt := range caseVariantAttacks {
			t.Run(era+"/"+tt.name, func(t *testing.T) {
				sb.reset()
				status, body := send(t, tt.method, tt.mcpName, tt.params)
				var resp struct {
					Error *struct{ Code int } `json:"error"`
				}
				_ = json.Unmarshal([]byte(body), &resp)
				if status != http.StatusBadRequest || resp.Error == nil || resp.Error.Code != -32602 {
					t.Errorf("status %d body %s, want 400 and -32602", status, body)
				}
				if got := sb.received(); len(got) != 0 {
					t.Errorf("the backend acted on %+v", got)
				}
			})
		}
	}
}

// TestParamHeadersBothEras (issue 15 §6): behind a 2026-07-28 backend and a bridged 2025-11-25
// one, an Mcp-Param-* header must equal the argument it mirrors; a mismatch, a missing header,
// a header for an absent argument or an undeclared header is refused with 400/-32020 and the
// backend receives no call, and what the backend receives is the header recomputed from the
// body it acts on.
func TestParamHeadersBothEras(t *testing.T) {
	url, backends := startBothEras(t)
	for _, sb := range backends {
		call := setRegionCaller(url, sb)
		sb.reset()
		if status, body := call(t, `"region":"eu"`, "Mcp-Param-Region", "=?base64?ZXU=?="); status != http.StatusOK {
			t.Fatalf("%s: matching header: %d %s", sb.name, status, body)
		}
		got := sb.received()
		if len(got) != 1 || got[0].Repo != "eu" || got[0].Header.Values("Mcp-Param-Region")[0] != "eu" || len(got[0].Header.Values("Mcp-Param-Region")) != 1 {
			t.Fatalf("%s: backend received %+v, want region eu and Mcp-Param-Region eu", sb.name, got)
		}
		for _, tt := range []struct {
			name string
			args string
			hdr  []string
		}{
			{"mismatch", `"region":"eu"`, []string{"Mcp-Param-Region", "us"}},
			{"missing", `"region":"eu"`, nil},
			{"absent argument", ``, []string{"Mcp-Param-Region", "eu"}},
			{"undeclared", `"region":"eu"`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Tenant", "acme"}},
			{"twice", `"region":"eu"`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Region", "us"}},
			// A control character, C1 as much as C0, cannot be mirrored, however it is spelt.
			{"a C0 control in the sentinel", `"region":"eu\u0001"`, []string{"Mcp-Param-Region", mcpheader.Encode("eu\x01")}},
			{"a C1 control in the sentinel", `"region":"eu\u0085"`, []string{"Mcp-Param-Region", mcpheader.Encode("eu\u0085")}},
			{"a raw C1 control in the sentinel", "\"region\":\"eu\u009b\"", []string{"Mcp-Param-Region", mcpheader.Encode("eu\u009b")}},
			{"a raw C1 control", "\"region\":\"eu\u0085\"", []string{"Mcp-Param-Region", "eu\u0085"}},
		} {
			wantHeaderMismatch(t, sb, call, tt.name, tt.args, tt.hdr)
		}
	}
}

// TestParamHeadersOnlyWhatEveryParserReads: an argument that JSON parsers read as different
// values cannot be mirrored into an Mcp-Param-* header, so the call is refused with 400/-32020
// and the backend receives nothing: a number whose decimal value is no integer although a
// float64 rounds it to one (the backend here reads the literal, as decimal-exact decoders do),
// and a string with a lone surrogate escape (U+FFFD to encoding/json, the surrogate itself to
// JSON.parse and Python). The same integer spelled another way is mirrored as its decimal form.
func TestParamHeadersOnlyWhatEveryParserReads(t *testing.T) {
	url, backends := startBothEras(t)
	for _, sb := range backends {
		call := setRegionCaller(url, sb)
		sb.reset()
		if status, body := call(t, `"quota":4.2e1`, "Mcp-Param-Quota", "42"); status != http.StatusOK {
			t.Fatalf("%s: 4.2e1 with header 42: %d %s", sb.name, status, body)
		}
		if got := sb.received(); len(got) != 1 || got[0].Repo != "4.2e1" || got[0].Header.Get("Mcp-Param-Quota") != "42" {
			t.Fatalf("%s: backend received %+v, want quota 4.2e1 and Mcp-Param-Quota 42", sb.name, got)
		}
		for _, tt := range []struct {
			name string
			args string
			hdr  []string
		}{
			{"not quite an integer", `"quota":42.00000000000000001`, []string{"Mcp-Param-Quota", "42"}},
			{"below 2^53 by a fraction", `"quota":9007199254740990.6`, []string{"Mcp-Param-Quota", "9007199254740991"}},
			{"header not quite an integer", `"quota":42`, []string{"Mcp-Param-Quota", "42.00000000000000001"}},
			{"lone high surrogate", `"region":"eu\ud800"`, []string{"Mcp-Param-Region", mcpheader.Encode("eu\ufffd")}},
			{"lone low surrogate", `"region":"\udc00eu"`, []string{"Mcp-Param-Region", mcpheader.Encode("\ufffdeu")}},
		} {
			wantHeaderMismatch(t, sb, call, tt.name, tt.args, tt.hdr)
		}
	}
}

// setRegionCaller returns a function that calls sb's set_region through the gateway at url with
// the arguments args (inside the object) and the headers hdr (name, value, ...), and returns
// the status and body.
func setRegionCaller(url string, sb *structBackend) func(t *testing.T, args string, hdr ...string) (int, string) {
	tool := sb.name + "__set_region"
	return func(t *testing.T, args string, hdr ...string) (int, string) {
		t.Helper()
		h := modernHeaders("tools/call", tool)
		for i := 0; i+1 < len(hdr); i += 2 {
			h.Add(hdr[i], hdr[i+1])
		}
		status, _, body := post(t, url, h, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+structMeta+`,"name":"`+tool+`","arguments":{`+args+`}}}`)
		return status, body
	}
}

// wantHeaderMismatch calls set_region with args and hdr and checks that the gateway refuses the
// call with 400/-32020 and sb receives nothing.
func wantHeaderMismatch(t *testing.T, sb *structBackend, call func(*testing.T, string, ...string) (int, string), name, args string, hdr []string) {
	t.Helper()
	sb.reset()
	status, body := call(t, args, hdr...)
	if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32020`) {
		t.Errorf("%s/%s: %d %s, want 400 and -32020", sb.name, name, status, body)
	}
	if got := sb.received(); len(got) != 0 {
		t.Errorf("%s/%s: the backend acted on %+v", sb.name, name, got)
	}
}
