package mcphttp

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// startIntercepted serves a gateway in front of the backend "be" with the interceptors ics.
func startIntercepted(t *testing.T, ics []intercept.Config, opts ...mcptest.Option) (*testGateway, *mcptest.Server) {
	t.Helper()
	be := mcptest.StartServer(t, "be", opts...)
	_, e := testServer(t, Config{}, oneBackend(be.URL()), upstreams.Options{}, Deps{Version: "test", Interceptors: newInterceptSet(t, ics)})
	hs := serveTest(t, e)
	return &testGateway{URL: hs.URL + DefaultPath, srv: hs}, be
}

// newInterceptSet validates and compiles ics, closed when tb ends.
func newInterceptSet(tb testing.TB, ics []intercept.Config) *intercept.Set {
	tb.Helper()
	if err := intercept.Validate(ics); err != nil {
		tb.Fatal(err)
	}
	set, err := intercept.New(ics, intercept.Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(set.Close)
	return set
}

// governs is an interceptor named name at url of type typ, for the phase given (both when
// empty), over the tools, prompts and resources named.
func governs(name, url, typ, phase string, tools, prompts, resources []string) intercept.Config {
	r := intercept.RuleConfig{Tools: tools, Prompts: prompts, Resources: resources}
	if phase != "" {
		r.Phases = []string{phase}
	}
	return intercept.Config{Name: name, URL: url, Type: typ, Rules: []intercept.RuleConfig{r}}
}

// replace is a mutator that replaces old with new in the payload.
func replace(old, new string) intercepttest.Handler {
	return intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
		if !strings.Contains(string(p), old) {
			return nil
		}
		return json.RawMessage(strings.ReplaceAll(string(p), old, new))
	})
}

// TestInterceptParamHeadersDerived: a mutation of a tool's arguments reaches the backend with
// the Mcp-Param-* headers derived from the new arguments, not the client's, which mirrored the
// old ones (and are checked against them first).
func TestInterceptParamHeadersDerived(t *testing.T) {
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "geo", Type: intercept.TypeMutation, Handle: replace(`"eu"`, `"us"`)}})
	gw, _ := startIntercepted(t, []intercept.Config{governs("geo", ics.URL(), intercept.TypeMutation, "request", []string{"region"}, nil, nil)},
		mcptest.WithRegionTool())
	if r := do(t, "POST", gw.URL, modern("tools/list", ""), body("tools/list", "")); r.Status != 200 {
		t.Fatalf("tools/list: %d %s", r.Status, r.Body)
	}
	h := with(modern("tools/call", "be__region"), "Mcp-Param-Region", "eu", "Mcp-Param-Count", "42")
	r := do(t, "POST", gw.URL, h, body("tools/call", `,"name":"be__region","arguments":{"region":"eu","count":42}`))
	checkRPC(t, r, 0)
	if !strings.Contains(string(r.Body), "region=us count=42") {
		t.Fatalf("the backend saw other headers: %s", r.Body)
	}
	// The client's headers still have to mirror what it sent.
	h = with(modern("tools/call", "be__region"), "Mcp-Param-Region", "us", "Mcp-Param-Count", "42")
	r = do(t, "POST", gw.URL, h, body("tools/call", `,"name":"be__region","arguments":{"region":"eu","count":42}`))
	checkRPC(t, r, -32020)
}

// TestInterceptRefusals: what a caller is answered when an interceptor refuses or cannot
// decide, by method and phase; a request refused in its request phase never reaches the
// backend.
func TestInterceptRefusals(t *testing.T) {
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "no", Type: intercept.TypeValidation, Handle: intercepttest.Deny("not today")}})
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	all := []string{"*"}
	for _, tc := range []struct {
		name, url, phase, method, call string
		status, code                   int
		text                           string
		forwarded                      bool
	}{
		{"tool refused", ics.URL(), "request", "tools/call", "be__echo", 200, 0, "refused by the gateway's interceptor no; it was not run", false},
		{"tool result withheld", ics.URL(), "response", "tools/call", "be__echo", 200, 0, "withheld by the gateway's interceptor no", true},
		{"prompt refused", ics.URL(), "request", "prompts/get", "be__greet", 403, -32013, "refused by the gateway's interceptor no", false},
		{"resource withheld", ics.URL(), "response", "resources/read", "be+mem://readme", 403, -32013, "withheld by the gateway's interceptor no", true},
		{"interceptor down, request", gone.URL, "request", "tools/call", "be__echo", 503, -32014, "could not decide; the call was not forwarded", false},
		{"interceptor down, response", gone.URL, "response", "tools/call", "be__echo", 503, -32014, "could not decide; the result was withheld", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw, be := startIntercepted(t, []intercept.Config{governs("no", tc.url, intercept.TypeValidation, tc.phase, all, all, all)})
			param := `,"name":"` + tc.call + `","arguments":{"text":"hi","name":"ann"}`
			if tc.method == "resources/read" {
				param = `,"uri":"` + tc.call + `"`
			}
			r := do(t, "POST", gw.URL, modern(tc.method, tc.call), body(tc.method, param))
			if r.Status != tc.status {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			checkRPC(t, r, tc.code)
			if !strings.Contains(string(r.Body), tc.text) {
				t.Fatalf("body %s lacks %q", r.Body, tc.text)
			}
			if tc.code == 0 && !strings.Contains(string(r.Body), `"isError":true`) {
				t.Fatalf("not a failed tool call: %s", r.Body)
			}
			if retry := r.Header.Get("Retry-After"); (retry != "") != (tc.code == -32014 && !tc.forwarded) {
				t.Fatalf("Retry-After %q", retry)
			}
			if got := len(be.RequestsOf(tc.method)) > 0; got != tc.forwarded {
				t.Fatalf("forwarded %v, want %v", got, tc.forwarded)
			}
			if strings.Contains(string(r.Body), "not today") {
				t.Fatalf("the interceptor's words reached the caller without showReason: %s", r.Body)
			}
		})
	}
}

// TestInterceptRenameLoop: interceptors that keep renaming a call into one another governs are
// stopped: the call is refused, never forwarded.
func TestInterceptRenameLoop(t *testing.T) {
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "to-add", Type: intercept.TypeMutation, Handle: replace(`"be__echo"`, `"be__add"`)},
		{Name: "to-echo", Type: intercept.TypeMutation, Handle: replace(`"be__add"`, `"be__echo"`)},
	})
	gw, be := startIntercepted(t, []intercept.Config{
		governs("to-add", ics.URL(), intercept.TypeMutation, "request", []string{"echo"}, nil, nil),
		governs("to-echo", ics.URL(), intercept.TypeMutation, "request", []string{"add"}, nil, nil),
	})
	r := do(t, "POST", gw.URL, modern("tools/call", "be__echo"), body("tools/call", `,"name":"be__echo","arguments":{"text":"hi"}`))
	checkRPC(t, r, 0)
	if !strings.Contains(string(r.Body), "kept changing it into other calls") || len(be.RequestsOf("tools/call")) != 0 {
		t.Fatalf("body %s; forwarded %d", r.Body, len(be.RequestsOf("tools/call")))
	}
	if n := len(ics.Invocations()); n != maxReplans {
		t.Fatalf("%d invocations, want %d", n, maxReplans)
	}
}
