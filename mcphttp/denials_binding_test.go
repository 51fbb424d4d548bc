package mcphttp

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/mrtr"
)

// bindingCase is one request a denial handle may be minted for.
type bindingCase struct{ iss, sub, method, name, uri string }

func (c bindingCase) request() *request {
	x := &request{}
	if c.iss != "" || c.sub != "" {
		x.caller.principal = &authz.Principal{Issuer: c.iss, Subject: c.sub}
	}
	x.in.req = &jsonrpc.Request{Method: c.method}
	x.in.params = &jsonrpc.Params{Name: c.name, URI: c.uri, Arguments: json.RawMessage(`{"a":1}`)}
	return x
}

// TestContextBindingFamily: a denial handle is bound to one caller and one call, whatever the
// fields hold: a subject or name holding NUL (which the previous spelling also used to end a
// field, so "a" NUL "tools/call" as a subject read like subject "a" and method "tools/call"), a
// field starting with 0x01 (the other form's mark), "#" (the caller key's separator), empty and
// very long fields, and one subject at two issuers. A binding of ordinary fields is the one the
// previous release wrote, so the handles it minted are still recognised during a rolling update.
func TestContextBindingFamily(t *testing.T) {
	const iss = "https://idp.example"
	long := strings.Repeat("s", 16<<10)
	cases := []bindingCase{
		{iss, "alice", "tools/call", "alpha__echo", ""},
		{"https://other.example", "alice", "tools/call", "alpha__echo", ""},
		{iss, "alice\x00tools/call", "alpha__echo", "", ""},
		{iss, "alice\x00tools/call\x00alpha__echo", "", "", ""},
		{iss, "alice", "tools/call\x00alpha__echo", "", ""},
		{iss, "alice", "tools/call", "alpha__echo\x00", ""},
		{iss, "alice", "tools/call", "alpha__echo", "\x00"},
		{iss, "alice", "tools/call", "a\x00b", ""},
		{iss, "alice", "tools/call", "a", "b"},
		{iss, "alice", "tools/call", "", "a\x00b"},
		{iss, "alice", "tools/call", "\x01", ""},
		{iss, "alice", "tools/call", "\x01\x00", ""},
		{iss, "alice#x", "tools/call", "alpha__echo", ""},
		{iss, "#", "tools/call", "alpha__echo", ""},
		{iss, "\x00", "tools/call", "alpha__echo", ""},
		{iss, "", "tools/call", "alpha__echo", ""},
		{iss, long, "tools/call", "alpha__echo", ""},
		{iss, long + "\x00", "tools/call", "alpha__echo", ""},
		{"", "", "tools/call", "alpha__echo", ""},
		{"", "", "resources/read", "", "mem://x"},
	}
	seen := map[[16]byte]bindingCase{}
	for _, c := range cases {
		b := contextBinding(c.request())
		if other, dup := seen[b]; dup {
			t.Errorf("%q and %q have one binding: a handle of one is taken for the other's", c, other)
		}
		seen[b] = c
	}
	// The previous release's binding, spelled out: for ordinary fields it is unchanged.
	c := cases[0]
	h := sha256.New()
	h.Write([]byte(c.iss + "\x00" + c.sub + "\x00" + c.method + "\x00" + c.name + "\x00" + c.uri + "\x00"))
	args, err := mrtr.Digest(json.RawMessage(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	h.Write(args[:])
	var want [16]byte
	copy(want[:], h.Sum(nil))
	if contextBinding(c.request()) != want {
		t.Error("the binding of ordinary fields changed: handles a replica of the previous release minted go unrecognised")
	}
}
