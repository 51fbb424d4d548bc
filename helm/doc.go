// Package helm holds the deployment artefacts' tests: the Helm chart in mcp-gateway/ is linted,
// rendered over the values files in testdata/ and every manifest is decoded strictly into the
// Kubernetes API types; the image's build script (.ci/build-static, run by the Dockerfile) is run
// outside Docker and its binary inspected; what the README says `make test` installs is what
// .ci/setup installs, and the conformance gates of the .ci scripts fail when they should. The
// package has no non-test code.
package helm
