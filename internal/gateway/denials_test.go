package gateway

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// The denial and limit paths of the gateway, on the wire, for both eras: every way the gateway
// refuses a call on authorization grounds (policy, step-up, the approval page, confirmation, pin
// drift, a tool set's boundary) and every limit a caller can hit (rate limits, concurrency, the
// calls waiting for the page). server.draftErrors off must answer them exactly as the gateway
// always has (testdata/denials/off.golden, recorded before the switch existed); on, in the shapes
// of the drafts it names (on.golden, and the assertions of TestDraftErrorsOn).

var updateDenials = flag.Bool("update-denials", false, "rewrite testdata/denials/*.golden from what the gateway answers now")

// denialSite is three gateways in front of one backend, alpha, configured for every path:
// main (policy, approval and the bound on calls waiting for it, confirmation, pins, tool sets, a
// tool's rate limit), limits (the per-caller rate limit and concurrency) and expiry
// (requestState lives a second).
type denialSite struct {
	iss                  *devissuer.Issuer
	alpha                *mcptest.Server
	main, limits, expiry Listeners
}

// denialRules: echo needs the approval page, add a confirmation, whoami the scope admin;
// fail is denied; progress is limited to one call an hour; ask_name, slow and late are allowed.
var denialRules = []authz.RuleConfig{
	{ID: "page", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmURL},
	{ID: "form", Upstream: "alpha", Tools: []string{"add"}, Confirm: authz.ConfirmForm},
	{ID: "admin", Upstream: "alpha", Tools: []string{"whoami"}, AnyScope: []string{"admin"}},
	{ID: "never", Upstream: "alpha", Tools: []string{"fail"}, Effect: authz.EffectDeny},
	{ID: "hourly", Upstream: "alpha", Tools: []string{"progress"}, RateLimit: "1/h"},
	{ID: "rest", Upstream: "alpha", Tools: []string{"ask_name", "slow", "late"}},
}

func startDenialSite(t *testing.T, drafts []string) denialSite {
	t.Helper()
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	base := func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = denialRules
		c.Approval.ClientID = "gateway-approval"
		c.Server.DraftErrors = drafts
	}
	s := denialSite{iss: iss, alpha: alpha}
	s.main = startTestGateway(t, func(c *Config) {
		base(c)
		c.Pins = &pins.Config{Mode: pins.ModeTOFU}
		c.Approval.MaxPendingPerCaller = 1
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "narrow", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"ask_name"}}}}}
	}, alpha)
	// First contact pins what alpha lists now; late, added afterwards, is new: blocked.
	h := modernHeaders("tools/list", "")
	h.Set("Authorization", "Bearer "+s.token(t, "lister", "tools:use"))
	if status, _, body := post(t, "http://"+s.main.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`); status != http.StatusOK {
		t.Fatalf("tools/list: %d %s", status, body)
	}
	// Heard through a listen, so that the gateway reads the list again and judges late on its
	// pin (a name no list it holds shows would be an unknown tool).
	listChangeHeard(t, s.main, s.token(t, "lister", "tools:use"), alpha, func() {
		alpha.MCP().AddTool(tool("late", "Came later.", nil, nil), noopTool)
	})
	s.limits = startTestGateway(t, func(c *Config) {
		base(c)
		c.RateLimit.PerCaller = "1/h burst 6"
		c.Server.MaxConcurrentPerCaller = 1
	}, alpha)
	s.expiry = startTestGateway(t, func(c *Config) {
		base(c)
		c.MRTR.TTL = time.Second
	}, alpha)
	return s
}

func (s denialSite) token(t *testing.T, sub string, scope string) string {
	t.Helper()
	return mint(t, s.iss, devissuer.Claims{"sub": sub, "scope": scope})
}

// wire is one exchange as the transcript records it.
type wire struct {
	Status int
	Header http.Header
	// Msg is the response's last JSON-RPC message (the result or error), "" for none.
	Msg string
}

// recordedHeaders are the response headers the transcript shows.
var recordedHeaders = []string{"Content-Type", "Retry-After", "Www-Authenticate", "Ratelimit-Limit", "Ratelimit-Remaining"}

// transcript collects the exchanges of the paths, normalised, in the order they ran.
type transcript struct {
	b strings.Builder
	// wires are the exchanges as they came, by path.
	wires []namedWire
}

type namedWire struct {
	name string
	wire
}

// volatile are the parts of an answer that differ from run to run.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"requestState":"[^"]*"`), `"requestState":"<state>"`},
	{regexp.MustCompile(`"elicitationId":"[^"]*"`), `"elicitationId":"<id>"`},
	{regexp.MustCompile(`/approval/c/[0-9a-f]+`), `/approval/c/<id>`},
	{regexp.MustCompile(`"authorizationContextId":"[^"]*"`), `"authorizationContextId":"<ctx>"`},
	{regexp.MustCompile(`retry after \d+s`), `retry after <n>s`},
	{regexp.MustCompile(`"retryAfterMs":\d+`), `"retryAfterMs":<n>`},
	{regexp.MustCompile(`"X-Request-Id":"[0-9a-f]+"`), `"X-Request-Id":"<id>"`},
}

