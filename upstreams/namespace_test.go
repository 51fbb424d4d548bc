package upstreams

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func nsRegistry(t *testing.T, sep string, noPrefix bool, names ...string) *Registry {
	t.Helper()
	cfg := Config{Namespace: NamespaceConfig{Separator: sep, NoPrefix: noPrefix}}
	for _, n := range names {
		cfg.Upstreams = append(cfg.Upstreams, UpstreamConfig{Name: n, URL: "http://127.0.0.1:1/mcp"})
	}
	return newTestRegistry(t, cfg, Options{})
}

func TestNamespaceRoundTrip(t *testing.T) {
	tests := []struct {
		name       string
		reg        *Registry
		kind       Kind
		namespaced string
		want       Target
	}{
		{"tool", nsRegistry(t, "", false, "github", "fs"), KindTool, "github__create_issue", Target{Upstream: "github", Name: "create_issue"}},
		{"tool containing the separator", nsRegistry(t, "", false, "github"), KindTool, "github__a__b", Target{Upstream: "github", Name: "a__b"}},
		{"prompt", nsRegistry(t, "", false, "github"), KindPrompt, "github__review", Target{Upstream: "github", Name: "review"}},
		{"dash separator, dashed backend", nsRegistry(t, "-", false, "my-git", "fs"), KindTool, "my-git-list-repos", Target{Upstream: "my-git", Name: "list-repos"}},
		{"dot separator", nsRegistry(t, ".", false, "fs"), KindTool, "fs.read", Target{Upstream: "fs", Name: "read"}},
		{"resource", nsRegistry(t, "", false, "fs"), KindResource, "fs+file:///a/b.txt", Target{Upstream: "fs", Name: "file:///a/b.txt"}},
		{"resource with plus", nsRegistry(t, "", false, "fs"), KindResource, "fs+git+ssh://h/r", Target{Upstream: "fs", Name: "git+ssh://h/r"}},
		{"template", nsRegistry(t, "", false, "fs"), KindResource, "fs+mem://items/{id}", Target{Upstream: "fs", Name: "mem://items/{id}"}},
		{"no prefix tool", nsRegistry(t, "", true, "solo"), KindTool, "create__issue", Target{Upstream: "solo", Name: "create__issue"}},
		{"no prefix resource", nsRegistry(t, "", true, "solo"), KindResource, "file:///a", Target{Upstream: "solo", Name: "file:///a"}},
		{"unicode tool", nsRegistry(t, "", false, "fs"), KindTool, "fs__grüße", Target{Upstream: "fs", Name: "grüße"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.reg.Resolve(tt.kind, tt.namespaced)
			if err != nil || got != tt.want {
				t.Fatalf("Resolve(%q) = %+v, %v; want %+v", tt.namespaced, got, err, tt.want)
			}
			if back := tt.reg.Namespaced(tt.kind, got); back != tt.namespaced {
				t.Fatalf("Namespaced(%+v) = %q, want %q", got, back, tt.namespaced)
			}
		})
	}
}

func TestNamespaceUnknown(t *testing.T) {
	r := nsRegistry(t, "", false, "github", "fs")
	tests := []struct {
		kind Kind
		name string
	}{
		{KindTool, "gitlab__x"},
		{KindTool, "github"},
		{KindTool, "github__"},
		{KindTool, "__x"},
		{KindTool, ""},
		{KindTool, "GITHUB__x"},
		{KindResource, "file:///etc/passwd"},
		{KindResource, "gitlab+file:///a"},
		{KindResource, "fs+"},
		{KindResource, "github__x"},
		{KindTool, strings.Repeat("x__", 200)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := r.Resolve(tt.kind, tt.name); !errors.Is(err, ErrUnknownName) {
				t.Fatalf("Resolve(%v, %q) = %+v, %v; want ErrUnknownName", tt.kind, tt.name, got, err)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	ok := UpstreamConfig{Name: "fs", URL: "https://fs.internal/mcp"}
	tests := []struct {
		name string
		cfg  Config
		want []string // fragments, all of which must appear
	}{
		{"valid", Config{Upstreams: []UpstreamConfig{ok}}, nil},
		{"empty", Config{}, []string{"at least one upstream"}},
		{"many problems at once", Config{
			Namespace: NamespaceConfig{Separator: "/", NoPrefix: true},
			Upstreams: []UpstreamConfig{
				{Name: "Bad", URL: "ftp://x"},
				{Name: "fs", URL: "http://a/mcp", Headers: map[string]string{"Mcp-Name": "x", "X-K": "a\nb"}},
				{Name: "fs", URL: "http://a/mcp", Timeout: -1},
			},
		}, []string{"namespace.noPrefix: needs exactly one", "namespace.separator: ", "upstreams[0].name: \"Bad\": want [a-z]",
			"upstreams[0].url: want an http or https", "upstreams[1].headers.Mcp-Name: ", "upstreams[1].headers.X-K: the value has a control character",
			`upstreams[2].name: "fs" is also the name of upstreams[1]`, "upstreams[2].timeout: must not be negative"}},
		{"ambiguous names", Config{Namespace: NamespaceConfig{Separator: "-"}, Upstreams: []UpstreamConfig{
			{Name: "git", URL: "http://a/mcp"}, {Name: "git-hub", URL: "http://b/mcp"}}}, []string{"ambiguous"}},
		{"digit first", Config{Upstreams: []UpstreamConfig{{Name: "1fs", URL: "http://a/mcp"}}}, []string{"upstreams[0].name: \"1fs\": want"}},
		{"page size", Config{PageSize: MaxPageSize + 1, Upstreams: []UpstreamConfig{ok}}, []string{"pageSize: 1001: want 0"}},
		// A probe of every backend every nanosecond is a storm the gateway makes itself.
		{"health interval too short", Config{HealthInterval: time.Nanosecond, Upstreams: []UpstreamConfig{ok}},
			[]string{"healthInterval: 1ns: want 0 (the default, 15s) or at least 1s"}},
		{"health interval of a second", Config{HealthInterval: time.Second, Upstreams: []UpstreamConfig{ok}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate error lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "a\nb") {
				t.Error("Validate leaks a header value")
			}
		})
	}
}

func TestNewNeedsSealer(t *testing.T) {
	_, err := New(Config{Upstreams: []UpstreamConfig{{Name: "fs", URL: "http://127.0.0.1:1/mcp"}}}, Options{})
	if !errors.Is(err, ErrNoCursorSealer) {
		t.Fatalf("New without a sealer = %v", err)
	}
}
