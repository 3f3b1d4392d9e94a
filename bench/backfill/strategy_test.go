package backfill

import (
	"strings"
	"testing"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/contract/scankind"
)

// TestEveryScanKindHasAStrategy: every entry of scankind.Kinds (its index is its
// Scan) has a strategy, whose progress is what the entry says (a kind with one
// position per actor refuses to resume vnodes persisted at different positions;
// the others take them up); a Scan past the table is refused, saying where its
// strategy goes.
func TestEveryScanKindHasAStrategy(t *testing.T) {
	differing := []VnodeState{{Vnode: 0, Pos: []row.Datum{row.I64(1)}}, {Vnode: 1, Pos: []row.Datum{row.I64(2)}}}
	for i, k := range scankind.Kinds {
		s, err := ParseScan(k.Name)
		if err != nil || int(s) != i {
			t.Errorf("ParseScan(%q) = %d, %v; want %d", k.Name, s, err, i)
			continue
		}
		e, err := NewExecutor(Config{Vnodes: allVnodes(2), Schema: &kv, VnodeCount: 2, ChunkSize: 4, Scan: s}, Env{})
		if err != nil || e.strat == nil {
			t.Errorf("scan %s: NewExecutor: %v (strategy %v)", k.Name, err, e)
			continue
		}
		_, err = NewExecutor(Config{Vnodes: allVnodes(2), Schema: &kv, VnodeCount: 2, ChunkSize: 4, Scan: s, Resume: differing}, Env{})
		if refused := err != nil; refused != k.OnePositionPerActor {
			t.Errorf("scan %s (one position per actor: %v): resuming vnodes at different positions: %v", k.Name, k.OnePositionPerActor, err)
		}
	}
	_, err := NewExecutor(Config{Vnodes: allVnodes(2), Schema: &kv, VnodeCount: 2, ChunkSize: 4, Scan: Scan(len(scankind.Kinds))}, Env{})
	if err == nil || !strings.Contains(err.Error(), "newStrategies") {
		t.Errorf("a scan past scankind.Kinds: %v, want an error naming newStrategies", err)
	}
}
