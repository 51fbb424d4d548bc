package wire

// MCP method names the upstreams packages treat specially, re-exported (and documented) by
// upstreams.
const (
	MethodToolsCall         = "tools/call"
	MethodPromptsGet        = "prompts/get"
	MethodResourcesRead     = "resources/read"
	MethodComplete          = "completion/complete"
	MethodToolsList         = "tools/list"
	MethodPromptsList       = "prompts/list"
	MethodResourcesList     = "resources/list"
	MethodResourceTemplates = "resources/templates/list"
	MethodDiscover          = "server/discover"
	MethodListen            = "subscriptions/listen"
)

// Notifications a backend sends that the gateway reads.
const (
	NotifResourcesUpdated     = "notifications/resources/updated"
	NotifToolsListChanged     = "notifications/tools/list_changed"
	NotifPromptsListChanged   = "notifications/prompts/list_changed"
	NotifResourcesListChanged = "notifications/resources/list_changed"
	NotifAcknowledged         = "notifications/subscriptions/acknowledged"
)
