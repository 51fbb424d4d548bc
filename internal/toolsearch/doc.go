// Package toolsearch ranks a catalog of MCP tools against a task phrased in words, for the
// gateway's find_tools meta-tool (docs/search.md).
//
// Ranking is a pure function of the catalog, the query and the set of tools the caller may see:
// no session, no model, no network. An index is built once per catalog version (the gateway keeps
// it per replica and rebuilds it when a backend's list changes), never per request or per caller.
// A search ranks over the caller's tools only, the statistics BM25 takes over the catalog
// included, so a tool the caller may not see is never returned and its words weigh nothing.
// Tools of different backends that nearly duplicate each other share one slot, that of the tool
// listed first, so copies of a tool cannot push it out of the results.
//
// The ranker is behind the Ranker interface so that an embedding ranker can be added later; the
// one here is BM25F over a tool's name split into words (snake_case, camelCase, kebab-case and the
// gateway's namespace separator), its title, its description and its parameters' names and
// descriptions, each field normalised by its own length, with light stemming, a table of general
// synonyms and a reading of what a query names (URLs, file names, quoted values). Ties are broken
// by name, so every replica answers the same query the same way.
package toolsearch