func (tr *transcript) add(name string, w wire) {
	tr.wires = append(tr.wires, namedWire{name, w})
	fmt.Fprintf(&tr.b, "== %s\nHTTP %d\n", name, w.Status)
	for _, h := range recordedHeaders {
		v := w.Header.Get(h)
		if v == "" {
			continue
		}
		if h == "Retry-After" && len(v) > 2 {
			v = "<n>" // an hour's limit, counted down
		}
		fmt.Fprintf(&tr.b, "%s: %s\n", h, v)
	}
	msg := w.Msg
	for _, v := range volatile {
		msg = v.re.ReplaceAllString(msg, v.with)
	}
	fmt.Fprintf(&tr.b, "%s\n\n", msg)
}

// modernCall posts a 2026-07-28 tools/call to the endpoint at url as tok with the client
// capabilities caps, and extra params members (a retry's), and returns what came back.
func modernCall(t *testing.T, url, tok, caps, name, args, extra string) wire {
	t.Helper()
	h := modernHeaders("tools/call", name)
	h.Set("Authorization", "Bearer "+tok)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	status, hdr, body := post(t, url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"`+name+`","arguments":`+args+extra+`}}`)
	return wire{Status: status, Header: hdr, Msg: lastRPC(hdr, body)}
}

// lastRPC is the last JSON-RPC message of a JSON or SSE body.
func lastRPC(hdr http.Header, body string) string {
	if strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		msgs := legacyclient.SSEMessages([]byte(body))
		if len(msgs) == 0 {
			return ""
		}
		return string(msgs[len(msgs)-1])
	}
	return strings.TrimSpace(body)
}

// stateOf is the requestState of an input_required answer.
func stateOf(t *testing.T, w wire) string {
	t.Helper()
	var m struct {
		Result struct{ RequestState string } `json:"result"`
	}
	if json.Unmarshal([]byte(w.Msg), &m) != nil || m.Result.RequestState == "" {
		t.Fatalf("no requestState in %d %s", w.Status, w.Msg)
	}
	return m.Result.RequestState
}

const (
	capsURL  = `{"elicitation":{"form":{},"url":{}}}`
	capsForm = `{"elicitation":{}}`
)

func decided(action, state string) string {
	return `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"` + action + `"}},"requestState":"` + state + `"`
}

// modernPaths runs every path with raw 2026-07-28 requests, each caller its own subject.
func (s denialSite) modernPaths(t *testing.T, tr *transcript) {
	main, limits, expiry := "http://"+s.main.MCP+"/mcp", "http://"+s.limits.MCP+"/mcp", "http://"+s.expiry.MCP+"/mcp"
	use := "tools:use"
	tr.add("policy deny", modernCall(t, main, s.token(t, "m-deny", use), capsURL, "alpha__fail", `{}`, ""))
	tr.add("set boundary", modernCall(t, main+"/narrow", s.token(t, "m-set", use), capsURL, "alpha__echo", `{"text":"x"}`, ""))
	tr.add("step-up", modernCall(t, main, s.token(t, "m-step", use), capsURL, "alpha__whoami", `{}`, ""))
	tok := s.token(t, "m-page", use)
	ask := modernCall(t, main, tok, capsURL, "alpha__echo", `{"text":"x"}`, "")
	tr.add("approval needed", ask)
	tr.add("approval retried undecided", modernCall(t, main, tok, capsURL, "alpha__echo", `{"text":"x"}`, decided("accept", stateOf(t, ask))))
	tr.add("approval declined in the client", modernCall(t, main, tok, capsURL, "alpha__echo", `{"text":"x"}`, decided("decline", stateOf(t, ask))))
	tr.add("approval without URL elicitation", modernCall(t, main, s.token(t, "m-nourl", use), capsForm, "alpha__echo", `{"text":"x"}`, ""))
	tok = s.token(t, "m-form", use)
	ask = modernCall(t, main, tok, capsForm, "alpha__add", `{"a":1,"b":2}`, "")
	tr.add("confirmation needed", ask)
	tr.add("confirmation declined", modernCall(t, main, tok, capsForm, "alpha__add", `{"a":1,"b":2}`,
		`,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":false}}},"requestState":"`+stateOf(t, ask)+`"`))
	tr.add("confirmation without elicitation", modernCall(t, main, s.token(t, "m-noform", use), `{}`, "alpha__add", `{"a":1,"b":2}`, ""))
	tr.add("pin block", modernCall(t, main, s.token(t, "m-pin", use), capsURL, "alpha__late", `{"path":"a"}`, ""))
	tok = s.token(t, "m-hourly", use)
	tr.add("tool rate limit, first", modernCall(t, main, tok, capsURL, "alpha__progress", `{"steps":0}`, ""))
	tr.add("tool rate limit", modernCall(t, main, tok, capsURL, "alpha__progress", `{"steps":0}`, ""))

	tok = s.token(t, "m-caller", use)
	var last wire
	for i := 0; i < 10 && last.Status != http.StatusTooManyRequests; i++ {
		last = modernCall(t, limits, tok, capsURL, "alpha__late", `{"path":"a"}`, "")
	}
	tr.add("caller rate limit", last)
	tok = s.token(t, "m-busy", use)
	held := make(chan wire, 1)
	go func() { held <- modernCall(t, limits, tok, capsURL, "alpha__slow", `{"ms":3000}`, "") }()
	waitInFlight(t, s.alpha, "slow")
	tr.add("caller concurrency", modernCall(t, limits, tok, capsURL, "alpha__late", `{"path":"a"}`, ""))
	<-held
	tok = s.token(t, "m-pending", use)
	if w := modernCall(t, main, tok, capsURL, "alpha__echo", `{"text":"1"}`, ""); w.Status != http.StatusOK {
		t.Fatalf("first approval: %d %s", w.Status, w.Msg)
	}
	tr.add("approvals pending", modernCall(t, main, tok, capsURL, "alpha__echo", `{"text":"2"}`, ""))

	tok = s.token(t, "m-expiry", use)
	ask = modernCall(t, expiry, tok, capsURL, "alpha__echo", `{"text":"x"}`, "")
	time.Sleep(1200 * time.Millisecond)
	tr.add("approval expired", modernCall(t, expiry, tok, capsURL, "alpha__echo", `{"text":"x"}`, decided("accept", stateOf(t, ask))))
}

