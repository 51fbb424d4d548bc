package pre2026

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

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

// unopenedLogEvery is the least time between two warnings of stored records that do not open.
// While a key is appended replica by replica, the replicas that lack it yet cannot open any
// record the others wrote since, each caller's a record of its own, and read them on every
// GET stream's recheck (recheckInterval) and level lookup: one line per record read would be
// a line per stream per recheck.
const unopenedLogEvery = time.Minute

// unopened logs a stored record that does not open, by its error alone (its content is the
// caller's), at most once per unopenedLogEvery on this replica, however many records and
// callers: the next line counts the records read meanwhile that did not open either.
func (st *sessionState) unopened(ctx context.Context, v []byte, err error) {
	now := st.now()
	st.refusedMu.Lock()
	if !st.refusedLogged.IsZero() && now.Sub(st.refusedLogged) < unopenedLogEvery {
		st.refusedSince++
		st.refusedMu.Unlock()
		return
	}
	since := st.refusedSince
	st.refusedLogged, st.refusedSince = now, 0
	st.refusedMu.Unlock()
	st.log.LogAttrs(ctx, slog.LevelWarn, "a legacy session record in the store does not open; it counts as no log level and no subscriptions",
		slog.String("error", err.Error()), slog.Int("bytes", len(v)), slog.Int("not_logged", since))
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
