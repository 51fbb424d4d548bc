package legacyclient

import (
	"encoding/json"
	"fmt"
	"strings"
)

// toolMembers0326 are the members of a tool that 2025-03-26 defines.
var toolMembers0326 = map[string]bool{"name": true, "description": true, "inputSchema": true, "annotations": true}

// step runs one step of a 2025-03-26 scenario through mcp-remote, as a desktop host would.
func (h *stdioHost) step(sc Scenario0326, hostVersion string, s *Step) error {
	switch s.Step {
	case "connect":
		return h.connect(hostVersion, s)
	case "list_tools":
		return h.listTools(s)
	case "list_prompts":
		return h.names("prompts/list", "prompts", "name", s)
	case "list_resources":
		return h.names("resources/list", "resources", "uri", s)
	case "list_resource_templates":
		return h.names("resources/templates/list", "resourceTemplates", "uriTemplate", s)
	case "call_tool":
		return h.callTool(sc.Tools.Echo, map[string]any{"text": echoArgument}, nil, s)
	case "structured":
		return h.callTool(sc.Tools.Add, map[string]any{"a": 2, "b": 3}, nil, s)
	case "confirm":
		return h.callTool(sc.Tools.Confirm, map[string]any{"text": approvedText}, nil, s)
	case "progress":
		meta := map[string]any{"progressToken": "host-progress"}
		return h.callTool(sc.Tools.Progress, map[string]any{"steps": ProgressSteps}, meta, s)
	case "get_prompt":
		return h.getPrompt(sc.Prompt, s)
	case "read_resource":
		return h.readResource(s)
	case "close":
		return h.in.Close()
	}
	return fmt.Errorf("unknown step %s", s.Step)
}

// connect sends the host's initialize (with its own protocol version, capabilities and name),
// then notifications/initialized.
func (h *stdioHost) connect(hostVersion string, s *Step) error {
	res, err := h.call("initialize", map[string]any{"protocolVersion": hostVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "desktop-host", "version": "0.9.0"}}, nil)
	if err != nil {
		return err
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	s.ProtocolVersion = r.ProtocolVersion
	// mcp-remote holds the session id; the host only sees that it works.
	s.Session = true
	return h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

func (h *stdioHost) listTools(s *Step) error {
	res, err := h.call("tools/list", map[string]any{}, nil)
	if err != nil {
		return err
	}
	var r struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	extras := map[string]bool{}
	for _, tool := range r.Tools {
		var name string
		_ = json.Unmarshal(tool["name"], &name)
		s.Names = append(s.Names, name)
		for k := range tool {
			if !toolMembers0326[k] && !extras[k] {
				extras[k] = true
				s.Extras = append(s.Extras, k)
			}
		}
	}
	return nil
}

// names lists method's items and records the member key of each.
func (h *stdioHost) names(method, items, key string, s *Step) error {
	res, err := h.call(method, map[string]any{}, nil)
	if err != nil {
		return err
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(r[items], &list); err != nil {
		return fmt.Errorf("%s: %s: %w", method, items, err)
	}
	for _, it := range list {
		var v string
		_ = json.Unmarshal(it[key], &v)
		s.Names = append(s.Names, v)
	}
	return nil
}

func (h *stdioHost) callTool(name string, args, meta map[string]any, s *Step) error {
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	res, err := h.call("tools/call", params, func(m hostMsg) {
		if m.Method != "notifications/progress" {
			return
		}
		var p struct {
			Progress float64 `json:"progress"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.Progress = append(s.Progress, p.Progress)
		}
	})
	if err != nil {
		return err
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	var text strings.Builder
	for _, c := range r.Content {
		text.WriteString(c.Text)
	}
	s.Text, s.IsError, s.Structured = text.String(), r.IsError, r.StructuredContent != nil
	return nil
}

func (h *stdioHost) getPrompt(name string, s *Step) error {
	res, err := h.call("prompts/get", map[string]any{"name": name, "arguments": map[string]string{"name": askedName}}, nil)
	if err != nil {
		return err
	}
	var r struct {
		Messages []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	for _, m := range r.Messages {
		s.Messages = append(s.Messages, m.Content.Text)
	}
	return nil
}

// readResource finds the readme in the listing, as a host does, and reads it.
func (h *stdioHost) readResource(s *Step) error {
	var list Step
	if err := h.names("resources/list", "resources", "uri", &list); err != nil {
		return err
	}
	uri := ""
	for _, n := range list.Names {
		if uri == "" && strings.Contains(n, resourceMatch) {
			uri = n
		}
	}
	if uri == "" {
		return fmt.Errorf("no listed resource URI contains %s", resourceMatch)
	}
	res, err := h.call("resources/read", map[string]any{"uri": uri}, nil)
	if err != nil {
		return err
	}
	var r struct {
		Contents []ResourceText `json:"contents"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	s.Contents = r.Contents
	return nil
}
