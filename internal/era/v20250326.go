package era

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// What a 2025-03-26 client is sent. That revision's schema (schema/2025-03-26/schema.ts of the
// specification) knows fewer members than the later ones, and SDK clients built for it parse
// results against it: the TypeScript SDK 1.12 refuses a whole tools/call result whose content
// has a block of a type it does not know (resource_link came with 2025-06-18). So the items of a
// result are cut down to the members 2025-03-26 defines (an allowlist, so members added by later
// revisions never slip through), and what has no place there is turned into something that has:
//   - a tool's title becomes annotations.title (2025-03-26 tools have only that title); its
//     outputSchema, icons, execution and _meta go;
//   - structuredContent goes, a text block carrying its JSON (2025-06-18 servers SHOULD send
//     one anyway);
//   - a resource_link block becomes a text block naming the resource and its URI, and a block
//     of a type 2025-03-26 does not have becomes a text block saying so;
//   - annotations keep audience and priority (lastModified came with 2025-06-18);
//   - title, icons and _meta go from prompts, prompt arguments, resources, templates, content
//     and resource contents (2025-03-26 has _meta on results and request params only).
// The result's own members (nextCursor, _meta, isError, ...) stay: a 2025-03-26 Result allows
// any.

// Members of the 2025-03-26 items, and what each value becomes (nil: kept as it is).
var (
	annotations0326     = fieldSet{"audience": nil, "priority": nil}
	toolAnnotations0326 = fieldSet{"title": nil, "readOnlyHint": nil, "destructiveHint": nil, "idempotentHint": nil, "openWorldHint": nil}
	promptArgument0326  = fieldSet{"name": nil, "description": nil, "required": nil}
	prompt0326          = fieldSet{"name": nil, "description": nil, "arguments": eachOf(promptArgument0326.filter)}
	resource0326        = fieldSet{"uri": nil, "name": nil, "description": nil, "mimeType": nil, "size": nil,
		"annotations": annotations0326.filter}
	template0326 = fieldSet{"uriTemplate": nil, "name": nil, "description": nil, "mimeType": nil,
		"annotations": annotations0326.filter}
	contents0326      = fieldSet{"uri": nil, "mimeType": nil, "text": nil, "blob": nil}
	textBlock0326     = fieldSet{"type": nil, "text": nil, "annotations": annotations0326.filter}
	dataBlock0326     = fieldSet{"type": nil, "data": nil, "mimeType": nil, "annotations": annotations0326.filter}
	resourceBlock0326 = fieldSet{"type": nil, "resource": contents0326.filter, "annotations": annotations0326.filter}
	promptMessage0326 = fieldSet{"role": nil, "content": contentBlock0326}
	tool0326          = fieldSet{"name": nil, "description": nil, "inputSchema": nil, "annotations": toolAnnotations0326.filter}
)

// result0326 are the members of the 2025-03-26 results of each method that hold items, and what
// each becomes.
var result0326 = map[string]fieldSet{
	methodToolsList:         {"tools": eachOf(tool20250326)},
	methodPromptsList:       {"prompts": eachOf(prompt0326.filter)},
	methodResourcesList:     {"resources": eachOf(resource0326.filter)},
	methodResourceTemplates: {"resourceTemplates": eachOf(template0326.filter)},
	methodResourcesRead:     {"contents": eachOf(contents0326.filter)},
	"prompts/get":           {"messages": eachOf(promptMessage0326.filter)},
	"tools/call":            {"content": eachOf(contentBlock0326)},
}

// shape20250326 returns the value of the member key of a result of method as a 2025-03-26
// client gets it.
func shape20250326(method string, key, val []byte) ([]byte, error) {
	fn := result0326[method][string(key)]
	if fn == nil {
		return val, nil
	}
	return fn(val)
}

// fieldSet is the members an object keeps, and what each value becomes (nil: kept).
type fieldSet map[string]func([]byte) ([]byte, error)

