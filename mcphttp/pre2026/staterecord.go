package pre2026

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcp-gateway/gateway/internal/seal"
)

// A caller's record (callerState) is sealed before it reaches the store: a subscribed URI may
// carry what the caller would not have anyone else read (a file path, a mailbox, a customer's
// name). Every replica holds the key ring and opens it; Redis, and whoever may read it, does
// not. A record the release before sealing wrote in clear is read once and sealed again.

// purposeSessionState is the key-ring purpose of a caller's sealed record: it never opens as
// anything else, nor anything else as it.
const purposeSessionState = "mcp-gateway/legacy-session-state/v1"

// decode opens a stored record: sealed, or in clear as the release before sealing wrote it (a
// JSON object, which no sealed token starts with, and never larger than maxStateBytes).
func (st *sessionState) decode(v []byte) (cs *callerState, clear bool, err error) {
	pt := v
	if clear = len(v) > 0 && v[0] == '{'; clear {
		if len(v) > maxStateBytes {
			return nil, true, seal.ErrOversized
		}
	} else if pt, err = st.sealer.Open(string(v)); err != nil {
		return nil, false, err
	}
	cs = &callerState{}
	if err := json.Unmarshal(pt, cs); err != nil {
		return nil, clear, errBadRecord
	}
	return cs, clear, nil
}

// errBadRecord is a stored record that opens but is not a record.
var errBadRecord = errors.New("pre2026: a stored session record is not a record")

// unopened logs a stored record that does not open, by its error alone (its content is the
// caller's), once for as long as it stays the same record.
func (st *sessionState) unopened(ctx context.Context, v []byte, err error) {
	sum := sha256.Sum256(v)
	if last := st.refused.Swap(&sum); last != nil && *last == sum {
		return
	}
	st.log.LogAttrs(ctx, slog.LevelWarn, "a legacy session record in the store does not open; it counts as no log level and no subscriptions",
		slog.String("error", err.Error()), slog.Int("bytes", len(v)))
}

// reseal writes a record read in clear (old, as cs) back sealed, in place and keeping its expiry,
// only while the store still holds old: a change another replica wrote in between stays.
func (st *sessionState) reseal(ctx context.Context, caller string, old []byte, cs *callerState) {
	v, err := st.encode(cs)
	if err == nil {
		_, err = st.kv.Swap(ctx, stateKey(caller), old, v)
	}
	if err != nil {
		st.log.LogAttrs(ctx, slog.LevelWarn, "a legacy session record kept in clear was not sealed; the next read or change seals it",
			slog.String("error", err.Error()))
	}
}

// encode seals cs for the store.
func (st *sessionState) encode(cs *callerState) ([]byte, error) {
	v, err := json.Marshal(cs)
	if err != nil {
		return nil, err
	}
	if len(v) > maxStateBytes {
		return nil, errStateBound
	}
	sealed, err := st.sealer.Seal(v)
	if err != nil {
		return nil, fmt.Errorf("pre2026: sealing a session's state: %w", err)
	}
	return []byte(sealed), nil
}
