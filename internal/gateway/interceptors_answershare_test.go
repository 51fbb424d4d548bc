package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorAnswersSeveralCallersCannotStarveAnother: the interceptors' answers being read
// at once are bounded per replica, and each caller's (here, without authentication, each
// client address's) within an eighth of that budget, so several callers whose answers are large
// and stop arriving, each holding every one of its slots, cannot take what another caller's
// answer is read within: seven such clients hold the budget, an eighth client's call is
// decided and forwarded. With a caller's share a quarter of the budget, four of them filled it
// and the other client's call failed closed (503 -32014).
//
// The budget is the least the configuration allows (eight shares of three largest answers),
// with answers of a quarter of a MiB: the same shares as the default 64 MiB with answers of
// 2.7 MiB, for a sixth of the bytes. The hogs' answers must start (their response headers
// arrive) within the interceptor client's 30 s bound for headers, or they fail as timeouts,
// which hold nothing and count toward the interceptor's shared circuit: 112 answers of 1 MiB,
// encoded and read under -race on a loaded 2-core machine, once took longer than that, and the
// opened circuit, not a share, refused the other client's call. The hogs' connections are
// given a minute, as their answers are, and a timeout is checked for before the other client
// calls, so a machine too slow for the test is reported as such.
func TestInterceptorAnswersSeveralCallersCannotStarveAnother(t *testing.T) {
	const (
		maxAnswer  = 256 << 10
		bigAnswer  = maxAnswer - 64<<10 // each of the hogs' answers
		stallAfter = 176 << 10          // where they stop arriving
		hogs       = 7
		perCaller  = 16
	)
	big, small := noteAnswer(bigAnswer), noteAnswer(bigAnswer)
	srv := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "guard", Type: intercept.TypeValidation,
		Handle: func(ctx context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
			if strings.Contains(string(inv.Payload), "stall") {
				return big(ctx, inv)
			}
			return small(ctx, inv)
		}}})
	settled, release := srv.Stall("stall", stallAfter)
	t.Cleanup(release) // before the server closes, which waits for its handlers
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		guard := interceptorEntry("guard", srv.URL(), intercept.TypeValidation, []string{"echo"}, "request")
		guard.MaxResponseBytes, guard.MaxConcurrent, guard.MaxConcurrentPerCaller = maxAnswer, 128, perCaller
		// The stalled answers are released by the test, not timed out; nor are the hogs' 112
		// connections, which a loaded machine accepts slowly.
		guard.Timeout, guard.ConnectTimeout = intercept.MaxTimeout, time.Minute
		c.Interceptors = []InterceptorConfig{guard}
		c.Server.MaxInterceptorAnswerBytesInFlight = 8 * 3 * maxAnswer
	}, alpha)
	call := func(c *http.Client, text string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, "http://"+gw.MCP+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__echo","arguments":{"text":"`+text+`"}}}`))
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		req.Header = modernHeaders("tools/call", "alpha__echo")
		res, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body) // a cut stream is an answer too: return what came
		return res.StatusCode, string(body)
	}
	var wg sync.WaitGroup
	for h := range hogs {
		c := from(fmt.Sprintf("127.0.0.%d", 10+h))
		c.Timeout = 0
		for range perCaller {
			wg.Go(func() { call(c, "stall") })
		}
	}
	// Every hog's answer has stopped arriving, or was refused past its share first.
	for range hogs * perCaller {
		select {
		case <-settled:
		case <-time.After(time.Minute):
			t.Fatal("the hogs' answers did not all settle")
		}
	}
	// No hog's invocation timed out waiting for its answer to start: one that did holds nothing
	// and counts toward the shared circuit, and the other client's call would tell nothing.
	if timeouts := `mcp_gateway_interceptor_errors_total{interceptor="guard",reason="timeout"}`; scrapeAdmin(t, gw).Has(timeouts) {
		t.Fatal("some hogs' answers did not start within the interceptor client's bound for response headers " +
			"(a machine too slow for this test), so not every hog holds its share")
	}
	alpha.Reset()
	status, body := call(from("127.0.0.9"), "plain")
	if status != http.StatusOK || strings.Contains(body, `"error"`) || len(alpha.RequestsOf("tools/call")) != 1 {
		t.Errorf("another client's call while %d clients hold their answers: %d %s; forwarded %d", hogs, status, body,
			len(alpha.RequestsOf("tools/call")))
		for _, l := range strings.Split(scrapeAdmin(t, gw).Text(), "\n") {
			if strings.Contains(l, "interceptor_errors_total{") || strings.Contains(l, "interceptor_calls_total{") {
				t.Log(l)
			}
		}
	}
	release()
	wg.Wait()
	scrape := scrapeAdmin(t, gw)
	if !scrape.Has(`mcp_gateway_interceptor_errors_total{interceptor="guard",reason="caller_share"}`) {
		t.Errorf("no hog was held to its share:\n%s", scrape.Text())
	}
}

