package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/text/unicode/norm"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The resource-URI table (issue 15 §2): what the policy checks must be what the backend reads.
// The backend below is written the way real Go file servers are: it decodes the request with
// encoding/json, parses the URI with net/url and serves path.Clean of its path from a map,
// reading each segment as the most lenient backends do (lenientPath). The policy denies file:///secret/* and allows file:///public/**; no variant of a URI may make it
// read a secret, and whatever it is sent must be the normal form the policy saw. It looks names
// up by canonical equivalence, as the file systems of macOS do.

const fsSecret = "TOP-SECRET-7f3a"

var fsFiles = map[string]string{
	"/public/a.txt":     "public text",
	"/public/B.txt":     "upper text",
	"/public/é.txt":     "accented text",
	"/public/b~c":       "tilde text",
	"/secret/key":       fsSecret,
	"/public/dir":       "",
	"/public/link":      "",
	"/public/alias":     "",
	"/public/hidden":    "",
	"/public/privé/key": fsSecret,
}

// fsRead is one resources/read the backend received.
type fsRead struct {
	uri     string // params.uri as decoded
	mcpName string // the Mcp-Name header, decoded
	clean   string // lenientPath of the parsed path: what it served
}

type fsBackend struct {
	// caseless: names are also compared without regard to case, as the file systems of macOS
	// and Windows do by default.
	caseless bool
	srv      *httptest.Server
	mu       sync.Mutex
	reads    []fsRead
	refs     []string // completion/complete ref.uri as received
}

func (b *fsBackend) snapshot() []fsRead {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]fsRead(nil), b.reads...)
}

