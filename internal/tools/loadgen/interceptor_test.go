package loadgen

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/mcp-gateway/gateway/internal/intercept"
)

// TestInterceptorAllows: the gateway's own interceptor client asks the bench interceptor about
// a call and its result and is answered, in both phases, with a decision that allows them: no
// failure (which fail-closed would turn into a refusal the bench would count as errors), no
// refusal, no mutation.
func TestInterceptorAllows(t *testing.T) {
	h, err := NewInterceptor()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfgs := []intercept.Config{{Name: "allow", URL: srv.URL + "/interceptors", Type: intercept.TypeValidation,
		Rules: []intercept.RuleConfig{{Tools: []string{"*"}}}}}
	if err := intercept.Validate(cfgs); err != nil {
		t.Fatal(err)
	}
	set, err := intercept.New(cfgs, intercept.Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	payload, err := intercept.RequestPayload("tools/call", []byte(`{"name":"fast__echo","arguments":{"text":"hi"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for phase, body := range map[intercept.Phase][]byte{
		intercept.PhaseRequest:  payload,
		intercept.PhaseResponse: []byte(`{"content":[{"type":"text","text":"hi"}]}`),
	} {
		p := set.Plan(phase, "tools/call", "fast", "echo")
		if p == nil {
			t.Fatalf("%v: no interceptor planned", phase)
		}
		v := set.Run(context.Background(), p, &intercept.Call{Method: "tools/call", Payload: body, RequestID: "r1",
			Upstream: "fast", Name: "fast__echo"})
		if v.Blocked || v.Failed || v.Mutated {
			t.Fatalf("%v: verdict %+v", phase, v)
		}
	}
}
