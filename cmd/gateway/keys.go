package main

import (
	"crypto/rand"

	"github.com/mcp-gateway/gateway/internal/seal"
)

// newCursorSealer seals list cursors. Without configured keys the ring holds one random key
// for this process's lifetime: correct for one replica, and the configuration refuses more
// replicas without shared keys.
func newCursorSealer() (*seal.Sealer, error) {
	secret := make([]byte, seal.MinSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "process", Secret: secret}}})
	if err != nil {
		return nil, err
	}
	return ring.Sealer(seal.PurposeCursor), nil
}
