package pins

import (
	"encoding/json"
	"strings"
	"testing"
)

// MCP Apps (SEP-1865): a tool's or resource template's _meta.ui and the deprecated flat
// ui/resourceUri are pinned, each change a ui-changed drift; the rest of _meta is not, and a
// definition without them keeps the fingerprint it always had.
func TestPinsWatchAppUI(t *testing.T) {
	const ui = `{"ui":{"resourceUri":"ui://weather/view.html","visibility":["app"]},"ui/resourceUri":"ui://weather/view.html","trace":"x"}`
	pinned := def(t, KindTool, withTool(t, "_meta", ui))
	for _, tt := range []struct {
		name, meta string
		want       Set
	}{
		{"same", ui, 0},
		{"other _meta members", `{"ui":{"resourceUri":"ui://weather/view.html","visibility":["app"]},"ui/resourceUri":"ui://weather/view.html","trace":"y","z":1}`, 0},
		{"another UI resource", `{"ui":{"resourceUri":"ui://weather/other.html","visibility":["app"]},"ui/resourceUri":"ui://weather/view.html"}`, classes(ClassUIChanged)},
		{"flat link changed", `{"ui":{"resourceUri":"ui://weather/view.html","visibility":["app"]},"ui/resourceUri":"ui://evil/view.html"}`, classes(ClassUIChanged)},
		{"offered to the model", `{"ui":{"resourceUri":"ui://weather/view.html","visibility":["model","app"]},"ui/resourceUri":"ui://weather/view.html"}`, classes(ClassUIChanged)},
		{"visibility dropped", `{"ui":{"resourceUri":"ui://weather/view.html"},"ui/resourceUri":"ui://weather/view.html"}`, classes(ClassUIChanged)},
		{"ui dropped", `{"trace":"x"}`, classes(ClassUIChanged)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(pinned, def(t, KindTool, withTool(t, "_meta", tt.meta))); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	// A tool that gains a UI is drift; one whose _meta holds nothing of MCP Apps is not.
	plain := def(t, KindTool, baseTool)
	if got := Classify(plain, pinned); got != classes(ClassUIChanged) {
		t.Errorf("UI added: %v", got)
	}
	if got := def(t, KindTool, withTool(t, "_meta", `{"trace":"x"}`)); got.Fingerprint != plain.Fingerprint {
		t.Error("a _meta without MCP Apps members changed the fingerprint")
	}
	// A template's CSP domains are the origins its app may reach.
	const tmpl = `{"uriTemplate":"ui://maps/{id}","name":"map","mimeType":"text/html;profile=mcp-app",` +
		`"_meta":{"ui":{"csp":{"connectDomains":["https://api.maps.example"]},"permissions":{"camera":{}},"domain":"a.example"}}}`
	tp := def(t, KindResourceTemplate, tmpl)
	for _, changed := range []string{
		`{"uriTemplate":"ui://maps/{id}","name":"map","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"csp":{"connectDomains":["https://api.maps.example","https://exfil.example"]},"permissions":{"camera":{}},"domain":"a.example"}}}`,
		`{"uriTemplate":"ui://maps/{id}","name":"map","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"csp":{"connectDomains":["https://api.maps.example"]},"permissions":{"camera":{},"microphone":{}},"domain":"a.example"}}}`,
		`{"uriTemplate":"ui://maps/{id}","name":"map","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"csp":{"connectDomains":["https://api.maps.example"]},"permissions":{"camera":{}},"domain":"b.example"}}}`,
	} {
		if got := Classify(tp, def(t, KindResourceTemplate, changed)); got != classes(ClassUIChanged) {
			t.Errorf("template %s: %v", changed, got)
		}
	}
	// The lock file's canonical text keeps the covered _meta and nothing else.
	back, err := FromCanonical(KindTool, pinned.Key, pinned.Canonical)
	if err != nil || back.Fingerprint != pinned.Fingerprint {
		t.Fatalf("FromCanonical: %v", err)
	}
	for _, bad := range []string{
		`{"_meta":{"trace":"x"},"name":"files"}`,
		`{"_meta":{},"name":"files"}`,
		`{"_meta":{"trace":"x","ui":{}},"name":"files"}`,
		`{"_meta":"ui","name":"files"}`,
	} {
		if _, err := FromCanonical(KindTool, "files", []byte(bad)); err == nil {
			t.Errorf("FromCanonical accepted %s", bad)
		}
	}
	if _, err := FromCanonical(KindPrompt, "p", []byte(`{"_meta":{"ui":{}},"name":"p"}`)); err == nil {
		t.Error("a prompt's _meta accepted")
	}
	if a, _ := DefaultAction(ClassUIChanged); a != ActionBlock {
		t.Errorf("ui-changed defaults to %s", a)
	}
}

// An MCP App's UI resource (a ui:// entry of resources/list) is pinned by its URI: its CSP
// domains, permissions and sandbox domain are what the host builds the app's sandbox from, so a
// change there is ui-changed. The lock file keeps it in its own optional section, which a lock
// of a backend without apps does not have.
func TestPinsWatchUIResource(t *testing.T) {
	const res = `{"uri":"ui://weather/view.html","name":"view","mimeType":"text/html;profile=mcp-app",` +
		`"_meta":{"ui":{"csp":{"connectDomains":["https://api.weather.example"]},"permissions":{"clipboardWrite":{}},"domain":"a.example"},"trace":"x"}}`
	pinned := def(t, KindUIResource, res)
	if pinned.Key != "ui://weather/view.html" {
		t.Fatalf("key %q", pinned.Key)
	}
	for _, tt := range []struct {
		name, js string
		want     Set
	}{
		{"same but other _meta", strings.Replace(res, `"trace":"x"`, `"trace":"y"`, 1), 0},
		{"a connect domain added", strings.Replace(res, `["https://api.weather.example"]`, `["https://api.weather.example","https://exfil.example"]`, 1), classes(ClassUIChanged)},
		{"a permission added", strings.Replace(res, `{"clipboardWrite":{}}`, `{"clipboardWrite":{},"camera":{}}`, 1), classes(ClassUIChanged)},
		{"csp dropped", strings.Replace(res, `"csp":{"connectDomains":["https://api.weather.example"]},`, ``, 1), classes(ClassUIChanged)},
		{"renamed", strings.Replace(res, `"name":"view"`, `"name":"other"`, 1), classes(ClassTextChanged)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(pinned, def(t, KindUIResource, tt.js)); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}

	l := NewLock()
	if err := l.AddItems("alpha", KindUIResource, []json.RawMessage{json.RawMessage(res)}); err != nil {
		t.Fatal(err)
	}
	back, err := ParseLock(l.Marshal())
	if err != nil || back.Backends["alpha"].Get(KindUIResource, pinned.Key).Fingerprint != pinned.Fingerprint {
		t.Fatalf("lock round trip: %v\n%s", err, l.Marshal())
	}
	l = NewLock()
	l.Backend("alpha")
	if strings.Contains(string(l.Marshal()), "uiResources") {
		t.Errorf("a lock without UI resources writes the section:\n%s", l.Marshal())
	}
}

// A read of a pinned UI resource is held to the _meta.ui it is pinned with, compared in RFC 8785
// form, with ui-changed's action; a resource pinned without one, or not pinned, is not judged.
func TestUIReadPin(t *testing.T) {
	const res = `{"uri":"ui://weather/view.html","name":"view","_meta":{"ui":{"csp":{"connectDomains":["https://a.example"]},"domain":"d.example"}}}`
	lock := NewLock()
	if err := lock.AddItems("be", KindUIResource, []json.RawMessage{json.RawMessage(res),
		json.RawMessage(`{"uri":"ui://weather/bare.html","name":"bare"}`)}); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{LockFile: "pins.yaml", Actions: map[Class]Action{ClassUIChanged: ActionLog}}
	g, err := NewGuard(GuardOptions{Config: cfg, Lock: lock, Backends: []string{"be"}})
	if err != nil {
		t.Fatal(err)
	}
	if g.UIReadPin("be", "ui://weather/bare.html") != nil || g.UIReadPin("be", "ui://weather/other.html") != nil {
		t.Error("a resource pinned without _meta.ui, or not pinned, is judged")
	}
	p := g.UIReadPin("be", "ui://weather/view.html")
	if p == nil || p.Action != ActionLog {
		t.Fatalf("UIReadPin = %+v", p)
	}
	for ui, want := range map[string]bool{
		`{"domain":"d.example","csp":{"connectDomains":["https://a.example"]}}`:                     true, // order
		`{ "csp" : {"connectDomains":["https:\/\/a.example"]}, "domain":"d.\u0065xample" }`:         true, // escapes, spaces
		`{"csp":{"connectDomains":["https://a.example","https://b.example"]},"domain":"d.example"}`: false,
		`{"csp":{"connectDomains":["https://a.example"]},"domain":"d.example","domain":"x"}`:        false, // duplicate
		`{"csp":{"connectDomains":["https://a.example"]}}`:                                          false,
		`"not an object"`: false,
	} {
		if got := p.SameUIMeta([]byte(ui)); got != want {
			t.Errorf("SameUIMeta(%s) = %v, want %v", ui, got, want)
		}
	}
}
