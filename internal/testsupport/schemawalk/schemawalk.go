// Package schemawalk visits the nodes of a JSON schema, for tests that read the generated
// configuration schema: each node is named by its path, a property as ".name", a list's
// items as "[]" and a mapping's values as ".*".
package schemawalk

// Walk calls visit on n, named path, and then on every node below it reached through
// properties, items and additionalProperties.
func Walk(n map[string]any, path string, visit func(n map[string]any, path string)) {
	visit(n, path)
	if props, ok := n["properties"].(map[string]any); ok {
		for k, v := range props {
			Walk(v.(map[string]any), path+"."+k, visit)
		}
	}
	if items, ok := n["items"].(map[string]any); ok {
		Walk(items, path+"[]", visit)
	}
	if ap, ok := n["additionalProperties"].(map[string]any); ok {
		Walk(ap, path+".*", visit)
	}
}
