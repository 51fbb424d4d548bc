package main

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// packageDocs maps each package of the repository with a doc.go to its doc comment's lines.
func packageDocs(repo string) (map[string][]string, error) {
	docs, err := filepath.Glob(filepath.Join(repo, "*", "doc.go"))
	if err != nil {
		return nil, err
	}
	more, err := filepath.Glob(filepath.Join(repo, "*", "*", "doc.go"))
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, d := range append(docs, more...) {
		lines, err := commentLines(d)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(repo, filepath.Dir(d))
		out[filepath.ToSlash(rel)] = lines
	}
	return out, nil
}

// commentLines is the text of a Go file's leading // comment, a line each.
func commentLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l, ok := strings.CutPrefix(sc.Text(), "//")
		if !ok {
			break
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

// memoryCalls builds a knowledge graph of the repository's packages (their doc comments are the
// observations, "contains" links a directory's package to those below it) and queries it.
func memoryCalls(repo string) ([]call, error) {
	docs, err := packageDocs(repo)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	var entities, relations []map[string]any
	for _, n := range names {
		entities = append(entities, map[string]any{"name": n, "entityType": "go package", "observations": docs[n]})
		if parent := filepath.ToSlash(filepath.Dir(n)); docs[parent] != nil {
			relations = append(relations, map[string]any{"from": parent, "to": n, "relationType": "contains"})
		}
	}
	calls := []call{}
	for i := 0; i < len(entities); i += 5 {
		calls = append(calls, call{"create_entities", map[string]any{"entities": entities[i:min(i+5, len(entities))]}})
	}
	calls = append(calls, call{"create_relations", map[string]any{"relations": relations}},
		call{"add_observations", map[string]any{"observations": []map[string]any{{"entityName": names[0], "contents": []string{"reviewed for the result corpus"}}}}},
		call{"read_graph", nil})
	for _, q := range []string{"redis", "token", "pipeline", "backend", "approval", "metrics", "nothing-matches-this"} {
		calls = append(calls, call{"search_nodes", map[string]any{"query": q}})
	}
	calls = append(calls, call{"open_nodes", map[string]any{"names": spread(names, 4)}},
		call{"delete_observations", map[string]any{"deletions": []map[string]any{{"entityName": names[0], "observations": []string{"reviewed for the result corpus"}}}}},
		call{"delete_relations", map[string]any{"relations": relations[:min(2, len(relations))]}},
		call{"delete_entities", map[string]any{"entityNames": names[len(names)-1:]}},
		call{"read_graph", nil})
	return calls, nil
}

// everythingCalls calls each of the everything server's tools that answer at once and offline
// (not the long-running, sampling, elicitation or network ones), with each of their variants.
func everythingCalls() []call {
	calls := []call{
		{"echo", map[string]any{"message": "Hello from the result corpus"}},
		{"get-env", nil},
		{"get-sum", map[string]any{"a": 17, "b": 25}},
		{"get-tiny-image", nil},
		{"toggle-simulated-logging", nil},
		{"toggle-simulated-logging", nil},
		{"toggle-subscriber-updates", nil},
		{"toggle-subscriber-updates", nil},
	}
	for _, t := range []string{"error", "success", "debug"} {
		for _, img := range []bool{false, true} {
			calls = append(calls, call{"get-annotated-message", map[string]any{"messageType": t, "includeImage": img}})
		}
	}
	for _, n := range []int{1, 3, 10} {
		calls = append(calls, call{"get-resource-links", map[string]any{"count": n}})
	}
	for _, t := range []string{"Text", "Blob"} {
		for _, id := range []int{1, 2, 7} {
			calls = append(calls, call{"get-resource-reference", map[string]any{"resourceType": t, "resourceId": id}})
		}
	}
	for _, l := range []string{"New York", "Chicago", "Los Angeles"} {
		calls = append(calls, call{"get-structured-content", map[string]any{"location": l}})
	}
	return calls
}

// thinkingCalls walks the sequential-thinking server through two short chains, one with a revision
// and a branch.
func thinkingCalls() []call {
	steps := []map[string]any{
		{"thought": "The gateway must check what the backend acts on; start from the pipeline's stages.", "thoughtNumber": 1, "totalThoughts": 4, "nextThoughtNeeded": true},
		{"thought": "Authorisation runs before pinning, so a changed definition is caught after the caller is known.", "thoughtNumber": 2, "totalThoughts": 4, "nextThoughtNeeded": true},
		{"thought": "Revisit step 1: the guard stage bounds the body before anything is decoded.", "thoughtNumber": 3, "totalThoughts": 4, "nextThoughtNeeded": true, "isRevision": true, "revisesThought": 1},
		{"thought": "Alternative: look at the pre-2026 edge, which reaches the same stages through Incoming.", "thoughtNumber": 4, "totalThoughts": 5, "nextThoughtNeeded": true, "branchFromThought": 2, "branchId": "legacy-edge"},
		{"thought": "Both eras share the stages after authentication; the answer is the shared list.", "thoughtNumber": 5, "totalThoughts": 5, "nextThoughtNeeded": false},
		{"thought": "A second question: how is rate-limit state shared between replicas?", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": true},
		{"thought": "In Redis, keyed by caller, so any replica serves any request.", "thoughtNumber": 2, "totalThoughts": 2, "nextThoughtNeeded": false, "needsMoreThoughts": false},
	}
	calls := make([]call, 0, len(steps))
	for _, s := range steps {
		calls = append(calls, call{"sequentialthinking", s})
	}
	return calls
}
