package gateway

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// listPage lists tools through gw from cursor ("" for the first page).
func listPage(t *testing.T, gw Listeners, cursor string) (names []string, next string, code int) {
	t.Helper()
	params := testMeta
	if cursor != "" {
		params += `,"cursor":"` + cursor + `"`
	}
	_, _, body := post(t, "http://"+gw.MCP+"/mcp", modernHeaders("tools/list", ""),
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+params+`}}`)
	var res struct {
		Result struct {
			Tools      []struct{ Name string }
			NextCursor string
		}
		Error *struct{ Code int }
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("tools/list: %s: %v", body, err)
	}
	if res.Error != nil {
		return nil, "", res.Error.Code
	}
	for _, tl := range res.Result.Tools {
		names = append(names, tl.Name)
	}
	return names, res.Result.NextCursor, 0
}

// TestPageSizeSetting: pageSize is a validated setting; pages have that many items; and a cursor
// from a replica with another page size continues exactly where its page ended (cursors carry
// an item offset), with tampered cursors refused on every replica.
func TestPageSizeSetting(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		ok   bool
	}{
		{"pageSize: 2\n", true}, {"pageSize: 1000\n", true}, {"pageSize: 1001\n", false}, {"pageSize: -1\n", false},
		// Read here too: the other top-level list setting this file's keys sit beside.
		{"relayCapabilities: {extensions: [com.example/audit], experimental: [x]}\n", true},
		{"relayCapabilities: {extensions: [io.modelcontextprotocol/tasks]}\n", false},
	} {
		file := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadConfig("check-config", []string{"--config", file, "--no-auth", "--listen", "127.0.0.1:0",
			"--upstream", "a=http://127.0.0.1:1/mcp"}, func(string) string { return "" }, io.Discard)
		if (err == nil) != tt.ok {
			t.Errorf("%q: err = %v, want ok=%v", tt.yaml, err, tt.ok)
		}
		if key, _, _ := strings.Cut(tt.yaml, ":"); err != nil && !strings.Contains(err.Error(), key) {
			t.Errorf("%q: error %q does not name %s", tt.yaml, err, key)
		}
	}

	alpha := mcptest.StartServer(t, "alpha")
	withPageSize := func(n int) func(*Config) {
		return func(c *Config) { c.PageSize, c.MRTR.Keys = n, testKeys }
	}
	all := startTestGateway(t, withPageSize(0), alpha)
	two := startTestGateway(t, withPageSize(2), alpha)
	three := startTestGateway(t, withPageSize(3), alpha)
	want, next, _ := listPage(t, all, "")
	if next != "" || len(want) < 5 {
		t.Fatalf("default page size: %d tools, next %q; want the whole list (at least 5) in one page", len(want), next)
	}
	var got []string
	cursor := ""
	for i, gw := range []Listeners{two, three, two, three, two, three, two, three} {
		names, nc, code := listPage(t, gw, cursor)
		if code != 0 {
			t.Fatalf("page %d: error %d", i, code)
		}
		if size := []int{2, 3}[i%2]; len(names) > size || (nc != "" && len(names) != size) {
			t.Fatalf("page %d: %d items, want %d", i, len(names), size)
		}
		got = append(got, names...)
		if cursor = nc; cursor == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages across page sizes gave %v, want %v (no gap, no repeat)", got, want)
	}
	_, c1, _ := listPage(t, two, "")
	for _, gw := range []Listeners{two, three} {
		if _, _, code := listPage(t, gw, tamper(c1)); code != -32602 {
			t.Errorf("tampered cursor: code %d, want -32602", code)
		}
	}
}
