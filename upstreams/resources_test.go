package upstreams

import (
	"errors"
	"strings"
	"testing"
)

func TestResolveNormalizesResources(t *testing.T) {
	r := nsRegistry(t, "", false, "fs")
	solo := nsRegistry(t, "", true, "solo")
	for _, tt := range []struct {
		reg        *Registry
		namespaced string
		want       string // the backend-side name, or "" for ErrBadURI
	}{
		{r, "fs+file:///public/../secret/key", "file:///secret/key"},
		{r, "fs+FILE://LOCALHOST/a/%7e/./b", "file:///a/~/b"},
		{r, "fs+file:///a/{x}", "file:///a/{x}"},
		{r, "fs+FILE:///a/{x}", "file:///a/{x}"},
		{r, "fs+file:///a/..%2Fb", ""},
		{r, "fs+file:///a/../{x}", ""},
		{r, "fs+file:///a\\b", ""},
		{solo, "file:///public/%2e%2e/secret", "file:///secret"},
		{solo, "file:///a%2fb", ""},
	} {
		got, err := tt.reg.Resolve(KindResource, tt.namespaced)
		switch {
		case tt.want == "" && !errors.Is(err, ErrBadURI):
			t.Errorf("Resolve(%q) = %+v, %v; want ErrBadURI", tt.namespaced, got, err)
		case tt.want != "" && (err != nil || got.Name != tt.want):
			t.Errorf("Resolve(%q) = %+v, %v; want name %q", tt.namespaced, got, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Resolve(%q): the error quotes the URI: %v", tt.namespaced, err)
		}
	}
}

// hideSecret is a caller's policy: everything under file:///secret/ is hidden, and a deny rule
// covers it (embedded resources are dropped too).
func hideSecret(_ Kind, t Target) bool { return !strings.HasPrefix(t.Name, "file:///secret/") }
