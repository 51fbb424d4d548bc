package pins

import (
	"fmt"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// The members that clients bind into typed fields, per object of a listed item below its top
// level (whose members are coveredFields and _meta): a tool's or template's annotations, an
// icon, a prompt's argument, and MCP Apps' _meta.ui.
var (
	annotationMembers = []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint",
		"audience", "priority", "lastModified"}
	iconMembers      = []string{"src", "mimeType", "sizes", "theme"}
	promptArgMembers = []string{"name", "title", "description", "required"}
	uiMembers        = []string{"resourceUri", "visibility", "csp", "permissions", "domain", "prefersBorder"}
)

// spellingVariants refuses an item holding a member whose name is another spelling of one the
// fingerprint covers ("Description" beside or instead of "description", "input_schema",
// "deſcription"; jsonrpc.FoldKey), at the top level or in an object clients bind into typed
// fields (annotations, icons, a prompt's arguments, _meta and _meta.ui). The pin covers the
// member of the exact name; a client that matches names case-insensitively (Go's
// encoding/json, .NET's web defaults) reads the other one, usually the last, so the
// definition the model is given could change while the fingerprint stays the same. Such an
// item cannot be told what it is: it is not fingerprinted, and its verdict is block. Schemas
// are not looked into: validators read their keywords case-sensitively and the classifier
// compares them whole (schematext.go).
func spellingVariants(kind Kind, obj map[string]any) error {
	top := append(CoveredFields(kind), "_meta")
	if err := variantOf("", obj, top); err != nil {
		return err
	}
	if a, ok := obj["annotations"].(map[string]any); ok {
		if err := variantOf("annotations: ", a, annotationMembers); err != nil {
			return err
		}
	}
	if m, ok := obj["_meta"].(map[string]any); ok {
		if err := variantOf("_meta: ", m, uiMetaKeys); err != nil {
			return err
		}
		if ui, ok := m["ui"].(map[string]any); ok {
			if err := variantOf("_meta.ui: ", ui, uiMembers); err != nil {
				return err
			}
		}
	}
	if err := eachObject(obj["icons"], "icons: ", iconMembers); err != nil {
		return err
	}
	if kind == KindPrompt {
		return eachObject(obj["arguments"], "arguments: ", promptArgMembers)
	}
	return nil
}

// eachObject applies variantOf to every object element of v, when v is an array.
func eachObject(v any, where string, known []string) error {
	arr, _ := v.([]any)
	for _, e := range arr {
		if o, ok := e.(map[string]any); ok {
			if err := variantOf(where, o, known); err != nil {
				return err
			}
		}
	}
	return nil
}

// variantOf reports a member of obj that is not one of known but folds to one of them.
func variantOf(where string, obj map[string]any, known []string) error {
	for k := range obj {
		fk := jsonrpc.FoldKey(k)
		for _, n := range known {
			if k != n && fk == jsonrpc.FoldKey(n) {
				return fmt.Errorf("pins: %smember %q is another spelling of %q, which clients matching names "+
					"case-insensitively read instead", where, k, n)
			}
		}
	}
	return nil
}