// parallelUnlessUpdating runs the test in parallel with the package's other parallel tests,
// except when -update-denials rewrites the golden files: TestDraftErrorsOn reads the off.golden
// TestDraftErrorsOff writes then.
func parallelUnlessUpdating(t *testing.T) {
	if !*updateDenials {
		t.Parallel()
	}
}

// waitInFlight waits until alpha is running a call of tool.
func waitInFlight(t *testing.T, alpha *mcptest.Server, tool string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.ContainsFunc(alpha.RequestsOf("tools/call"), func(r mcptest.Exchange) bool { return strings.Contains(string(r.Body), `"name":"`+tool+`"`) }) {
		if time.Now().After(deadline) {
			t.Fatalf("alpha never received the %s call", tool)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// legacyCall posts a 2025-11-25 tools/call on the session and returns what came back.
func legacyCall(t *testing.T, c *legacyclient.Raw, url, sid, name, args string) wire {
	t.Helper()
	r := c.Post(t, url, sid, c.CallArgs(name, args))
	w := wire{Status: r.Status, Header: r.Header}
	if len(r.Msgs) > 0 {
		w.Msg = string(r.Msgs[len(r.Msgs)-1])
	}
	return w
}

// legacySession initializes a 2025-11-25 session as sub, declaring caps.
func (s denialSite) legacySession(t *testing.T, url, sub, scope, caps string) (*legacyclient.Raw, string) {
	t.Helper()
	c := &legacyclient.Raw{Token: s.token(t, sub, scope)}
	r := c.Post(t, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+legacyclient.Version+
		`","capabilities":`+caps+`,"clientInfo":{"name":"legacy-raw","version":"1.0.0"}}}`)
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s", r)
	}
	if n := c.Post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", n)
	}
	return c, sid
}

// legacyAsked opens a call whose answer the gateway asks the client for, answers its
// elicitation/create with answer (the client's result), and returns the call's outcome.
func legacyAsked(t *testing.T, c *legacyclient.Raw, url, sid, name, args, answer string) wire {
	t.Helper()
	st := c.Open(t, url, sid, c.CallArgs(name, args))
	req := st.NextRequest(t, "elicitation/create")
	if a := c.Post(t, url, sid, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+answer+`}`); a.Status != http.StatusAccepted {
		t.Fatalf("answer: %s", a)
	}
	m := st.NextResult(t)
	msg := `{"id":` + string(m.ID) + `,"result":` + string(m.Result) + `}`
	if m.Error != nil {
		msg = `{"id":` + string(m.ID) + `,"error":` + string(m.Error) + `}`
	}
	return wire{Status: st.Status(), Header: http.Header{"Content-Type": {"text/event-stream"}}, Msg: msg}
}

// legacyPaths runs the paths a 2025-11-25 client can take, with raw requests.
func (s denialSite) legacyPaths(t *testing.T, tr *transcript) {
	main, limits := "http://"+s.main.MCP+"/mcp", "http://"+s.limits.MCP+"/mcp"
	use := "tools:use"
	c, sid := s.legacySession(t, main, "l-main", use, capsForm)
	tr.add("legacy: policy deny", legacyCall(t, c, main, sid, "alpha__fail", `{}`))
	tr.add("legacy: step-up", legacyCall(t, c, main, sid, "alpha__whoami", `{}`))
	tr.add("legacy: approval without URL elicitation", legacyCall(t, c, main, sid, "alpha__echo", `{"text":"x"}`))
	tr.add("legacy: pin block", legacyCall(t, c, main, sid, "alpha__late", `{"path":"a"}`))
	tr.add("legacy: confirmation declined", legacyAsked(t, c, main, sid, "alpha__add", `{"a":1,"b":2}`,
		`{"action":"accept","content":{"approve":false}}`))
	tr.add("legacy: tool rate limit, first", legacyCall(t, c, main, sid, "alpha__progress", `{"steps":0}`))
	tr.add("legacy: tool rate limit", legacyCall(t, c, main, sid, "alpha__progress", `{"steps":0}`))
	cs, ssid := s.legacySession(t, main+"/narrow", "l-set", use, capsForm)
	tr.add("legacy: set boundary", legacyCall(t, cs, main+"/narrow", ssid, "alpha__echo", `{"text":"x"}`))
	cu, usid := s.legacySession(t, main, "l-page", use, capsURL)
	tr.add("legacy: approval declined in the client", legacyAsked(t, cu, main, usid, "alpha__echo", `{"text":"x"}`, `{"action":"decline"}`))

	cl, lsid := s.legacySession(t, limits, "l-caller", use, capsForm)
	var last wire
	for i := 0; i < 10 && last.Status != http.StatusTooManyRequests; i++ {
		last = legacyCall(t, cl, limits, lsid, "alpha__late", `{"path":"a"}`)
	}
	tr.add("legacy: caller rate limit", last)
	cb, bsid := s.legacySession(t, limits, "l-busy", use, capsForm)
	held := make(chan wire, 1)
	s.alpha.Reset()
	go func() { held <- legacyCall(t, cb, limits, bsid, "alpha__slow", `{"ms":3000}`) }()
	waitInFlight(t, s.alpha, "slow")
	tr.add("legacy: caller concurrency", legacyCall(t, cb, limits, bsid, "alpha__late", `{"path":"a"}`))
	<-held
	cp, psid := s.legacySession(t, main, "l-pending", use, capsURL)
	st := cp.Open(t, main, psid, cp.CallArgs("alpha__echo", `{"text":"1"}`))
	st.NextRequest(t, "elicitation/create")
	tr.add("legacy: approvals pending", legacyCall(t, cp, main, psid, "alpha__echo", `{"text":"2"}`))
}

// TestDraftErrorsOff: with server.draftErrors empty (the default) every denial and limit path
// answers byte for byte as before the switch existed, in both eras.
func TestDraftErrorsOff(t *testing.T) {
	parallelUnlessUpdating(t)
	s := startDenialSite(t, nil)
	var tr transcript
	s.modernPaths(t, &tr)
	s.legacyPaths(t, &tr)
	mcptest.Golden(t, filepath.Join("testdata", "denials", "off.golden"), []byte(tr.b.String()), *updateDenials, "-update-denials")
}

// TestDraftErrorsOn: with server.draftErrors: [denials, rateLimited] the same paths answer in
// the drafts' shapes (on.golden), in both eras: each denial the envelope SEP-2643 gives its case,
// each limit SEP-3304's error with a Retry-After that agrees with it; what the drafts leave alone
// (the step-up challenge, hidden names, the tool set's boundary) is what it was.
func TestDraftErrorsOn(t *testing.T) {
	parallelUnlessUpdating(t)
	s := startDenialSite(t, []string{mcphttp.DraftDenials, mcphttp.DraftRateLimited})
	var tr transcript
	s.modernPaths(t, &tr)
	s.legacyPaths(t, &tr)
	mcptest.Golden(t, filepath.Join("testdata", "denials", "on.golden"), []byte(tr.b.String()), *updateDenials, "-update-denials")
	for _, w := range tr.wires {
		t.Run(w.name, func(t *testing.T) { checkDraftShape(t, w.name, w.wire) })
	}
	off := goldenSections(t, "off.golden")
	on := goldenSections(t, "on.golden")
	for name, want := range draftShapes {
		if want.unchanged && on[name] != off[name] {
			t.Errorf("%s changed with the drafts on:\n%s\nwas:\n%s", name, on[name], off[name])
		}
	}
	if len(on) != len(draftShapes) || len(off) != len(draftShapes) {
		t.Errorf("%d paths recorded on, %d off, %d expected", len(on), len(off), len(draftShapes))
	}
}

// shape is what a path answers with the drafts on.
type shape struct {
	unchanged   bool   // as with the drafts off
	remediation string // the envelope's remediation; "" for none
	hint        string // its one hint's type; "" for none
	isError     bool   // a failed tool call
	limited     bool   // SEP-3304's error
}

// draftShapes are the paths' shapes with the drafts on, by name.
var draftShapes = map[string]shape{
	"policy deny":                              {unchanged: true},
	"set boundary":                             {unchanged: true},
	"step-up":                                  {unchanged: true},
	"approval needed":                          {remediation: "available", hint: "url"},
	"approval retried undecided":               {remediation: "available", hint: "url"},
	"approval declined in the client":          {remediation: "unavailable", isError: true},
	"approval without URL elicitation":         {remediation: "undisclosed", isError: true},
	"confirmation needed":                      {remediation: "available"},
	"confirmation declined":                    {remediation: "unavailable", isError: true},
	"confirmation without elicitation":         {remediation: "undisclosed", isError: true},
	"pin block":                                {remediation: "unavailable", isError: true},
	"tool rate limit, first":                   {unchanged: true},
	"tool rate limit":                          {limited: true},
	"caller rate limit":                        {limited: true},
	"caller concurrency":                       {limited: true},
	"approvals pending":                        {limited: true},
	"approval expired":                         {remediation: "available", hint: "url"},
	"legacy: policy deny":                      {unchanged: true},
	"legacy: step-up":                          {unchanged: true},
	"legacy: approval without URL elicitation": {remediation: "undisclosed", isError: true},
	"legacy: pin block":                        {remediation: "unavailable", isError: true},
	"legacy: confirmation declined":            {remediation: "unavailable", isError: true},
	"legacy: tool rate limit, first":           {unchanged: true},
	"legacy: tool rate limit":                  {limited: true},
	"legacy: set boundary":                     {unchanged: true},
	"legacy: approval declined in the client":  {remediation: "unavailable", isError: true},
	"legacy: caller rate limit":                {limited: true},
	"legacy: caller concurrency":               {limited: true},
	"legacy: approvals pending":                {limited: true},
}

// answer is what checkDraftShape reads of a response's last message.
type answer struct {
	Result *struct {
		ResultType string                     `json:"resultType"`
		IsError    bool                       `json:"isError"`
		Meta       map[string]json.RawMessage `json:"_meta"`
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
		Data *struct {
			RetryAfterMs *int64 `json:"retryAfterMs"`
		} `json:"data"`
	} `json:"error"`
}

// envelope is SEP-2643's _meta["io.modelcontextprotocol/authorization"].
type envelope struct {
	Reason                 string            `json:"reason"`
	Remediation            string            `json:"remediation"`
	AuthorizationContextID string            `json:"authorizationContextId"`
	RemediationHints       []json.RawMessage `json:"remediationHints"`
}

func envelopeOf(t *testing.T, a answer) *envelope {
	t.Helper()
	if a.Result == nil || a.Result.Meta["io.modelcontextprotocol/authorization"] == nil {
		return nil
	}
	var e envelope
	if err := json.Unmarshal(a.Result.Meta["io.modelcontextprotocol/authorization"], &e); err != nil {
		t.Fatalf("envelope: %v", err)
	}
	return &e
}

// checkDraftShape checks one answer against the drafts' rules and the shape its path expects.
func checkDraftShape(t *testing.T, name string, w wire) {
	want, ok := draftShapes[name]
	if !ok {
		t.Fatalf("no expected shape for %q", name)
	}
	var a answer
	if err := json.Unmarshal([]byte(w.Msg), &a); err != nil {
		t.Fatalf("%v: %s", err, w.Msg)
	}
	env := envelopeOf(t, a)
	switch {
	case want.limited:
		// SEP-3304 RL-1 to RL-3: -32023, data.retryAfterMs, 429, Retry-After agreeing with it.
		if w.Status != http.StatusTooManyRequests || a.Error == nil || a.Error.Code != -32023 || a.Error.Data == nil ||
			a.Error.Data.RetryAfterMs == nil || *a.Error.Data.RetryAfterMs < 0 {
			t.Fatalf("want 429 with -32023 and data.retryAfterMs: %d %s", w.Status, w.Msg)
		}
		ms := *a.Error.Data.RetryAfterMs
		if got, want := w.Header.Get("Retry-After"), fmt.Sprint(max((ms+999)/1000, 1)); got != want {
			t.Errorf("Retry-After %q, want %s for retryAfterMs %d", got, want, ms)
		}
	case want.remediation != "":
		if env == nil {
			t.Fatalf("no envelope: %s", w.Msg)
		}
		// SEP-2643: the reason, the remediation, a handle, hints only with available.
		if env.Reason != "insufficient_authorization" || env.Remediation != want.remediation || env.AuthorizationContextID == "" {
			t.Errorf("envelope %+v, want remediation %s and a handle", env, want.remediation)
		}
		hints := ""
		for _, h := range env.RemediationHints {
			var hint struct{ Type string }
			_ = json.Unmarshal(h, &hint)
			hints += hint.Type
		}
		if hints != want.hint {
			t.Errorf("hints %q, want %q", hints, want.hint)
		}
		if a.Result.IsError != want.isError || (want.isError == (a.Result.ResultType == "input_required")) {
			t.Errorf("isError %v resultType %q, want a failed call %v", a.Result.IsError, a.Result.ResultType, want.isError)
		}
	default:
		if env != nil || (a.Error != nil && a.Error.Code == -32023) {
			t.Errorf("want the answer of the drafts off: %s", w.Msg)
		}
	}
}

// goldenSections reads a transcript into its paths' sections.
func goldenSections(t *testing.T, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "denials", name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, sec := range strings.Split(string(b), "== ")[1:] {
		title, body, _ := strings.Cut(sec, "\n")
		out[title] = body
	}
	return out
}
