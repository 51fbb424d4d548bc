package backend

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/bodyread"
)

// TestReadErrNamesTheBudgetRead: a read refused by the budget it was charged to (a listen
// stream's share of the replica's budget, say) is ErrResultBudget naming that budget's bound,
// not the replica's, so an operator reading it raises the right setting. The read's error is
// kept, so ErrShare still tells a share's bound from the replica's.
func TestReadErrNamesTheBudgetRead(t *testing.T) {
	replica := bodyread.NewBudget(1 << 20)
	share := bodyread.NewShare(replica, 1<<16)
	err := ReadErr(t.Context(), nil, share, bodyread.ErrShare)
	if !errors.Is(err, ErrResultBudget) || !errors.Is(err, bodyread.ErrShare) {
		t.Fatalf("ReadErr = %v, want ErrResultBudget wrapping bodyread.ErrShare", err)
	}
	if !strings.Contains(err.Error(), "limit 65536 bytes") {
		t.Errorf("ReadErr = %q, want the share's limit of 65536 bytes", err)
	}
}
