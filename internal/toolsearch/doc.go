// Package toolsearch ranks a catalog of MCP tools against a task phrased in words, for the
// gateway's find_tools meta-tool (docs/toolsets.md).
//
// Ranking is a pure function of the catalog, the query and the set of tools the caller may see:
// no session, no model, no network. An index is built once per catalog version (the gateway keeps
// it per replica and rebuilds it when a backend's list changes), never per request or per caller:
// a caller's view is applied as a filter on the ranked hits, so a tool the caller may not see is
// never returned, not even as a near miss. Scores are never shown to callers, so the statistics a
// hidden tool adds to the index cannot be read back.
//
// The ranker is behind the Ranker interface so that an embedding ranker can be added later; the
// one here is BM25F over a tool's name split into words (snake_case, camelCase, kebab-case and the
// gateway's namespace separator), its title, its description and its parameters' names and
// descriptions, with light stemming and a small table of verb and noun synonyms applied to the
// query. Ties are broken by name, so every replica answers the same query the same way.
package toolsearch
