package mcptest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// itemIDs are the ids the template mem://items/{id} serves and completes.
func itemIDs() []string { return []string{"alpha", "beta", "gamma"} }

// greetNames are the completions offered for greet's name argument.
func greetNames() []string { return []string{"Ada", "Alan", "Grace"} }

func (s *Server) addDefaultFeatures() {
	s.mcp.AddResource(&mcp.Resource{
		URI: ResourceReadme, Name: "readme", Description: "A fixed text resource.", MIMEType: "text/plain",
	}, readReadme)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: TemplateItems, Name: "items", Description: "Items alpha, beta and gamma.", MIMEType: "text/plain",
	}, readItem)
	s.mcp.AddPrompt(&mcp.Prompt{
		Name:        PromptGreet,
		Description: "Greets someone by name.",
		Arguments:   []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}},
	}, greetPrompt)
}

func readReadme(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "text/plain", Text: ReadmeText},
	}}, nil
}

// readItem answers mem://items/{id}; an unknown id is the spec's
// resource-not-found, -32602 (§5.3), which go-sdk's ResourceNotFoundError
// produces.
func readItem(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, ok := strings.CutPrefix(req.Params.URI, itemsURIPrefix)
	if !ok || !slices.Contains(itemIDs(), id) {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + id},
	}}, nil
}

func greetPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Params.Arguments["name"]
	if name == "" {
		return nil, fmt.Errorf("greet: argument name is required")
	}
	return &mcp.GetPromptResult{
		Description: "A greeting",
		Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + name + "."}},
		},
	}, nil
}

// defaultCompletion completes greet's name and the items template's id by
// prefix; anything else gets no values.
func defaultCompletion(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var candidates []string
	ref, arg := req.Params.Ref, req.Params.Argument
	switch {
	case ref == nil:
	case ref.Type == "ref/prompt" && ref.Name == PromptGreet && arg.Name == "name":
		candidates = greetNames()
	case ref.Type == "ref/resource" && ref.URI == TemplateItems && arg.Name == "id":
		candidates = itemIDs()
	}
	values := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), strings.ToLower(arg.Value)) {
			values = append(values, c)
		}
	}
	sort.Strings(values)
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
