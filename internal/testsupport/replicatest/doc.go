// Package replicatest proves that any gateway replica serves any request. Its tests build the
// gateway binary once, run three gateway processes that share one MRTR key, one real
// redis-server and one OIDC issuer, put a real HAProxy in front of them (round-robin, no
// affinity, health checks on each replica's /readyz), and then show that confirmations, backend
// round trips and rate limits work across replicas, that a rolling restart under load loses no
// request, and that a Redis outage fails closed where it must and recovers by itself.
//
// Everything lives in _test.go files: the package has no API and nothing imports it. Run it with
//
//	go test -v -run TestReplicas ./internal/testsupport/replicatest
//
// It needs redis-server and haproxy (/usr/sbin/haproxy), which .ci/setup installs; a missing
// binary fails the test rather than skipping it.
package replicatest
