package era

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLegacyClientResult20250326: what a 2025-03-26 client is sent of each result is what that
// revision's schema defines, and what has no place there is carried in a form it has.
func TestLegacyClientResult20250326(t *testing.T) {
	tests := []struct{ name, method, result, want string }{
		{"tool: title into annotations; outputSchema, icons, execution, _meta out", "tools/list",
			`{"resultType":"complete","tools":[{"name":"a","title":"A tool","description":"d","inputSchema":{"type":"object"},` +
				`"outputSchema":{"type":"object"},"icons":[{"src":"https://x/i.png"}],"execution":{"taskSupport":"optional"},` +
				`"_meta":{"io.mcp-gateway/requiredScopes":["s"]},"annotations":{"readOnlyHint":true}}],"nextCursor":"c","ttlMs":5,"cacheScope":"public"}`,
			`{"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"title":"A tool"}}],"nextCursor":"c"}`},
		{"tool: annotations.title wins over title", "tools/list",
			`{"tools":[{"name":"a","title":"T","inputSchema":{},"annotations":{"title":"Own"}}]}`,
			`{"tools":[{"name":"a","inputSchema":{},"annotations":{"title":"Own"}}]}`},
		{"tool: title without annotations", "tools/list",
			`{"tools":[{"name":"a","title":"T","inputSchema":{}}]}`,
			`{"tools":[{"name":"a","inputSchema":{},"annotations":{"title":"T"}}]}`},
		{"call: structured output out, carried as text", "tools/call",
			`{"content":[],"structuredContent":{"sum":3},"isError":false}`,
			`{"content":[{"type":"text","text":"{\"sum\":3}"}],"isError":false}`},
		{"call: structured output already carried", "tools/call",
			`{"content":[{"type":"text","text":"{\"sum\": 3}"}],"structuredContent":{"sum":3}}`,
			`{"content":[{"type":"text","text":"{\"sum\": 3}"}]}`},
		{"call: every block type", "tools/call",
			`{"content":[{"type":"text","text":"t","_meta":{"k":1},"annotations":{"audience":["user"],"priority":1,"lastModified":"2025-01-01T00:00:00Z"}},` +
				`{"type":"image","data":"AA==","mimeType":"image/png","_meta":{}},{"type":"audio","data":"AA==","mimeType":"audio/wav"},` +
				`{"type":"resource","resource":{"uri":"a+mem://x","text":"x","_meta":{"k":1}}},` +
				`{"type":"resource_link","uri":"a+mem://doc","name":"doc","title":"The doc","mimeType":"text/plain","description":"Read me","icons":[],"annotations":{"priority":0.5,"lastModified":"x"}},` +
				`{"type":"tool_use","id":"1"}],"_meta":{"k":"v"}}`,
			`{"content":[{"type":"text","text":"t","annotations":{"audience":["user"],"priority":1}},` +
				`{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"audio","data":"AA==","mimeType":"audio/wav"},` +
				`{"type":"resource","resource":{"uri":"a+mem://x","text":"x"}},` +
				`{"type":"text","text":"Resource The doc: a+mem://doc (text/plain)\u000aRead me","annotations":{"priority":0.5}},` +
				`{"type":"text","text":"[content of type \"tool_use\", which MCP 2025-03-26 cannot carry, was left out]"}],"_meta":{"k":"v"}}`},
		{"prompts", "prompts/list",
			`{"prompts":[{"name":"p","title":"P","description":"d","icons":[],"_meta":{},"arguments":[{"name":"n","title":"N","required":true}]}]}`,
			`{"prompts":[{"name":"p","description":"d","arguments":[{"name":"n","required":true}]}]}`},
		{"prompt messages", "prompts/get",
			`{"description":"d","messages":[{"role":"user","content":{"type":"resource_link","uri":"u","name":"n"}}]}`,
			`{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"Resource n: u"}}]}`},
		{"resources", "resources/list",
			`{"resources":[{"uri":"u","name":"n","title":"T","mimeType":"m","size":3,"icons":[],"_meta":{},"annotations":{"lastModified":"x"}}]}`,
			`{"resources":[{"uri":"u","name":"n","mimeType":"m","size":3,"annotations":{}}]}`},
		{"templates", "resources/templates/list",
			`{"resourceTemplates":[{"uriTemplate":"u/{id}","name":"n","title":"T","size":3}]}`,
			`{"resourceTemplates":[{"uriTemplate":"u/{id}","name":"n"}]}`},
		{"read", "resources/read",
			`{"contents":[{"uri":"u","mimeType":"text/html;profile=mcp-app","text":"<p>","_meta":{"ui":{}}}]}`,
			`{"contents":[{"uri":"u","mimeType":"text/html;profile=mcp-app","text":"<p>"}]}`},
		{"case variants of the members dropped or rewritten go too", "tools/call",
			`{"content":[{"type":"text","text":"t"}],"struCturedContent":[0],"Content":[{"type":"resource_link","uri":"u"}],` +
				`"resultTypE":"x","TTLMS":1,"_META":{},"ſtructuredContent":{},"isError":false}`,
			`{"content":[{"type":"text","text":"t"}],"isError":false}`},
		{"case variants of the lists cut down go too", "prompts/list",
			`{"prompts":[{"name":"p"}],"Prompts":[{"name":"q","title":"Q","icons":[]}],"PROMPTS":[],"nextCursor":"c"}`,
			`{"prompts":[{"name":"p"}],"nextCursor":"c"}`},
		{"case variants of resources go", "resources/list",
			`{"reſources":[{"uri":"u","name":"n","title":"T"}],"resources":[]}`, `{"resources":[]}`},
		{"case variants of templates go", "resources/templates/list",
			`{"ResourceTemplates":[{"uriTemplate":"u","name":"n","title":"T"}]}`, `{}`},
		{"case variants of contents go", "resources/read",
			`{"Contents":[{"uri":"u","text":"t","_meta":{"ui":{}}}],"contents":[]}`, `{"contents":[]}`},
		{"case variants of messages go", "prompts/get",
			`{"Messages":[{"role":"user","content":{"type":"resource_link","uri":"u","name":"n"}}],"messages":[]}`,
			`{"messages":[]}`},
		{"a member another method cuts down is kept", "tools/call",
			`{"content":[],"Prompts":1}`, `{"content":[],"Prompts":1}`},
		{"completion unchanged", "completion/complete",
			`{"completion":{"values":["a"],"hasMore":false}}`, `{"completion":{"values":["a"],"hasMore":false}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToLegacyClientResult(tt.method, V20250326, []byte(tt.result), nil)
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %s", got)
			}
		})
	}
	// The later revisions keep what they have.
	got, err := ToLegacyClientResult("tools/list", V20250618, []byte(`{"tools":[{"name":"a","title":"T","inputSchema":{},"outputSchema":{"type":"object"}}]}`), nil)
	if err != nil || !strings.Contains(string(got), `"title":"T"`) || !strings.Contains(string(got), "outputSchema") {
		t.Fatalf("2025-06-18 lost title or outputSchema: %s %v", got, err)
	}
}

// TestInitializeResult20250326: serverInfo carries name and version only.
func TestInitializeResult20250326(t *testing.T) {
	disc := `{"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":` +
		`{"name":"gw","title":"Gateway","version":"1","icons":[],"websiteUrl":"https://x"}}}`
	got, err := InitializeResult(V20250326, []byte(disc), InitializeOptions{})
	want := `{"protocolVersion":"2025-03-26","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"gw","version":"1"}}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v\nwant %s", got, err, want)
	}
}