// noteAnswer is a validator allowing every call with an answer of about n bytes: a member the
// gateway does not read, in strings of 64 KiB.
func noteAnswer(n int) intercepttest.Handler {
	chunk := `"` + strings.Repeat("x", 64<<10-3) + `"`
	note := strings.Repeat(chunk+",", n/len(chunk)) + `""`
	return func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		v := intercepttest.Validation(inv, true, "")
		return json.RawMessage(`{"note":[` + note + `],` + string(v[1:])), nil
	}
}

// TestInterceptorSlotsSeveralCallersCannotStarveAnother: an interceptor's slots are shared by
// callers (here, without authentication, client addresses) each within an eighth of them by
// default, so seven callers holding every slot they may, with more calls of theirs refused at
// once (caller_limit), leave another caller's call a slot: it is decided and forwarded. With a
// quarter, four of them held every slot and the other client's call waited for one until it
// gave up.
func TestInterceptorSlotsSeveralCallersCannotStarveAnother(t *testing.T) {
	const (
		slots = 16 // two per caller by default
		hogs  = 7
		tries = 3 // each hog's calls at once: one more than its share
	)
	entered, release := make(chan struct{}, hogs*tries), make(chan struct{})
	srv := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "guard", Type: intercept.TypeValidation,
		Handle: func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
			if strings.Contains(string(inv.Payload), "hold") {
				entered <- struct{}{}
				<-release
			}
			return intercepttest.Validation(inv, true, ""), nil
		}}})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the server closes, which waits for its handlers
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		guard := interceptorEntry("guard", srv.URL(), intercept.TypeValidation, []string{"echo"}, "request")
		guard.MaxConcurrent, guard.Timeout = slots, time.Minute
		c.Interceptors = []InterceptorConfig{guard}
	}, alpha)
	call := func(c *http.Client, text string) int {
		req, err := http.NewRequest(http.MethodPost, "http://"+gw.MCP+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__echo","arguments":{"text":"`+text+`"}}}`))
		if err != nil {
			t.Error(err)
			return 0
		}
		req.Header = modernHeaders("tools/call", "alpha__echo")
		res, err := c.Do(req)
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	var wg sync.WaitGroup
	for h := range hogs {
		c := from(fmt.Sprintf("127.0.0.%d", 20+h))
		c.Timeout = 0
		for range tries {
			wg.Go(func() { call(c, "hold") })
		}
	}
	// Every hog holds its slots and had its call past them refused, or (with a larger share)
	// every slot is held.
	held := 0
	mcptest.WaitFor(t, "the hogs' calls to take their slots", func() bool {
		for len(entered) > 0 {
			<-entered
			held++
		}
		return held == slots || held == hogs*(slots/8) &&
			scrapeAdmin(t, gw).Has(fmt.Sprintf(`mcp_gateway_interceptor_errors_total{interceptor="guard",reason="caller_limit"} %d`, hogs*(tries-slots/8)))
	})
	alpha.Reset()
	other := from("127.0.0.9")
	other.Timeout = 5 * time.Second
	if status := call(other, "plain"); status != http.StatusOK || len(alpha.RequestsOf("tools/call")) != 1 {
		t.Errorf("another client's call while %d clients hold their slots: status %d, forwarded %d", hogs, status,
			len(alpha.RequestsOf("tools/call")))
	}
	unblock()
	wg.Wait()
}
