package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// TableLog is the upstream table's change log, kept while a snapshot backfill needs
// it, as the engine keeps a table change log for a creating job to replay: key
// epoch (u64 BE) | vnode (u16 BE) | seq (u32 BE), value op byte | row value. One
// epoch's log of one vnode is a key range, in the order the changes were routed.
const TableLog TableID = 6

// AppendLogKey appends the change-log key of the seq-th change of vnode in epoch.
func AppendLogKey(dst []byte, epoch uint64, vnode uint16, seq uint32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(TableLog))
	dst = binary.BigEndian.AppendUint64(dst, epoch)
	dst = binary.BigEndian.AppendUint16(dst, vnode)
	return binary.BigEndian.AppendUint32(dst, seq)
}

// LogBounds returns [lo, hi) covering the change log of vnodes [first, last] in epoch.
func LogBounds(epoch uint64, first, last uint16) (lo, hi []byte) {
	lo = AppendLogKey(nil, epoch, first, 0)
	if last == 0xFFFF {
		return lo, AppendLogKey(nil, epoch+1, 0, 0)
	}
	return lo, AppendLogKey(nil, epoch, last+1, 0)
}

var creatingEpochKey = append(AppendPrefix(nil, TableMeta, 0), "creating_epoch"...)

// CommitCreatingAsync commits b, a creating job's epoch (MV and state rows), with
// the row creating_epoch = (epoch, the upstream epoch its MV holds), durably when
// sync is set, uploading as CommitEpochAsync does (the engine's uploader syncs every
// job's epochs alike). It neither moves committed_epoch nor publishes a snapshot:
// the upstream's next commit does (snapshot backfill). b is closed.
func (s *Store) CommitCreatingAsync(b *pebble.Batch, epoch, dataEpoch uint64, sync bool) (*Upload, error) {
	defer b.Close()
	v := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, epoch), dataEpoch)
	if err := b.Set(creatingEpochKey, v, nil); err != nil {
		return nil, err
	}
	u, err := s.commitAsync(b, epoch, false, sync)
	if err != nil {
		return nil, fmt.Errorf("storage: commit creating epoch %d: %w", epoch, err)
	}
	return u, nil
}

// CreatingEpoch reads creating_epoch at snap: the creating job's last committed
// epoch and the upstream epoch its MV holds; ok is false when none was committed.
func CreatingEpoch(snap *Snapshot) (epoch, dataEpoch uint64, ok bool, err error) {
	v, closer, err := snap.Get(creatingEpochKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("storage: read creating_epoch: %w", err)
	}
	defer closer.Close()
	if len(v) != 16 {
		return 0, 0, false, fmt.Errorf("storage: creating_epoch has %d bytes, want 16", len(v))
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), true, nil
}