func startFSBackend(t *testing.T) *fsBackend {
	t.Helper()
	b := &fsBackend{}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *fsBackend) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			URI  string `json:"uri"`
			Name string `json:"name"`
			Ref  struct {
				URI string `json:"uri"`
			} `json:"ref"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	reply := func(result any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
	notFound := func(uri string) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"error": map[string]any{"code": -32602, "message": "Resource not found", "data": map[string]any{"uri": uri}}})
	}
	text := func(uri, s string) map[string]any {
		return map[string]any{"uri": uri, "mimeType": "text/plain", "text": s}
	}
	list := func(key string, items ...map[string]any) {
		reply(map[string]any{key: items, "ttlMs": 0, "cacheScope": "public", "resultType": "complete"})
	}
	switch req.Method {
	case "server/discover":
		reply(map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{
			"resources": map[string]any{}, "tools": map[string]any{}, "prompts": map[string]any{}},
			"serverInfo": map[string]any{"name": "fs", "version": "1"}, "ttlMs": 0, "cacheScope": "public", "resultType": "complete"})
	case "resources/list":
		list("resources",
			map[string]any{"uri": "file:///public/a.txt", "name": "a"},
			map[string]any{"uri": "FILE:///public/B.txt", "name": "b"},
			map[string]any{"uri": "file:///public/../secret/key", "name": "traversal"},
			map[string]any{"uri": "file:///public/x%2Fy", "name": "encoded slash"},
			map[string]any{"uri": "file:///secret/key", "name": "secret"})
	case "resources/templates/list":
		list("resourceTemplates",
			map[string]any{"uriTemplate": "file:///public/{name}", "name": "public"},
			map[string]any{"uriTemplate": "file:///secret/{name}", "name": "secret"},
			map[string]any{"uriTemplate": "file:///public/../secret/{name}", "name": "traversal"})
	case "tools/list":
		list("tools", map[string]any{"name": "cat", "inputSchema": map[string]any{"type": "object"}})
	case "prompts/list":
		list("prompts", map[string]any{"name": "p"})
	case "tools/call":
		reply(map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "ok"},
			map[string]any{"type": "resource", "resource": text("file:///secret/key", fsSecret)},
			map[string]any{"type": "resource_link", "uri": "file:///public/a.txt", "name": "a"},
			map[string]any{"type": "resource_link", "uri": "file:///public/%2e%2e/secret/key", "name": "k"},
			map[string]any{"type": "resource", "resource": text("file:///public/..%2Fsecret/key", fsSecret)},
		}, "resultType": "complete"})
	case "completion/complete":
		b.mu.Lock()
		b.refs = append(b.refs, req.Params.Ref.URI)
		b.mu.Unlock()
		reply(map[string]any{"completion": map[string]any{"values": []string{"a.txt"}}, "resultType": "complete"})
	case "prompts/get":
		reply(map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "resource", "resource": text("file:///secret/key", fsSecret)}},
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hello"}},
		}, "resultType": "complete"})
	case "resources/read":
		name, _ := mcpheader.Decode(r.Header.Get("Mcp-Name"))
		u, err := url.Parse(req.Params.URI)
		if err != nil {
			notFound(req.Params.URI)
			return
		}
		p := u.Path
		if p == "" {
			p = u.Opaque
		}
		p = lenientPath(p)
		b.mu.Lock()
		b.reads = append(b.reads, fsRead{uri: req.Params.URI, mcpName: name, clean: p})
		b.mu.Unlock()
		switch p {
		case "/public/link": // a link out of the public tree
			reply(map[string]any{"contents": []any{text("file:///secret/key", fsSecret)}})
		case "/public/alias": // the same, named with a traversal
			reply(map[string]any{"contents": []any{text("file:///public/../secret/key", fsSecret)}})
		case "/public/dir": // a directory read: one public, one secret entry
			reply(map[string]any{"contents": []any{text("file:///public/a.txt", "public text"), text("file:///secret/key", fsSecret)}})
		case "/public/hidden": // not found, naming a secret URI
			notFound("file:///secret/key")
		default:
			// Names are compared by canonical equivalence, as APFS and HFS+ do.
			if s, ok := fsFiles[norm.NFC.String(p)]; ok && s != "" {
				reply(map[string]any{"contents": []any{text("file://"+p, s)}})
				return
			}
			for name, s := range fsFiles {
				if b.caseless && s != "" && strings.EqualFold(name, norm.NFC.String(p)) {
					reply(map[string]any{"contents": []any{text("file://"+p, s)}})
					return
				}
			}
			notFound(req.Params.URI)
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"error": map[string]any{"code": -32601, "message": "Method not found"}})
	}
}

// lenientPath is path.Clean of a decoded path whose segments are first read as lenient backends
// read them: cut at a path parameter (';', as Java servlet containers do, here after decoding)
// or an NTFS stream name (':'), or at a decoded '?' or '#' (a backend that parses again), and
// with trailing dots and spaces dropped (Windows). A name of dots and spaces is read as ".."
// when it holds two dots or more, else as ".".
func lenientPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if j := strings.IndexAny(s, ";:?#"); j >= 0 {
			s = s[:j]
		}
		switch t := strings.TrimRight(s, ". "); {
		case t != "":
			segs[i] = t
		case strings.Count(s, ".") >= 2:
			segs[i] = ".."
		case strings.Contains(s, "."):
			segs[i] = "."
		default:
			segs[i] = s
		}
	}
	return path.Clean(strings.Join(segs, "/"))
}

type resFixture struct {
	gw  Listeners
	fs  *fsBackend
	tok string
	// set is the tool set whose endpoint requests go to ("" for the MCP path itself).
	set string
}

func startResourceGateway(t *testing.T) *resFixture {
	t.Helper()
	iss := newIssuer(t)
	f := &resFixture{fs: startFSBackend(t)}
	f.gw = startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.HealthInterval = time.Hour
		c.Admin.Explain.Enabled = true // on the loopback admin listener: no secret needed
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "fs", URL: f.fs.srv.URL + "/mcp",
			Protocol: "2026-07-28", Timeout: 5 * time.Second}})
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-secret", Upstream: "fs", Resources: []string{"file:///secret/*"}, Effect: authz.EffectDeny},
			{ID: "no-private", Upstream: "fs", Resources: []string{"file:///public/privé/*"}, Effect: authz.EffectDeny},
			{ID: "public", Upstream: "fs", Resources: []string{"file:///public/**"}, Tools: []string{"cat"}, Prompts: []string{"p"}},
		}
	})
	f.tok = mint(t, iss, devissuer.Claims{"sub": "mallory"})
	return f
}

// rpc sends one request with Mcp-Name set to name (encoded as a client must) and returns the
// status and body.
func (f *resFixture) rpc(t *testing.T, method, name string, params map[string]any) (int, string) {
	t.Helper()
	params["_meta"] = json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	h := modernHeaders(method, "")
	if name != "" {
		h.Set("Mcp-Name", mcpheader.Encode(name))
	}
	h.Set("Authorization", "Bearer "+f.tok)
	url := "http://" + f.gw.MCP + "/mcp"
	if f.set != "" {
		url += "/" + f.set
	}
	status, _, out := post(t, url, h, string(body))
	return status, out
}

func (f *resFixture) read(t *testing.T, uri string) (int, string) {
	return f.rpc(t, "resources/read", uri, map[string]any{"uri": uri})
}

// rpcReply is the part of a JSON-RPC response the checks look at.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeReply(t *testing.T, body string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("response is not JSON-RPC: %v: %s", err, body)
	}
	return r
}

func TestResourceURIVariants(t *testing.T) {
	f := startResourceGateway(t)
	// hidden is the gateway's answer for a resource the caller may not read.
	hiddenStatus, hidden := f.read(t, "fs+file:///secret/key")
	if hiddenStatus != http.StatusBadRequest || !strings.Contains(hidden, "-32602") || strings.Contains(hidden, fsSecret) {
		t.Fatalf("reading the secret: %d %s", hiddenStatus, hidden)
	}
	const (
		refused = "refused" // 400/-32602, never forwarded
		denied  = "denied"  // normalises into the denied tree: the hidden answer, never forwarded
	)
	for _, tt := range []struct {
		uri  string // as the client sends it
		want string // refused, denied, or the normal form the backend must receive
	}{
		{"fs+file:///public/a.txt", "file:///public/a.txt"},
		{"fs+file:///public/../secret/key", denied},
		{"fs+file:///public/%2e%2e/secret/key", denied},
		{"fs+file:///public/%2E./secret/key", denied},
		{"fs+file:///public/.%2e/secret/key", denied},
		{"fs+file:///public/./../secret/key", denied},
		{"fs+file:////secret/key", denied},
		{"fs+file:///public//../secret/key", denied},
		{"fs+file:/secret/key", denied},
		{"fs+file://localhost/secret/key", denied},
		{"fs+file://LocalHost/secret/key", denied},
		{"fs+FILE:///secret/key", denied},
		{"fs+file:///secret/key?x=1", denied},
		{"fs+file:///secret/key?x=/a", denied},
		{"fs+file:///secret/key#frag", denied},
		{"fs+file:///secret/sub/key", denied},
		{"fs+file:///public/..%2fsecret/key", refused},
		{"fs+file:///public/..%2Fsecret%2Fkey", refused},
		{"fs+file:///public%2f..%2fsecret%2fkey", refused},
		{"fs+file:///public/..\\secret\\key", refused},
		{"fs+file:///public\\..\\secret\\key", refused},
		{"fs+file:///public/..%5csecret%5ckey", refused},
		{"fs+file:///public/%252e%252e/secret/key", refused},
		{"fs+file:///public/..;/secret/key", refused},
		{"fs+file:///public/.../secret/key", refused},
		// The rest of the dot-segment family (internal/resuri): dots before a parameter,
		// stream or query delimiter, raw or encoded, or followed by blanks, which the
		// backend's lenient reading takes for "..".
		{"fs+file:///public/..;x/secret/key", refused},
		{"fs+file:///public/..%3Bx/secret/key", refused},
		{"fs+file:///public/..%3b/secret/key", refused},
		{"fs+file:///public/%2e%2e%3Bx/secret/key", refused},
		{"fs+file:///public/.%2E;jsessionid=1/secret/key", refused},
		{"fs+file:///public/..::$DATA/secret/key", refused},
		{"fs+file:///public/..%3A$DATA/secret/key", refused},
		{"fs+file:///public/..%3F/secret/key", refused},
		{"fs+file:///public/..%23x/secret/key", refused},
		{"fs+file:///public/..%20/secret/key", refused},
		{"fs+file:///public/%2E%2E%20%20/secret/key", refused},
		{"fs+file:///public/...%20/secret/key", refused},
		{"fs+file:///public/..+/secret/key", refused},
		{"fs+file:///public/%20../secret/key", refused},
		{"fs+file:///public/..%253B/secret/key", refused},
		{"fs+file:///public/..%09/secret/key", refused},
		{"fs+file:///public/..\t/secret/key", refused},
		{"fs+file:///public/.. /secret/key", refused},
		{"fs+file:///public/%C0%AE%C0%AE%3B/secret/key", refused},
		{"fs+file:///public/\uff0e\uff0e%3B/secret/key", refused},
		{"fs+file:///public/a.txt?p=..%3B/secret/key", refused},
		{"fs+file:///public/a.txt#..%20/secret/key", refused},
		{"fs+file:///../secret/key", refused},
		{"fs+file:///public/../../secret/key", refused},
		{"fs+file:///public/a.txt%00", refused},
		{"fs+file:///public/a.txt\x00", refused},
		{"fs+file:///public/a.txt\n", refused},
		{"fs+file:///public/a .txt", refused},
		{"fs+file:///public/a.txt%C0%AE", refused},
		{"fs+file:///public/\uff0e\uff0e/secret/key", refused},
		{"fs+file:///public\uff0f..\uff0fsecret\uff0fkey", refused},
		{"fs+file:///public/.\u200b./secret/key", refused},
		{"fs+file:///public/a.txt?p=../../secret/key", refused},
		{"fs+file:///public/a.txt#/../../secret/key", refused},
		{"fs+file:secret/key", refused},
		{"fs+file:///public/a%zz", refused},
		{"fs+file:///public//a.txt", "file:///public/a.txt"},
		{"fs+file:///public/./a.txt", "file:///public/a.txt"},
		{"fs+file:///public/x/../a.txt", "file:///public/a.txt"},
		{"fs+FILE:///public/a.txt", "file:///public/a.txt"},
		{"fs+file://LOCALHOST/public/a.txt", "file:///public/a.txt"},
		{"fs+file:/public/a.txt", "file:///public/a.txt"},
		{"fs+file:///public/%61.txt", "file:///public/a.txt"},
		{"fs+file:///public/b%7ec", "file:///public/b~c"},
		{"fs+file:///public/%C3%A9.txt", "file:///public/é.txt"},
		{"fs+file:///public/é.txt", "file:///public/é.txt"},
		{"fs+file:///public/a.txt?v=2", "file:///public/a.txt?v=2"},
		// One character, two spellings (composed U+00E9, or "e" and the combining U+0301): a
		// file system comparing names by canonical equivalence reads one file, so the policy
		// and the backend see the composed one.
		{"fs+file:///public/e\u0301.txt", "file:///public/é.txt"},
		{"fs+file:///public/e%CC%81.txt", "file:///public/é.txt"},
		{"fs+file:///public/prive\u0301/key", denied},
		{"fs+file:///public/prive%CC%81/key", denied},
		{"fs+file:///public/priv%C3%A9/key", denied},
		{"fs+file:///public/a.txt?x=%CC%B8y", refused},
		{"fs+file:///public/a.txt?x=\u0338y", refused},
	} {
		t.Run(tt.uri, func(t *testing.T) {
			before := len(f.fs.snapshot())
			status, body := f.read(t, tt.uri)
			after := f.fs.snapshot()
			if strings.Contains(body, fsSecret) {
				t.Fatalf("the secret was relayed: %d %s", status, body)
			}
			switch tt.want {
			case refused:
				// A control character cannot even be mirrored in Mcp-Name: the header check
				// (-32020) refuses it before the URI is looked at.
				r := decodeReply(t, body)
				if status != http.StatusBadRequest || r.Error == nil ||
					!(r.Error.Code == -32602 && strings.Contains(r.Error.Message, "ambiguous or malformed resource URI") ||
						r.Error.Code == -32020 && strings.ContainsAny(tt.uri, "\x00\n\t")) {
					t.Fatalf("got %d %s, want 400/-32602 ambiguous URI", status, body)
				}
			case denied:
				if status != hiddenStatus || body != namingURI(hidden, "fs+file:///secret/key", tt.uri) {
					t.Fatalf("got %d %s, want the hidden answer %d %s", status, body, hiddenStatus, hidden)
				}
			default:
				if status != http.StatusOK || len(after) != before+1 {
					t.Fatalf("got %d %s, want it forwarded", status, body)
				}
				// This backend lists none of them: each goes in its normal form's URI form,
				// non-ASCII percent-encoded (docs/protocol.md).
				want := resuri.URIForm(tt.want)
				if got := after[len(after)-1]; got.uri != want || got.mcpName != want {
					t.Fatalf("backend received uri %q, Mcp-Name %q; want the URI form %q of the normal form", got.uri, got.mcpName, want)
				}
				return
			}
			if len(after) != before {
				t.Fatalf("forwarded to the backend: %+v", after[before:])
			}
		})
	}
	// Whatever the backend was sent is the URI form of a normal form, outside the denied tree.
	for _, r := range f.fs.snapshot() {
		if n, err := resuri.Normalize(r.uri); err != nil || resuri.URIForm(n) != r.uri {
			t.Errorf("backend received %q, not the URI form of a normal form (%q, %v)", r.uri, n, err)
		}
		if strings.HasPrefix(r.clean, "/secret") || strings.HasPrefix(norm.NFC.String(r.clean), "/public/privé") {
			t.Errorf("backend read %q (sent %q)", r.clean, r.uri)
		}
	}
}

// TestResourceResultsHidden: what a backend returns under a URI the caller may not read is not
// relayed, and the URIs it returns are normal and namespaced.
func TestResourceResultsHidden(t *testing.T) {
	f := startResourceGateway(t)
	hiddenStatus, hidden := f.read(t, "fs+file:///secret/key")
	for _, uri := range []string{"fs+file:///public/link", "fs+file:///public/alias", "fs+file:///public/hidden"} {
		status, body := f.read(t, uri)
		if status != hiddenStatus || body != namingURI(hidden, "fs+file:///secret/key", uri) {
			t.Errorf("read %s: %d %s; want the hidden answer %d %s", uri, status, body, hiddenStatus, hidden)
		}
	}

	status, body := f.read(t, "fs+file:///public/dir")
	var dir struct {
		Contents []struct{ URI, Text string }
	}
	if err := json.Unmarshal(decodeReply(t, body).Result, &dir); status != http.StatusOK || err != nil ||
		len(dir.Contents) != 1 || dir.Contents[0].URI != "fs+file:///public/a.txt" || strings.Contains(body, fsSecret) {
		t.Errorf("read dir: %d %s; want only the public entry", status, body)
	}

	// SEP-2164 not found: data.uri is the client's URI.
	status, body = f.read(t, "fs+file:///public/missing")
	if r := decodeReply(t, body); status != http.StatusBadRequest && status != http.StatusOK || r.Error == nil ||
		string(r.Error.Data) != `{"uri":"fs+file:///public/missing"}` {
		t.Errorf("read missing: %d %s; want data.uri fs+file:///public/missing", status, body)
	}

	status, body = f.rpc(t, "tools/call", "fs__cat", map[string]any{"name": "fs__cat", "arguments": map[string]any{}})
	var tool struct {
		Content []struct{ Type, URI, Text string }
	}
	if err := json.Unmarshal(decodeReply(t, body).Result, &tool); status != http.StatusOK || err != nil || strings.Contains(body, fsSecret) ||
		len(tool.Content) != 2 || tool.Content[1].Type != "resource_link" || tool.Content[1].URI != "fs+file:///public/a.txt" {
		t.Errorf("tools/call: %d %s; want the text and the public link only", status, body)
	}

	status, body = f.rpc(t, "prompts/get", "fs__p", map[string]any{"name": "fs__p"})
	var prompt struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(decodeReply(t, body).Result, &prompt); status != http.StatusOK || err != nil ||
		strings.Contains(body, fsSecret) || len(prompt.Messages) != 1 {
		t.Errorf("prompts/get: %d %s; want the text message only", status, body)
	}

	for _, l := range []struct{ method, key, field, want string }{
		{"resources/list", "resources", "uri", "fs+file:///public/a.txt fs+file:///public/B.txt"},
		{"resources/templates/list", "resourceTemplates", "uriTemplate", "fs+file:///public/{name}"},
	} {
		status, body := f.rpc(t, l.method, "", map[string]any{})
		var res map[string]json.RawMessage
		var items []map[string]any
		if err := json.Unmarshal(decodeReply(t, body).Result, &res); status != http.StatusOK || err != nil ||
			json.Unmarshal(res[l.key], &items) != nil {
			t.Fatalf("%s: %d %s", l.method, status, body)
		}
		var got []string
		for _, it := range items {
			s, _ := it[l.field].(string)
			got = append(got, s)
		}
		if strings.Join(got, " ") != l.want {
			t.Errorf("%s lists %q, want %q", l.method, got, l.want)
		}
	}
	for _, r := range f.fs.snapshot() {
		if strings.HasPrefix(r.clean, "/secret") || strings.HasPrefix(norm.NFC.String(r.clean), "/public/privé") {
			t.Errorf("backend read %q (sent %q)", r.clean, r.uri)
		}
	}
}

// TestResourceURILegacy: a pre-2026 backend behind the bridge (a real go-sdk server) also
// receives only the normal form, and what it returns under a hidden URI is not relayed.
func TestResourceURILegacy(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	lfs := mcptest.StartLegacyServer(t, "lfs", mcptest.WithoutDefaults(), mcptest.WithResourceTemplate(
		&mcp.ResourceTemplate{URITemplate: "file:///public/{+path}", Name: "public"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			mu.Lock()
			seen = append(seen, req.Params.URI)
			mu.Unlock()
			u, err := url.Parse(req.Params.URI)
			if err != nil {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			p := path.Clean(u.Path)
			if p == "/public/link" { // resolves out of the public tree
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///secret/key", Text: fsSecret}}}, nil
			}
			s, ok := fsFiles[p]
			if !ok || s == "" {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file://" + p, Text: s}}}, nil
		}))
	iss := newIssuer(t)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.HealthInterval = time.Hour
		c.Admin.Explain.Enabled = true // on the loopback admin listener: no secret needed
		c.Upstreams[0].Protocol = "2025-11-25"
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-secret", Upstream: "lfs", Resources: []string{"file:///secret/*"}, Effect: authz.EffectDeny},
			{ID: "public", Upstream: "lfs", Resources: []string{"file:///public/**"}},
		}
	}, lfs)
	f := &resFixture{gw: gw, tok: mint(t, iss, devissuer.Claims{"sub": "mallory"})}
	hiddenStatus, hidden := f.read(t, "lfs+file:///secret/key")
	for _, tt := range []struct{ uri, want string }{
		{"lfs+file:///public/x/../a.txt", "file:///public/a.txt"},
		{"lfs+FILE:///public/%61.txt", "file:///public/a.txt"},
		{"lfs+file:///public/../secret/key", ""},
		{"lfs+file:///public/%2e%2e/secret/key", ""},
		{"lfs+file:///public/..%2Fsecret/key", ""},
		{"lfs+file:///public/..%3Bx/secret/key", ""},
		{"lfs+file:///public/..%20/secret/key", ""},
		{"lfs+file:///public/..::$DATA/secret/key", ""},
		{"lfs+file:///public/link", ""},
	} {
		mu.Lock()
		before := len(seen)
		mu.Unlock()
		status, body := f.read(t, tt.uri)
		mu.Lock()
		got := append([]string(nil), seen[before:]...)
		mu.Unlock()
		if strings.Contains(body, fsSecret) {
			t.Errorf("%s: the secret was relayed: %s", tt.uri, body)
		}
		switch {
		case tt.want != "" && (status != http.StatusOK || len(got) != 1 || got[0] != tt.want):
			t.Errorf("%s: %d %s; backend received %q, want exactly %q", tt.uri, status, body, got, tt.want)
		case tt.want == "" && status != http.StatusBadRequest:
			t.Errorf("%s: %d %s; want 400", tt.uri, status, body)
		case tt.uri == "lfs+file:///public/link" && (status != hiddenStatus || body != namingURI(hidden, "lfs+file:///secret/key", tt.uri)):
			t.Errorf("%s: %d %s; want the hidden answer %s naming this URI", tt.uri, status, body, hidden)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if n, err := resuri.Normalize(s); err != nil || n != s || strings.Contains(s, "secret") {
			t.Errorf("legacy backend received %q", s)
		}
	}
}

// TestResourceExplain: the admin explain endpoint decides on the normal form too, so it cannot
// say "allow" for a URI the gateway would hide or refuse.
func TestResourceExplain(t *testing.T) {
	f := startResourceGateway(t)
	for _, tt := range []struct {
		name, effect string
		status       int
	}{
		{"file:///public/../secret/key", "hidden", 200},
		{"FILE:///public/a.txt", "allow", 200},
		{"file:///public/..%2Fsecret/key", "", 400},
	} {
		body, _ := json.Marshal(map[string]any{"claims": map[string]any{"sub": "x"}, "kind": "resource", "upstream": "fs", "name": tt.name})
		status, _, out := post(t, "http://"+f.gw.Admin+"/authz/explain", http.Header{"Content-Type": {"application/json"}}, string(body))
		var ex struct {
			Decision struct {
				Effect string `json:"effect"`
			} `json:"decision"`
		}
		if status != tt.status || status == 200 && (json.Unmarshal([]byte(out), &ex) != nil || ex.Decision.Effect != tt.effect) {
			t.Errorf("explain %q: %d %s; want %d %s", tt.name, status, out, tt.status, tt.effect)
		}
	}
}

// TestResourceTemplateRefs: a completion ref to a resource template is normalised like a URI
// (its expressions kept), decided on that form, and refused when its literal text holds a dot
// segment, which an expression could expand around.
func TestResourceTemplateRefs(t *testing.T) {
	f := startResourceGateway(t)
	complete := func(uri string) (int, string) {
		return f.rpc(t, "completion/complete", "", map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": uri}, "argument": map[string]any{"name": "name", "value": "a"}})
	}
	for _, tt := range []struct {
		uri, want string // want: the ref the backend receives, or "" for a 400 never forwarded
	}{
		{"fs+FILE:///public/{name}", "file:///public/{name}"},
		{"fs+file:///public//{name}", "file:///public/{name}"},
		{"fs+file:///secret/{name}", ""},
		{"fs+file:///public/../secret/{name}", ""},
		{"fs+file:///public/%2e%2e/secret/{name}", ""},
		{"fs+file:///public/{name", ""},
	} {
		f.fs.mu.Lock()
		before := len(f.fs.refs)
		f.fs.mu.Unlock()
		status, body := complete(tt.uri)
		f.fs.mu.Lock()
		got := append([]string(nil), f.fs.refs[before:]...)
		f.fs.mu.Unlock()
		switch {
		case tt.want == "" && (status != http.StatusBadRequest || len(got) != 0):
			t.Errorf("%s: %d %s, backend received %q; want 400, nothing forwarded", tt.uri, status, body, got)
		case tt.want != "" && (status != http.StatusOK || len(got) != 1 || got[0] != tt.want):
			t.Errorf("%s: %d %s, backend received %q; want exactly %q", tt.uri, status, body, got, tt.want)
		}
	}
}

// namingURI is answer, the answer to a read of uri that names uri (an unknown or hidden
// resource), as it is for a read of other: the same bytes but for the URI each names, the one
// its caller asked for.
func namingURI(answer, uri, other string) string {
	named := func(s string) string {
		b, _ := json.Marshal(strconv.Quote(s))
		return string(b[1 : len(b)-1])
	}
	return strings.Replace(answer, named(uri), named(other), 1)
}
