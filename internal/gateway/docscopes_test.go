package gateway

import (
	"slices"
	"testing"
)

// TestDocExampleScopesAreGranted: a documentation example that publishes scopes
// (auth.resourceMetadata.scopesSupported, sent in every 401 challenge and the RFC 9728
// metadata, so the scopes a client asks its issuer for first) names only scopes its own policy
// rules grant, directly or through auth.scopeHierarchy. An operator who copies an example that
// publishes another scope gets clients holding tokens no rule accepts.
func TestDocExampleScopesAreGranted(t *testing.T) {
	checked := 0
	for _, ex := range decodedDocExamples(t) {
		c := ex.c
		published := c.Auth.ResourceMetadata.ScopesSupported
		if len(published) == 0 || len(c.Auth.Policy.Rules) == 0 {
			continue
		}
		checked++
		var granted []string
		for _, r := range c.Auth.Policy.Rules {
			granted = append(granted, r.AnyScope...)
			granted = append(granted, r.AllScopes...)
		}
		for _, s := range published {
			if slices.Contains(granted, s) || grantsThrough(c.Auth.ScopeHierarchy, s, granted) {
				continue
			}
			t.Errorf("%s: publishes scope %q, which no policy rule of the example grants (rules want %v)", ex.where, s, granted)
		}
	}
	if checked < 2 {
		t.Errorf("only %d examples with published scopes and rules: the extraction lost some", checked)
	}
}

// grantsThrough reports whether scope implies, through the hierarchy, a scope in granted.
func grantsThrough(hierarchy map[string][]string, scope string, granted []string) bool {
	seen := map[string]bool{}
	todo := []string{scope}
	for len(todo) > 0 {
		s := todo[0]
		todo = todo[1:]
		if seen[s] {
			continue
		}
		seen[s] = true
		if slices.Contains(granted, s) {
			return true
		}
		todo = append(todo, hierarchy[s]...)
	}
	return false
}
