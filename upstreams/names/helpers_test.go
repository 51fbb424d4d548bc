package names

// testMeta is a valid 2026-07-28 request _meta.
const testMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
