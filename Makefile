# The two commands the README promises:
#
#   make test   install what the tests need, then vet, race-test, fuzz briefly
#               and run the official MCP conformance suite through the gateway
#   make demo   run the gateway's local demo
#
# `make test` stops at the first failing stage and exits non-zero.

GO ?= go
# How long each native fuzz target runs in `make test`; `make test FUZZTIME=1m`
# digs deeper locally. Every target's seeds and saved failing inputs also run as plain
# tests in the unit stage, whatever the time. The time counts from when the fuzzer has
# loaded its corpus, so it includes the pass that gathers the corpus's coverage (one to
# two seconds) before new inputs are searched for, two workers each; 36 targets of it are
# a third of the suite's CPU on CI's two cores.
FUZZTIME ?= 4s
# Whole-suite cap for `go test`; far above what the suite needs on 2 cores, so
# it only fires on a hang.
TEST_TIMEOUT ?= 15m

# The one staticcheck release `make vet` runs, fetched through the module proxy
# by `go run` on first use and cached by the go command after that. Move it on
# deliberately: a newer release may add checks that fail the build.
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Debian puts nginx and haproxy in /usr/sbin, which is not on a non-root PATH;
# tests look them up by name.
export PATH := $(PATH):/usr/sbin:/sbin

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

.PHONY: test setup vet govet lint lint-gofmt lint-tidy lint-imports lint-staticcheck unit fuzz ci-gateway suites conformance conformance-legacy interop conformance-direct demo build image

test: setup vet unit fuzz suites

setup:
	.ci/setup

# go vet and the linters. Each is a target of its own; `make -k vet` reports
# every failing one instead of stopping at the first.
vet: govet lint

govet:
	$(GO) vet ./...

lint: lint-gofmt lint-tidy lint-imports lint-staticcheck

# Every Go file is as gofmt writes it (the files that are not are listed).
lint-gofmt:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))"; \
	  if [ -n "$$out" ]; then echo "not gofmt'ed:"; echo "$$out"; exit 1; fi

# go.mod and go.sum are exactly what `go mod tidy` writes (the diff is printed
# otherwise): direct requirements marked as such, no stale or missing sums.
lint-tidy:
	$(GO) mod tidy -diff

# Imports in three groups, each one sorted block: standard library,
# third-party, this module (see internal/tools/importcheck).
lint-imports:
	$(GO) run ./internal/tools/importcheck

lint-staticcheck:
	$(GO) run $(STATICCHECK) ./...

# The packages whose tests run longest, named first: `go test` starts packages in the order it
# is given them (then ./... adds every other package once), so the longest ones start while the
# rest fill the other core, instead of one of them running alone at the end. A name here that no
# longer matches a package fails the run, so the list cannot go stale silently.
SLOW_PACKAGES = ./internal/gateway ./internal/guardrails ./internal/toolsearch \
  ./internal/useroauth ./internal/store ./internal/pins ./internal/testsupport/replicatest

# -p 3: three test binaries at a time on two cores, since several packages spend most of their
# time waiting (Redis expiries, failovers, cooldowns, child processes) rather than computing.
# -parallel 4: the tests marked parallel wait on real expiries, timeouts and child processes,
# not on a core; the default (one per core) would run them two at a time. -vet=off: the vet
# stage before this one ran every analyzer `go test` would run (and more) on the same files.
unit:
	$(GO) test -race -count=1 -p 3 -parallel 4 -vet=off -timeout $(TEST_TIMEOUT) $(SLOW_PACKAGES) ./...
	# Allocation counts mean nothing under -race (pools drop at random): counted once without it.
	$(GO) test -count=1 -run '^(TestAllocationBudgets|TestClientBoundsCostNoAllocation)$$' ./mcphttp/
	# The detectors' differential scans and the search's ranking evaluations are pure computation
	# on one goroutine, which the race detector slows tenfold and finds nothing in: they skip
	# under -race (skipUnderRace) and run here, with the rest of their packages again.
	$(GO) test -count=1 -vet=off ./internal/guardrails/ ./internal/toolsearch/

