package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/tools/loadgen"
)

// TestGoProxyRelaysEveryOperation drives the reference proxy with the harness's whole mix
// (calls, lists, MRTR confirmations, SSE) in front of the fast backend: every operation must
// succeed, and each must have reached the backend through the proxy.
func TestGoProxyRelaysEveryOperation(t *testing.T) {
	b, err := loadgen.NewBackend(loadgen.BackendConfig{Tools: 20})
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		b.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { b.Close(); backend.Close() })
	up, err := url.Parse(backend.URL + loadgen.DefaultBackendPath)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(newGoProxy(up))
	t.Cleanup(proxy.Close)

	mix, err := loadgen.ParseMix("call:4,list:1,confirm:1,sse:1")
	if err != nil {
		t.Fatal(err)
	}
	r, err := loadgen.New(loadgen.Config{URL: proxy.URL + up.Path, Concurrency: 4, Requests: 200, Mix: mix}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Operations != 200 || rep.Total.Errors != 0 {
		t.Fatalf("operations %d, errors %v; want 200 and none", rep.Total.Operations, rep.Total.ErrorsByKind)
	}
	if got := uint64(seen.Load()); got != rep.Total.HTTPRequests {
		t.Errorf("backend saw %d requests, the harness sent %d", got, rep.Total.HTTPRequests)
	}
}

func TestProxyRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},                                    // no upstream
		{"-upstream", "http://192.0.2.1/mcp"}, // not loopback
		{"-upstream", "http://127.0.0.1:1/mcp", "-listen", "192.0.2.1:0"},
		{"-nope"},
	} {
		if err := runProxy(t.Context(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("runProxy(%q) gave no error", args)
		}
	}
}
