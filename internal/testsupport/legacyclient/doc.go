// Package legacyclient drives real pre-2026 MCP clients through one scenario for the gateway's
// tests, so the gateway's legacy edge is proven with the libraries its users run rather than
// with hand-written requests:
//
//   - the TypeScript SDK v1 (@modelcontextprotocol/sdk 1.32.2, pinned with its whole tree by
//     node/package-lock.json and installed by .ci/setup into the cache), which speaks 2025-11-25
//     only, run by node/client.mjs under the cached Node 22 ([RunTS]);
//   - the go-sdk v1.8.0 client pinned to 2025-11-25 or 2025-06-18 ([RunGo]);
//   - for 2025-03-26, the TypeScript SDK 1.12.3 ([RunTS0326]) and mcp-remote 0.1.13 driven over
//     stdio as a desktop host drives it ([RunMCPRemote]), pinned by node0326/package-lock.json
//     and checked by [Check0326] (v20250326.go).
//
// Both run the same steps (connect, every list, a tool call, a prompt, a resource read, a call
// with progress, a backend elicitation answered by the client, a confirmation approved and one
// declined) and report each as a [Step]; [Check] asserts them the same way for both clients,
// against the default tools of internal/testsupport/mcptest and the deploy tool of [DeployTool] or
// [ConfirmingDeployTool].
//
// A missing Node or SDK fails the test rather than skipping it: a skipped client test would
// hide the legacy edge.
package legacyclient
