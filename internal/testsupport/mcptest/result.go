package mcptest

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResultText returns the text of every text block of a tool result, joined without a separator;
// other blocks (images, resources) are skipped.
func ResultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
