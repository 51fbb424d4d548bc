// Command resultcorpus records the guardrails' corpus of real tool results: it runs the official
// MCP reference servers from npm over stdio, calls their tools with the Go SDK's client and writes
// every tools/call result, as the server returned it, to one JSON line each.
//
// Usage, from the repository's root, with the servers installed from the pinned lock file:
//
//	npm ci --prefix DIR (with DIR holding a copy of internal/tools/resultcorpus/node's files)
//	go run ./internal/tools/resultcorpus -node-modules DIR/node_modules \
//	    -out internal/guardrails/testdata/results
//
// The filesystem server serves a `git archive` of HEAD, not the working tree, so only committed
// files are read; the export's directory is written as /repo so that no path of the machine that
// recorded the corpus is in it. The servers run with an empty environment but for PATH, so the
// everything server's get-env tool reports nothing of the recording machine's.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.modules, "node-modules", "", "the node_modules directory holding the pinned servers")
	flag.StringVar(&o.out, "out", "internal/guardrails/testdata/results", "the directory the corpus is written to")
	flag.StringVar(&o.node, "node", "node", "the Node binary")
	flag.IntVar(&o.files, "files", 160, "how many of the repository's files the filesystem server reads")
	flag.Parse()
	if o.modules == "" {
		fmt.Fprintln(os.Stderr, "resultcorpus: -node-modules is required")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "resultcorpus:", err)
		os.Exit(1)
	}
}