// filter returns obj with only the members of f, each as f makes it; a value that is not an
// object is returned as it is (it was not the client's to have, nor ours to invent).
func (f fieldSet) filter(obj []byte) ([]byte, error) {
	if !isObject(obj) {
		return obj, nil
	}
	var inner error
	out, err := FilterObject(make([]byte, 0, len(obj)), obj, func(k, v []byte) ([]byte, bool) {
		fn, ok := f[string(k)]
		switch {
		case !ok:
			return nil, false
		case fn == nil:
			return v, true
		}
		nv, err := fn(v)
		if err != nil && inner == nil {
			inner = err
		}
		return nv, true
	})
	if err == nil {
		err = inner
	}
	return out, err
}

// eachOf applies fn to each element of an array; a value that is not an array is kept.
func eachOf(fn func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(arr []byte) ([]byte, error) {
		if len(arr) == 0 || arr[0] != '[' {
			return arr, nil
		}
		return mapArray(arr, fn)
	}
}

// tool20250326 is a tool as 2025-03-26 defines it: its title, when its annotations have none,
// becomes annotations.title.
func tool20250326(tool []byte) ([]byte, error) {
	if !isObject(tool) {
		return tool, nil
	}
	var title, annotations []byte
	_ = jsonrpc.Members(tool, func(k, v []byte) error {
		switch string(k) {
		case "title":
			if isString(v) {
				title = v
			}
		case "annotations":
			annotations = v
		}
		return nil
	})
	out, err := tool0326.filter(tool)
	if err != nil || title == nil || (annotations != nil && (!isObject(annotations) || hasMember(annotations, "title"))) {
		return out, err
	}
	if annotations == nil {
		return InsertMembers(out, append([]byte(`"annotations":{"title":`), append(title, '}')...)), nil
	}
	// Rewrite the annotations member with the title added.
	return FilterObject(make([]byte, 0, len(out)+len(title)+10), out, func(k, v []byte) ([]byte, bool) {
		if string(k) != "annotations" {
			return v, true
		}
		return InsertMembers(v, append([]byte(`"title":`), title...)), true
	})
}

// contentBlock0326 is a content block as 2025-03-26 defines it: text, image, audio or an
// embedded resource; a resource_link becomes a text block naming the resource, and any other
// type a text block saying what could not be sent.
func contentBlock0326(block []byte) ([]byte, error) {
	if !isObject(block) {
		return block, nil
	}
	var typ string
	_ = jsonrpc.Members(block, func(k, v []byte) error {
		if string(k) == "type" && isString(v) {
			_ = json.Unmarshal(v, &typ)
		}
		return nil
	})
	switch typ {
	case "text":
		return textBlock0326.filter(block)
	case "image", "audio":
		return dataBlock0326.filter(block)
	case "resource":
		return resourceBlock0326.filter(block)
	case "resource_link":
		return resourceLinkText(block)
	}
	text := fmt.Sprintf("[content of type %q, which MCP 2025-03-26 cannot carry, was left out]", typ)
	return append(jsonrpc.AppendString([]byte(`{"type":"text","text":`), text), '}'), nil
}

// resourceLinkText turns a resource_link block into a text block that names the resource and
// its URI (which the client may read with resources/read), and keeps its annotations.
func resourceLinkText(block []byte) ([]byte, error) {
	var l struct {
		URI         string          `json:"uri"`
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		MimeType    string          `json:"mimeType"`
		Annotations json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal(block, &l); err != nil {
		return nil, fmt.Errorf("resource_link: %w", err)
	}
	var b strings.Builder
	b.WriteString("Resource")
	if name := firstNonEmpty(l.Title, l.Name); name != "" {
		b.WriteString(" " + name)
	}
	b.WriteString(": " + l.URI)
	if l.MimeType != "" {
		b.WriteString(" (" + l.MimeType + ")")
	}
	if l.Description != "" {
		b.WriteString("\n" + l.Description)
	}
	out := jsonrpc.AppendString([]byte(`{"type":"text","text":`), b.String())
	if isObject(l.Annotations) {
		a, err := annotations0326.filter(l.Annotations)
		if err != nil {
			return nil, err
		}
		out = append(append(out, `,"annotations":`...), a...)
	}
	return append(out, '}'), nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// implementation0326 is serverInfo as 2025-03-26 defines it: name and version (title, icons,
// description and websiteUrl came later).
var implementation0326 = fieldSet{"name": nil, "version": nil}
