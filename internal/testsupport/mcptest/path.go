package mcptest

// Path walks JSON decoded into any by object keys (string) and array indexes (int); it returns
// nil where the value has no such member or element.
func Path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
