package gateway

import (
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestPinURISpelledOtherwise: a resource template or UI resource that its backend lists in a
// spelling other than the normal form the gateway shows and forwards (an upper-case host, a
// percent-encoded unreserved character) is pinned and judged under one key, its normal form, in
// both modes. Before, the lock file keyed it by the listed spelling and the request path by the
// normal form, so an unchanged, pinned template was held as new (and its pin reported removed),
// every read under it refused; in tofu mode the record first contact wrote did not open (its
// key named another URI than its text), so every template of the backend was unverified, on
// every replica, for good. Go SDK backend, raw modern client, real Redis.
func TestPinURISpelledOtherwise(t *testing.T) {
	backend := func(t *testing.T) *mcptest.Server {
		return mcptest.StartServer(t, "files", mcptest.WithoutDefaults(),
			mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://Items/%7e{id}", Name: "items", MIMEType: "text/plain"}, readText),
			mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://notes/{id}", Name: "notes", MIMEType: "text/plain"}, readText))
	}
	check := func(t *testing.T, p pinned) {
		t.Helper()
		want := []string{"files+mem://items/~{id}", "files+mem://notes/{id}"}
		if got := templateNames(t, p.gw); !slices.Equal(got, want) {
			t.Errorf("templates listed: %v, want %v\n%s", got, want, p.log.String())
		}
		if status, r := readResource(t, p.gw, "files+mem://notes/1"); status != http.StatusOK || r.Error != nil || len(r.Result.Contents) != 1 {
			t.Errorf("read under the template spelled in normal form: %d %+v %+v", status, r, r.Error)
		}
		// The Go SDK's matcher does not find the normal form under the template as listed,
		// so the backend answers "not found"; what matters here is that pinning let it by.
		status, r := readResource(t, p.gw, "files+mem://items/~1")
		if status == http.StatusForbidden || status == http.StatusServiceUnavailable || (r.Error != nil && r.Error.Data.Reason != "") {
			t.Errorf("read under the template spelled otherwise: refused by pinning: %d %+v", status, r.Error)
		}
	}
	t.Run("lockfile", func(t *testing.T) {
		files := backend(t)
		check(t, startPinned(t, &pins.Config{LockFile: pinLock(t, files)}, nil, files))
	})
	t.Run("tofu", func(t *testing.T) {
		redis := testredis.Start(t)
		files := backend(t)
		check(t, tofuReplica(t, redis, nil, files))
		check(t, tofuReplica(t, redis, nil, files))
	})
}

// TestPinsApproveItemSpellings: 'pins approve --item' names a resource template or UI resource
// in any spelling of its URI and means the item pinned under its normal form; tools and
// prompts are taken by their exact name.
func TestPinsApproveItemSpellings(t *testing.T) {
	got, err := parseItems([]string{"resourceTemplate/MEM://Items/%7e{id}", "uiResource/ui://Widget/view", "tool/Read_File"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []itemRef{
		{pins.KindResourceTemplate, "mem://items/~{id}"},
		{pins.KindUIResource, "ui://widget/view"},
		{pins.KindTool, "Read_File"},
	} {
		if !got[want] {
			t.Errorf("%v not among %v", want, got)
		}
	}
}
