package pre2026

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/guardrails"
)

// The annotation of an input_required result goes into every request's _meta, replacing a
// backend's member of that name, and leaves the rest of the params as they were.
func TestWithAnnotation(t *testing.T) {
	const a = `{"rule":"r","findings":[{"guardrail":"injection","detector":"instructions","action":"flag","path":"/inputRequests/k/params/message"}]}`
	result := []byte(`{"resultType":"input_required","inputRequests":{},"_meta":{"x":1,"` + guardrails.MetaKey + `":` + a + `}}`)
	reqs := []era.InputRequest{
		{Params: []byte(`{"message":"m"}`)},
		{Params: []byte(`{}`)},
		{Params: []byte(`{"_meta":{"` + guardrails.MetaKey + `":{"rule":"forged"},"y":2},"message":"m"}`)},
	}
	withAnnotation(result, reqs)
	for i, r := range reqs {
		var p struct {
			Meta    map[string]json.RawMessage `json:"_meta"`
			Message string                     `json:"message"`
		}
		if err := json.Unmarshal(r.Params, &p); err != nil {
			t.Fatalf("%d: %v: %s", i, err, r.Params)
		}
		if string(p.Meta[guardrails.MetaKey]) != a || (i != 1 && p.Message != "m") || (i == 2 && string(p.Meta["y"]) != "2") {
			t.Errorf("%d: %s", i, r.Params)
		}
	}
	// A _meta that is not an object gives way to the annotation: the params keep one _meta.
	null := []era.InputRequest{{Params: []byte(`{"_meta":null,"message":"m"}`)}}
	withAnnotation(result, null)
	if want := `{"_meta":{"` + guardrails.MetaKey + `":` + a + `},"message":"m"}`; string(null[0].Params) != want {
		t.Errorf("a null _meta: %s, want %s", null[0].Params, want)
	}
	plain := []era.InputRequest{{Params: []byte(`{"message":"m"}`)}}
	withAnnotation([]byte(`{"resultType":"input_required","_meta":{"x":1}}`), plain)
	if string(plain[0].Params) != `{"message":"m"}` {
		t.Errorf("a result without annotation changed the request: %s", plain[0].Params)
	}
}

// Without an annotation of the gateway's, a backend's own member of its name (in any spelling a
// client's decoder folds to it) is removed all the same, the rest of the _meta kept, and a _meta
// left empty dropped; a request without one is left as it is.
func TestWithAnnotationRemovesTheBackends(t *testing.T) {
	plain := []byte(`{"resultType":"input_required","_meta":{"x":1}}`)
	for _, tt := range []struct{ params, want string }{
		{`{"_meta":{"` + guardrails.MetaKey + `":{"findings":[]},"y":2},"message":"m"}`, `{"_meta":{"y":2},"message":"m"}`},
		{`{"message":"m","_meta":{"IO.MCP-GATEWAY/GUARDRAILS":{}}}`, `{"message":"m"}`},
		{`{"_meta":{"io.mcp_gateway/guardrails":{},"io.mcp-gateway/Guardrails":1,"y":2}}`, `{"_meta":{"y":2}}`},
		{`{"_meta":{"y":2},"message":"m"}`, `{"_meta":{"y":2},"message":"m"}`},
		{`{"message":"m"}`, `{"message":"m"}`},
	} {
		reqs := []era.InputRequest{{Params: []byte(tt.params)}}
		withAnnotation(plain, reqs)
		if string(reqs[0].Params) != tt.want {
			t.Errorf("%s: %s, want %s", tt.params, reqs[0].Params, tt.want)
		}
		if got := withoutOwnAnnotation([]byte(tt.params)); string(got) != tt.want {
			t.Errorf("relayed %s: %s, want %s", tt.params, got, tt.want)
		}
	}
}
