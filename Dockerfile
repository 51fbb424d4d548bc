# syntax=docker/dockerfile:1
#
# The gateway image: one static binary on distroless, running as the nonroot user.
#   make image      builds it as the Helm chart deploys it: named by the chart's image.repository,
#                   tagged and versioned with its appVersion (see the Makefile)
# The binary is built by .ci/build-static, the script helm/image_test.go runs outside Docker.

# The Go release go.mod requires, to the patch release: the golang images set GOTOOLCHAIN=local,
# so an older builder refuses go.mod, and "golang:1.26" alone is whichever 1.26.x was pulled last.
ARG GO_VERSION=1.26.8

# The builder runs on the build machine's platform and cross-compiles, which is fast and needs
# no emulation because the build is pure Go (CGO_ENABLED=0).
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src

# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download && go mod verify

COPY . .
ARG VERSION=dev
ARG TARGETOS
ARG TARGETARCH
# The build cache lives in a cache mount at a fixed path, kept across builds.
RUN --mount=type=cache,target=/gocache \
    GOCACHE=/gocache GOOS=$TARGETOS GOARCH=$TARGETARCH .ci/build-static /out/gateway "$VERSION"

# static-debian12 carries CA certificates (for HTTPS to issuers and backends), tzdata and
# /etc/passwd entries for nonroot, and no shell or package manager.
FROM gcr.io/distroless/static-debian12:nonroot

ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="mcp-gateway" \
      org.opencontainers.image.description="Stateless, horizontally scalable gateway for the Model Context Protocol (2026-07-28)" \
      org.opencontainers.image.source="https://github.com/mcp-gateway/gateway" \
      org.opencontainers.image.url="https://github.com/mcp-gateway/gateway" \
      org.opencontainers.image.documentation="https://github.com/mcp-gateway/gateway/blob/main/docs/deploy.md" \
      org.opencontainers.image.vendor="mcp-gateway" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="gcr.io/distroless/static-debian12:nonroot"

COPY --from=build /out/gateway /gateway

# Numeric, so Kubernetes can verify runAsNonRoot without a runAsUser (65532 is distroless nonroot).
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT ["/gateway"]
CMD ["serve", "--config", "/etc/mcp-gateway/config.yaml"]
