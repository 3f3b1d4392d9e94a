package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
)

// Compaction groups, as the engine's: Hummock gives each new streaming job's tables
// a compaction group of their own (src/meta/src/hummock/manager/commit_epoch.rs,
// new_table_fragment_infos), so that the creating job's MV and state never share an
// sstable, a flush or a compaction with the upstream table. With
// Options.CompactionGroups the store keeps each group in a Pebble DB of its own: the
// upstream's (A, its change log, the metadata, the raw copy's scratch table) at
// Options.Dir, the creating job's (the MV, the state table, creating_epoch) at
// Options.Dir/JobGroupDir.
const (
	GroupUpstream = 0
	GroupJob      = 1
)

// JobGroupDir is the creating job's group's DB directory, inside Options.Dir.
const JobGroupDir = "job"

// GroupOf returns the compaction group of a key: its table's, and the creating
// job's for creating_epoch.
func GroupOf(key []byte) int {
	if len(key) < 4 {
		return GroupUpstream
	}
	switch TableID(binary.BigEndian.Uint32(key)) {
	case TableMV, TableState:
		return GroupJob
	case TableMeta:
		if bytes.Equal(key, creatingEpochKey) {
			return GroupJob
		}
	}
	return GroupUpstream
}

// Groups returns the DBs of the compaction groups: one, or one per group.
func (s *Store) Groups() []*pebble.DB { return s.dbs }

// Snapshot is one moment of every compaction group: a read goes to the group of
// the key (Get) or of the iterator's lower bound (NewIter), so that an iterator
// must stay within one group, as every read of one table does.
type Snapshot struct {
	groups []*pebble.Snapshot
}

// NewSnapshot takes a snapshot of every group, the job's first (a commit writes
// the upstream's last, so what the upstream's holds the job's holds too).
func (s *Store) NewSnapshot() *Snapshot {
	snap := &Snapshot{groups: make([]*pebble.Snapshot, len(s.dbs))}
	for g := len(s.dbs) - 1; g >= 0; g-- {
		snap.groups[g] = s.dbs[g].NewSnapshot()
	}
	return snap
}

func (sn *Snapshot) of(key []byte) *pebble.Snapshot {
	if g := GroupOf(key); g < len(sn.groups) {
		return sn.groups[g]
	}
	return sn.groups[0]
}

// NewIter returns an iterator of the group o.LowerBound is in (the upstream's
// without one).
func (sn *Snapshot) NewIter(o *pebble.IterOptions) (*pebble.Iterator, error) {
	if o == nil {
		return sn.groups[0].NewIter(nil)
	}
	return sn.of(o.LowerBound).NewIter(o)
}

// Get reads key in its group.
func (sn *Snapshot) Get(key []byte) ([]byte, io.Closer, error) { return sn.of(key).Get(key) }

// Close closes every group's snapshot.
func (sn *Snapshot) Close() error {
	var first error
	for _, g := range sn.groups {
		if err := g.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// split divides b's writes among the groups, in b's order; with one group it is b.
// An entry of group g goes to parts[g]; nil parts are groups b does not write.
// The caller closes b; parts other than b are the caller's to close as well.
func (s *Store) split(b *pebble.Batch) ([]*pebble.Batch, error) {
	if len(s.dbs) == 1 {
		return []*pebble.Batch{b}, nil
	}
	parts := make([]*pebble.Batch, len(s.dbs))
	r := b.Reader()
	for {
		kind, key, value, ok, err := r.Next()
		if err != nil {
			closeAll(parts)
			return nil, fmt.Errorf("storage: split the epoch batch: %w", err)
		}
		if !ok {
			return parts, nil
		}
		g := GroupOf(key)
		if parts[g] == nil {
			parts[g] = s.dbs[g].NewBatchWithSize(len(b.Repr()))
		}
		p := parts[g]
		switch kind {
		case pebble.InternalKeyKindSet:
			err = p.Set(key, value, nil)
		case pebble.InternalKeyKindDelete:
			err = p.Delete(key, nil)
		case pebble.InternalKeyKindSingleDelete:
			err = p.SingleDelete(key, nil)
		case pebble.InternalKeyKindRangeDelete:
			err = p.DeleteRange(key, value, nil) // Clear's: one table, in its start's group
		default:
			err = fmt.Errorf("a write of kind %s, which the store does not split", kind)
		}
		if err != nil {
			closeAll(parts)
			return nil, fmt.Errorf("storage: split the epoch batch: %w", err)
		}
	}
}

func closeAll(bs []*pebble.Batch) {
	for _, b := range bs {
		if b != nil {
			b.Close()
		}
	}
}

// Flush flushes every group's memtable.
func (s *Store) Flush() error {
	for _, db := range s.dbs {
		if err := db.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// OneGroup reads every table from snap, a snapshot of a DB that holds them all
// (one compaction group), as tests that build their own DB do.
func OneGroup(snap *pebble.Snapshot) *Snapshot { return &Snapshot{groups: []*pebble.Snapshot{snap}} }
