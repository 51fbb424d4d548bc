package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// MinRedisVersion is the oldest Redis (or Valkey, which reports the Redis version it is
// compatible with) the gateway's commands run on: 7.0. The records' scripts read PEXPIRETIME
// and single-use writes send SET with both NX and GET, which older servers refuse as an unknown
// command or a syntax error; on them every confirmation, pin record and vault write would fail.
const MinRedisVersion = "7.0"

// VersionChecker is a store that can say whether its server is new enough for the gateway.
type VersionChecker interface {
	// CheckVersion returns nil when every server the store writes to runs MinRedisVersion or
	// later, an error naming the version otherwise, or the error of asking.
	CheckVersion(ctx context.Context) error
}

var _ VersionChecker = (*Redis)(nil)

// CheckVersion implements VersionChecker: HELLO, which every Redis since 6.0 answers with its
// version and which the least-privilege ACL of docs/scaling.md grants (INFO it does not), on
// the server the client writes to (every primary of a Cluster).
func (r *Redis) CheckVersion(ctx context.Context) error {
	probe, err := r.admit()
	if err != nil {
		return err
	}
	check := func(ctx context.Context, c interface {
		Do(context.Context, ...any) *redis.Cmd
	}) error {
		hello, err := c.Do(ctx, "hello").Result()
		if err != nil {
			return err
		}
		return versionNewEnough(helloVersion(hello))
	}
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return check(ctx, c) })
	} else {
		err = check(ctx, r.client)
	}
	var old *OldVersionError
	if errors.As(err, &old) {
		_ = r.done(probe, nil) // the server answered: it is not failing, only too old
		return err
	}
	return r.done(probe, err)
}

// OldVersionError is CheckVersion's answer from a server older than MinRedisVersion.
type OldVersionError struct{ Version string }

func (e *OldVersionError) Error() string {
	return fmt.Sprintf("redis %s is older than %s, which the gateway needs (PEXPIRETIME, SET with NX and GET)",
		e.Version, MinRedisVersion)
}

// helloVersion returns the version in a HELLO answer: a map in RESP3, a flat list of names and
// values in RESP2; "" when it names none.
func helloVersion(hello any) string {
	switch h := hello.(type) {
	case map[any]any:
		v, _ := h["version"].(string)
		return v
	case []any:
		for i := 0; i+1 < len(h); i += 2 {
			if name, _ := h[i].(string); name == "version" {
				v, _ := h[i+1].(string)
				return v
			}
		}
	}
	return ""
}

// versionNewEnough judges a server's version.
func versionNewEnough(v string) error {
	if v == "" {
		return errors.New("redis: HELLO names no version")
	}
	if !atLeast(v, MinRedisVersion) {
		return &OldVersionError{Version: v}
	}
	return nil
}

// atLeast reports whether the dotted version v is least or later, by its major and minor numbers.
func atLeast(v, least string) bool {
	vm, vn := majorMinor(v)
	mm, mn := majorMinor(least)
	return vm > mm || (vm == mm && vn >= mn)
}

// majorMinor returns a dotted version's first two numbers (-1 when one does not parse).
func majorMinor(v string) (int, int) {
	parts := strings.SplitN(v, ".", 3)
	num := func(i int) int {
		if i >= len(parts) {
			return 0
		}
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return -1
		}
		return n
	}
	return num(0), num(1)
}