# Every native fuzz target, FUZZTIME each (see .ci/fuzz).
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) .ci/fuzz

# The gateway binary the conformance, conformance-legacy and interop stages run, built once for
# the three of them (each script builds its own when run alone). A binary named in the
# environment (CONFORMANCE_GATEWAY_BIN, INTEROP_GATEWAY_BIN) is still the one run.
CI_GATEWAY = $(CURDIR)/bin/ci/gateway

ci-gateway:
	$(GO) build -o "$(CI_GATEWAY)" ./cmd/gateway

# The last stage of `make test`: conformance, conformance-legacy and interop side by side. Each
# starts its own servers and gateway on free ports and writes its own run directory, and each
# spends its time waiting on them rather than on a core. Each one's output goes to a file of its
# own, printed whole and in this order once all three have ended; the stage fails if any did.
# setup runs first (once, in `make test`): each script runs it when Node or the suite is
# missing, and three at once would contend for apt's lock and npm's directories.
SUITES = conformance conformance-legacy interop-legacy

suites: setup ci-gateway
	@logs="$$(mktemp -d)"; trap 'rm -rf "$$logs"' EXIT; \
	  export CONFORMANCE_GATEWAY_BIN="$${CONFORMANCE_GATEWAY_BIN:-$(CI_GATEWAY)}" \
	    INTEROP_GATEWAY_BIN="$${INTEROP_GATEWAY_BIN:-$(CI_GATEWAY)}"; \
	  pids=(); for s in $(SUITES); do .ci/$$s >"$$logs/$$s" 2>&1 & pids+=($$!); done; \
	  failed=(); i=0; for s in $(SUITES); do wait "$${pids[$$i]}" || failed+=("$$s"); i=$$((i + 1)); done; \
	  for s in $(SUITES); do cat "$$logs/$$s"; done; \
	  if [ "$${#failed[@]}" -gt 0 ]; then echo "suites: failed: $${failed[*]}" >&2; exit 1; fi

conformance: ci-gateway
	CONFORMANCE_GATEWAY_BIN="$${CONFORMANCE_GATEWAY_BIN:-$(CI_GATEWAY)}" .ci/conformance

# The 2025-11-25 required scenarios against the Go SDK's conformance server
# directly and through the gateway, side by side: whatever passes directly
# must pass through the gateway (pre-2026 clients at the edge).
conformance-legacy: ci-gateway
	CONFORMANCE_GATEWAY_BIN="$${CONFORMANCE_GATEWAY_BIN:-$(CI_GATEWAY)}" .ci/conformance-legacy

# The official TypeScript server-everything (2025-11-25 only) as a legacy backend behind the
# gateway, called by a 2026-07-28 client.
interop: ci-gateway
	INTEROP_GATEWAY_BIN="$${INTEROP_GATEWAY_BIN:-$(CI_GATEWAY)}" .ci/interop-legacy

# The reference: what the Go SDK's conformance server passes on its own.
conformance-direct:
	CONFORMANCE_DIRECT=1 .ci/conformance

demo:
	$(GO) run ./cmd/gateway-demo

build:
	$(GO) build -o bin/gateway ./cmd/gateway

# The image the Helm chart deploys, named in one place, the chart: the name is values.yaml's
# image.repository, the tag Chart.yaml's appVersion, which is also the version stamped into
# the binary. helm/image_test.go holds `make -n image` to the chart's rendered image.
IMAGE_NAME = $(shell sed -n 's/^  repository: *//p' helm/mcp-gateway/values.yaml | head -n 1)
IMAGE_TAG = $(shell sed -n 's/^appVersion: *"*\([^"]*\)"*$$/\1/p' helm/mcp-gateway/Chart.yaml)

image:
	docker build --build-arg VERSION=$(IMAGE_TAG) \
	  --build-arg REVISION="$$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
	  --build-arg CREATED="$$(git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)" \
	  -t $(IMAGE_NAME):$(IMAGE_TAG) .
