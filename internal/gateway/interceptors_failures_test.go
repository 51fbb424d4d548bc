package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorFailures: a slow interceptor times out: fail-closed refuses the call with a
// retryable error and the backend receives nothing, fail-open lets it through; a webhook
// answering garbage fails closed; an Interceptor Server that crashes opens its circuit (calls
// then fail fast without reaching it) and closes it again once it is back; a call past an
// interceptor's concurrency bound waits for a slot and is not sent while the slot is held, and
// one past its client's share (without authentication, per client address) is refused at once.
// The metrics name each interceptor, its results and the reasons.
func TestInterceptorFailures(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	slow := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "slow", Type: intercept.TypeValidation,
		Handle: intercepttest.Slow(time.Minute, intercepttest.Allow())}})
	garbage := intercepttest.StartWebhook(t, []intercepttest.Interceptor{{Name: "garbage", Type: intercept.TypeValidation, Handle: intercepttest.Allow()}})
	garbage.SetGarbage(true)
	crashy := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "crashy", Type: intercept.TypeValidation, Handle: intercepttest.Allow()}})
	entered, release := make(chan struct{}, 2), make(chan struct{})
	narrow := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "narrow", Type: intercept.TypeValidation,
		Handle: func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
			entered <- struct{}{}
			<-release
			return intercepttest.Validation(inv, true, ""), nil
		}}})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the server closes, which waits for its handlers
	gw := startTestGateway(t, func(c *Config) {
		closed := interceptorEntry("slow", slow.URL(), intercept.TypeValidation, []string{"echo"}, "request")
		closed.Timeout = 300 * time.Millisecond
		open := interceptorEntry("slow-open", slow.URL(), intercept.TypeValidation, []string{"add"}, "request")
		open.Interceptor, open.Timeout, open.FailOpen = "slow", 300*time.Millisecond, true
		hook := interceptorEntry("garbage", garbage.URL(), intercept.TypeValidation, []string{"whoami"}, "request")
		hook.Webhook = true
		crash := interceptorEntry("crashy", crashy.URL(), intercept.TypeValidation, []string{"progress"}, "request")
		crash.Breaker.Failures, crash.Breaker.Cooldown = 2, 300*time.Millisecond
		bound := interceptorEntry("narrow", narrow.URL(), intercept.TypeValidation, []string{"fail"}, "request")
		bound.MaxConcurrent, bound.Timeout = 1, time.Minute
		c.Interceptors = []InterceptorConfig{closed, open, hook, crash, bound}
	}, alpha)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era)
			alpha.Reset()
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "hi"}})
			if !couldNotDecide(err) || len(alpha.RequestsOf("tools/call")) != 0 {
				t.Fatalf("fail-closed timeout: %v; forwarded %d", err, len(alpha.RequestsOf("tools/call")))
			}
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 1}}); err != nil || mcptest.ResultText(res) != "2" {
				t.Fatalf("fail-open timeout: %v %+v", err, res)
			}
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__whoami"}); !couldNotDecide(err) {
				t.Fatalf("garbage webhook: %v", err)
			}
		})
	}
	cs := connectEra(t, gw, "2026-07-28")
	progress := func() error {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__progress", Arguments: map[string]any{"steps": 1}})
		return err
	}
	crashy.SetCrashed(true)
	for range 3 {
		if err := progress(); err == nil {
			t.Fatal("a call governed by a crashed interceptor went through")
		}
	}
	scrape := scrapeAdmin(t, gw)
	if !scrape.Has(`mcp_gateway_interceptor_errors_total{interceptor="crashy",reason="circuit_open"}`) ||
		!scrape.Has(`mcp_gateway_interceptor_circuit_state{interceptor="crashy"} 2`) {
		t.Fatalf("the crashed interceptor's circuit is not open:\n%s", scrape.Text())
	}
	crashy.SetCrashed(false)
	mcptest.WaitFor(t, "the recovered interceptor's circuit to let a call through", func() bool { return progress() == nil })

	// maxConcurrent 1 (and so a share of 1 for each client): while one invocation holds the
	// slot, another call of the same client is refused at once (caller_limit), and another
	// client's call waits for the slot and is not sent; when its caller gives up, it is counted
	// and nothing more happens.
	held := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__fail"})
		held <- err
	}()
	<-entered
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__fail"}); !couldNotDecide(err) || len(narrow.Invocations()) != 1 {
		t.Fatalf("past the client's share: %v; %d invocations while the slot was held", err, len(narrow.Invocations()))
	}
	other := connectEra(t, gw, "2026-07-28", mcptest.WithRoundTripper(from("127.0.0.2").Transport))
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	_, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__fail"})
	cancel()
	if err == nil || len(narrow.Invocations()) != 1 {
		t.Fatalf("past the concurrency bound: %v; %d invocations while the slot was held", err, len(narrow.Invocations()))
	}
	unblock()
	if err := <-held; err != nil {
		t.Fatalf("the call holding the slot: %v", err)
	}
	mcptest.WaitFor(t, "the given-up invocation counted", func() bool {
		return scrapeAdmin(t, gw).Has(`mcp_gateway_interceptor_errors_total{interceptor="narrow",reason="canceled"} 1`)
	})
	scrape = scrapeAdmin(t, gw)
	for _, want := range []string{
		`mcp_gateway_interceptor_circuit_state{interceptor="crashy"} 0`,
		`mcp_gateway_interceptor_errors_total{interceptor="slow",reason="timeout"} 2`,
		`mcp_gateway_interceptor_errors_total{interceptor="slow-open",reason="timeout"} 2`,
		`mcp_gateway_interceptor_errors_total{interceptor="garbage",reason="malformed"} 2`,
		`mcp_gateway_interceptor_calls_total{interceptor="crashy",phase="request",result="allowed"} 1`,
		`mcp_gateway_interceptor_calls_total{interceptor="narrow",phase="request",result="allowed"} 1`,
		`mcp_gateway_interceptor_errors_total{interceptor="narrow",reason="caller_limit"} 1`,
	} {
		if !scrape.Has(want) {
			t.Errorf("the scrape lacks %s\n%s", want, scrape.Text())
		}
	}
}

// couldNotDecide reports whether err is the gateway's answer to a call whose interceptor could
// not decide (fail-closed): 503 with -32014, which a 2026-07-28 go-sdk client reports by its
// HTTP status only, and the pre-2026 edge as the JSON-RPC error on its stream.
func couldNotDecide(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "could not decide") || strings.Contains(err.Error(), "Service Unavailable"))
}

// adminScrape is the text of one /metrics scrape.
type adminScrape string

func (s adminScrape) Has(series string) bool { return strings.Contains(string(s), series) }
func (s adminScrape) Text() string           { return string(s) }

// scrapeAdmin reads the gateway's /metrics.
func scrapeAdmin(t *testing.T, gw Listeners) adminScrape {
	t.Helper()
	res, err := http.Get("http://" + gw.Admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	return adminScrape(body)
}
