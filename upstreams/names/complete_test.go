package names

import (
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// TestCompletionResult: the values of a resource template's completion are judged on the URI
// each expands to, its member names read as a client reads them; what cannot be judged is
// dropped, and total counts what is relayed.
func TestCompletionResult(t *testing.T) {
	rw := Rewriter{Space: New("__", false, []string{"fs"}), Upstream: "fs", Visible: hideSecret}
	for _, tt := range []struct {
		name, template, params, result, want string
	}{
		{"hidden value dropped", "file:///{+path}", `{"ref":{"type":"ref/resource"},"argument":{"name":"path"}}`,
			`{"completion":{"values":["a","secret/k"],"total":2,"hasMore":false}}`,
			`{"completion":{"values":["a"],"total":1,"hasMore":false}}`},
		{"escaped member names", "file:///{+path}", `{"ref":{"type":"ref/resource"},"argument":{"name":"path"}}`,
			`{"\u0063ompletion":{"\u0076alues":["secret/k","b"],"t\u006ftal":9}}`,
			`{"\u0063ompletion":{"\u0076alues":["b"],"t\u006ftal":1}}`},
		{"a value that is not a string", "file:///{+path}", `{"ref":{"type":"ref/resource"},"argument":{"name":"path"}}`,
			`{"completion":{"values":["a",1,{"x":"y"}]}}`, `{"completion":{"values":["a"]}}`},
		{"context fills the other variable", "file:///{dir}/{name}",
			`{"ref":{"type":"ref/resource"},"argument":{"name":"name"},"context":{"arguments":{"dir":"secret"}}}`,
			`{"completion":{"values":["k"]}}`, `{"completion":{"values":[]}}`},
		{"an argument that is no variable of the template", "file:///{dir}/{name}",
			`{"ref":{"type":"ref/resource"},"argument":{"name":"DIR"},"context":{"arguments":{"dir":"pub","name":"x"}}}`,
			`{"completion":{"values":["secret","pub"]}}`, `{"completion":{"values":[]}}`},
		{"a template that does not parse", "file:///{", `{"ref":{"type":"ref/resource"},"argument":{"name":"x"}}`,
			`{"completion":{"values":["a"]}}`, `{"completion":{"values":[]}}`},
		{"names matched exactly, as the backend reads them", "file:///{dir}/{name}",
			`{"ref":{"type":"ref/resource"},"ARGUMENT":{"name":"dir"},"argument":{"name":"name"},"context":{"arguments":{"dir":"secret","DIR":"pub"}}}`,
			`{"completion":{"values":["k"]}}`, `{"completion":{"values":[]}}`},
		{"a ref the route refuses is judged, never passed", "file:///{+path}", `{"ref":{"Type":"ref/prompt"},"argument":{"name":"path"}}`,
			`{"completion":{"values":["a","secret/k"]}}`, `{"completion":{"values":["a"]}}`},
		{"a prompt's completion is untouched", "", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"n"}}`,
			`{"completion":{"values":["secret/k"],"total":5}}`, `{"completion":{"values":["secret/k"],"total":5}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rw.Completion = ParseCompletion([]byte(tt.params), tt.template)
			m, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":`+tt.result+`}`), jsonrpc.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := rw.Result(wire.MethodComplete, m)
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}
