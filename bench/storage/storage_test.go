package storage

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/backfill-bench/backfill-bench/bench/memcmp"
	"github.com/backfill-bench/backfill-bench/bench/meterfs"
	"github.com/backfill-bench/backfill-bench/bench/row"
)

func TestOwnedVnodesPartition(t *testing.T) {
	for _, count := range []int{1, 7, 256} {
		for par := 1; par <= count && par <= 9; par++ {
			next := 0
			for a := 0; a < par; a++ {
				lo, hi := OwnedVnodes(a, par, count)
				if lo != next || hi < lo {
					t.Fatalf("count %d par %d: actor %d owns [%d,%d), want to start at %d", count, par, a, lo, hi, next)
				}
				if hi-lo < count/par || hi-lo > count/par+1 {
					t.Errorf("count %d par %d: actor %d owns %d vnodes: unbalanced", count, par, a, hi-lo)
				}
				for v := lo; v < hi; v++ {
					if o := OwnerOf(v, par, count); o != a {
						t.Fatalf("count %d par %d: OwnerOf(%d) = %d, want %d", count, par, v, o, a)
					}
				}
				next = hi
			}
			if next != count {
				t.Fatalf("count %d par %d: vnodes end at %d", count, par, next)
			}
		}
	}
}

func TestVnoderSpreadsAndIsStable(t *testing.T) {
	s := &row.Schema{Columns: []row.Column{{Name: "id", Kind: row.Int64}}, PK: []int{0}, DistKey: []int{0}}
	v := NewVnoder(s, 256)
	hits := make([]int, 256)
	for i := int64(0); i < 25600; i++ {
		hits[v.Of(row.Row{row.I64(i)})]++
	}
	for vn, h := range hits {
		if h < 50 || h > 160 { // mean 100
			t.Errorf("vnode %d got %d of 25600 keys", vn, h)
		}
	}
	if NewVnoder(s, 256).Of(row.Row{row.I64(42)}) != v.Of(row.Row{row.I64(42)}) {
		t.Error("vnode of a key changed between Vnoders")
	}
	if NewVnoder(s, 1).Of(row.Row{row.I64(42)}) != 0 {
		t.Error("one vnode: want vnode 0")
	}
}

// TestVnoderOfMatchesEncoding: Of, which hashes integer columns from their values,
// gives the vnode of its definition (crc32 of the encoded distribution key) for
// keys of every kind, one column or several, including nulls and the integer
// extremes.
func TestVnoderOfMatchesEncoding(t *testing.T) {
	schemas := []*row.Schema{
		{Columns: []row.Column{{Name: "id", Kind: row.Int64}}, PK: []int{0}, DistKey: []int{0}},
		{Columns: []row.Column{{Name: "ts", Kind: row.Timestamp}}, PK: []int{0}, DistKey: []int{0}},
		{Columns: []row.Column{{Name: "s", Kind: row.String}, {Name: "id", Kind: row.Int64}}, PK: []int{1, 0}, DistKey: []int{1}},
		{Columns: []row.Column{{Name: "s", Kind: row.String}, {Name: "id", Kind: row.Int64}, {Name: "f", Kind: row.Float64}, {Name: "b", Kind: row.Bool}},
			PK: []int{0, 1}, DistKey: []int{1, 0, 2, 3}},
	}
	ints := []int64{0, 1, -1, 42, 1 << 40, -(1 << 40), 9223372036854775807, -9223372036854775808}
	for si, s := range schemas {
		for _, count := range []int{256, 7, 4096} {
			v := NewVnoder(s, count)
			for i := range 2000 {
				r := make(row.Row, len(s.Columns))
				for c, col := range s.Columns {
					x := ints[i%len(ints)] + int64(i*7919+c)
					switch {
					case i%13 == c:
						r[c] = row.NullDatum
					case col.Kind == row.Int64:
						r[c] = row.I64(x)
					case col.Kind == row.Timestamp:
						r[c] = row.TS(x)
					case col.Kind == row.String:
						r[c] = row.Str(fmt.Sprintf("k%d\x00%d", x, i))
					case col.Kind == row.Float64:
						r[c] = row.F64(float64(x) / 3)
					case col.Kind == row.Bool:
						r[c] = row.B(i%2 == 0)
					}
				}
				want := v.ofEncoded(r)
				if got := v.Of(r); got != want {
					t.Fatalf("schema %d, %d vnodes, row %v: Of = %d, the encoding's crc gives %d", si, count, r, got, want)
				}
				if got := v.OfRows(nil, []row.Row{r}); got[0] != want {
					t.Fatalf("schema %d, %d vnodes, row %v: OfRows = %d, the encoding's crc gives %d", si, count, r, got[0], want)
				}
			}
		}
	}
}

// ofEncoded is Of by its definition: the encoding, then crc32.Update (tests).
func (v *Vnoder) ofEncoded(r row.Row) uint16 {
	var b []byte
	for _, c := range v.schema.DistKey {
		b = memcmp.AppendKey(b, r[c:c+1], nil)
	}
	return uint16(crc32.Update(0, castagnoli, b) % uint32(v.count))
}

func TestKeyBounds(t *testing.T) {
	lo, hi := VnodeBounds(TableUpstream, 0xFFFF)
	k := AppendPrefix(nil, TableUpstream, 0xFFFF)
	k = append(k, 0xFF, 0xFF)
	if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
		t.Errorf("key %x outside the last vnode's bounds [%x,%x)", k, lo, hi)
	}
	tlo, thi := TableBounds(TableUpstream)
	if bytes.Compare(hi, thi) > 0 || bytes.Compare(lo, tlo) < 0 {
		t.Errorf("vnode bounds escape the table")
	}
	if KeyVnode(k) != 0xFFFF {
		t.Errorf("KeyVnode = %d", KeyVnode(k))
	}
}

func TestCommitEpochAndReopen(t *testing.T) {
	fs := vfs.NewMem()
	open := func() *Store {
		s, err := Open(Options{FS: fs, Dir: "/db"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	if e := s.Committed(); e != 0 {
		t.Fatalf("new DB at epoch %d", e)
	}
	held := s.Latest() // a scan at epoch 0 keeps its snapshot across commits
	b := s.DB.NewBatch()
	b.Set([]byte("k"), []byte("v1"), nil)
	if err := s.CommitEpoch(b, 5, true); err != nil {
		t.Fatal(err)
	}
	if _, closer, err := held.Snap.Get([]byte("k")); err != pebble.ErrNotFound {
		t.Errorf("epoch-0 snapshot sees the epoch-5 write (err %v)", err)
		if closer != nil {
			closer.Close()
		}
	}
	held.Release()
	cur := s.Latest()
	if cur.Epoch != 5 {
		t.Errorf("latest epoch %d, want 5", cur.Epoch)
	}
	cur.Release()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	if e := s.Committed(); e != 5 {
		t.Errorf("reopened at epoch %d, want 5", e)
	}
}

// TestReadViews checks what uncommitted and checkpoint reads see as epochs are sealed
// and committed, some synced (checkpoints) and some not.
func TestReadViews(t *testing.T) {
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sealed := map[uint64]*Writes{}
	seal := func(epoch uint64) {
		w := &Writes{}
		w.Set([]byte(fmt.Sprint("k", epoch)), []byte("v"))
		w.Sort()
		sealed[epoch] = w
		s.Seal(epoch, w)
	}
	commit := func(epoch uint64, sync bool) {
		b := s.DB.NewBatch()
		if _, err := sealed[epoch].PutAll(b); err != nil {
			t.Fatal(err)
		}
		if err := s.CommitEpoch(b, epoch, sync); err != nil {
			t.Fatal(err)
		}
	}
	// uncommitted reads epoch upTo: want the snapshot's epoch and the overlaid ones.
	uncommitted := func(upTo, wantSnap uint64, wantOver ...uint64) {
		t.Helper()
		snap, over := s.ReadUncommitted(upTo)
		defer snap.Release()
		if snap.Epoch != wantSnap || len(over) != len(wantOver) {
			t.Fatalf("read of epoch %d: snapshot %d with %d sealed epochs, want %d with %v", upTo, snap.Epoch, len(over), wantSnap, wantOver)
		}
		for i, e := range wantOver {
			if over[i] != sealed[e] {
				t.Errorf("read of epoch %d: overlay %d is not epoch %d's", upTo, i, e)
			}
		}
	}
	checkpoint := func(want uint64) {
		t.Helper()
		snap := s.LatestCheckpoint()
		defer snap.Release()
		if snap.Epoch != want {
			t.Errorf("latest checkpoint %d, want %d", snap.Epoch, want)
		}
	}
	checkpoint(0) // a new DB is its own first checkpoint
	seal(1)
	seal(2)
	uncommitted(1, 0, 1)
	uncommitted(2, 0, 1, 2)
	commit(1, false)
	uncommitted(2, 1, 2)
	checkpoint(0) // epoch 1 did not sync
	held := s.LatestCheckpoint()
	commit(2, true)
	uncommitted(2, 2)
	checkpoint(2)
	// A reader keeps the old checkpoint's snapshot open after a newer one is published.
	if _, closer, err := held.Snap.Get([]byte("k1")); err != pebble.ErrNotFound {
		t.Errorf("checkpoint 0 sees epoch 1's write (err %v)", err)
		if closer != nil {
			closer.Close()
		}
	}
	held.Release()
}

// TestFSCountsMatchPebble checks the meterfs counts against Pebble's own metrics for
// the same writes: the WAL and flushed bytes agree.
func TestFSCountsMatchPebble(t *testing.T) {
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := s.FS.Stats()
	for e := uint64(1); e <= 20; e++ {
		b := s.DB.NewBatch()
		for i := 0; i < 1000; i++ {
			b.Set([]byte{byte(e), byte(i >> 8), byte(i)}, bytes.Repeat([]byte{'v'}, 100), nil)
		}
		if err := s.CommitEpoch(b, e, e%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DB.Flush(); err != nil {
		t.Fatal(err)
	}
	got := s.FS.Stats().Sub(start)
	m := s.DB.Metrics()
	if w := int64(m.WAL.BytesWritten); got.Bytes[meterfs.WAL] < w || got.Bytes[meterfs.WAL] > w+4096 {
		t.Errorf("FS counted %d WAL bytes, Pebble reports %d", got.Bytes[meterfs.WAL], w)
	}
	if f := int64(m.Levels[0].TableBytesFlushed); got.Bytes[meterfs.Flush] != f {
		t.Errorf("FS counted %d flush bytes, Pebble reports %d", got.Bytes[meterfs.Flush], f)
	}
	if got.Syncs[meterfs.WAL] < 10 {
		t.Errorf("%d WAL syncs for 10 synced epochs", got.Syncs[meterfs.WAL])
	}
}

// TestObjectStore: on an object store there is no WAL; a checkpoint flushes the
// memtable, every sstable Pebble flushes or compacts is uploaded once (requests and
// bytes as Pebble's own metrics count the tables), an epoch that is not a
// checkpoint uploads nothing and is lost when the DB closes without one.
func TestObjectStore(t *testing.T) {
	fs := vfs.NewMem()
	throttle := meterfs.NewThrottle(meterfs.ThrottleConfig{Upload: &meterfs.Upload{}})
	s, err := Open(Options{FS: fs, Dir: "/db", Throttle: throttle})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(epoch uint64, checkpoint bool) {
		t.Helper()
		b := s.DB.NewBatch()
		for i := range 2000 {
			b.Set([]byte(fmt.Sprintf("e%03d/k%05d", epoch, i)), bytes.Repeat([]byte{'v'}, 100), nil)
		}
		if err := s.CommitEpoch(b, epoch, checkpoint); err != nil {
			t.Fatal(err)
		}
	}
	for epoch := uint64(1); epoch <= 6; epoch++ {
		commit(epoch, true)
	}
	// Compactions of the checkpoints' tables upload too; let them end first.
	s.WaitForCompactions(context.Background(), 5*time.Second)
	before := s.FS.Stats()
	commit(7, false)
	if st := s.FS.Stats().Sub(before); st.Uploads != 0 || st.UploadBytes != 0 {
		t.Errorf("an epoch that is not a checkpoint uploaded %d requests, %d bytes", st.Uploads, st.UploadBytes)
	}
	s.WaitForCompactions(context.Background(), 5*time.Second)
	st := s.FS.Stats()
	m := s.DB.Metrics()
	var tables, tableBytes uint64
	for _, l := range m.Levels {
		tables += l.TablesFlushed + l.TablesCompacted
		tableBytes += l.TableBytesFlushed + l.TableBytesCompacted
	}
	if st.Bytes[meterfs.WAL] != 0 {
		t.Errorf("%d bytes written to a WAL", st.Bytes[meterfs.WAL])
	}
	if m.Flush.Count < 6 {
		t.Errorf("%d flushes for 6 checkpoints", m.Flush.Count)
	}
	if uint64(st.Uploads) != tables || uint64(st.UploadBytes) != tableBytes {
		t.Errorf("uploaded %d requests, %d bytes; Pebble flushed and compacted %d tables of %d bytes", st.Uploads, st.UploadBytes, tables, tableBytes)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(Options{FS: fs, Dir: "/db", Throttle: throttle})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if e := s.Committed(); e != 6 {
		t.Errorf("reopened at epoch %d, want 6 (the last checkpoint)", e)
	}
	if _, closer, err := s.DB.Get([]byte("e007/k00000")); err != pebble.ErrNotFound {
		t.Errorf("epoch 7, never checkpointed, survived the close (err %v)", err)
		if closer != nil {
			closer.Close()
		}
	}
}

// TestCheckpointUploadsOverlap: on an object store a checkpoint commits at once and
// its upload goes on in the background, so the next checkpoint commits while the
// previous one still uploads; a checkpoint is the latest (readable, and what a
// reopened DB resumes from) only once its upload ended; closing the store does not
// wait for uploads that had not begun.
func TestCheckpointUploadsOverlap(t *testing.T) {
	const put = 400 * time.Millisecond // long beside a commit: nothing here waits for it by chance
	fs := vfs.NewMem()
	throttle := meterfs.NewThrottle(meterfs.ThrottleConfig{Upload: &meterfs.Upload{Latency: meterfs.Latency{Median: put}}})
	s, err := Open(Options{FS: fs, Dir: "/db", Throttle: throttle})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(epoch uint64) *Upload {
		t.Helper()
		b := s.DB.NewBatch()
		b.Set([]byte(fmt.Sprintf("e%03d", epoch)), []byte("v"), nil)
		u, err := s.CommitEpochAsync(b, epoch, true)
		if err != nil || u == nil {
			t.Fatalf("epoch %d: upload %v, err %v; want an upload in the background", epoch, u, err)
		}
		return u
	}
	checkpoint := func() uint64 {
		c := s.LatestCheckpoint()
		defer c.Release()
		return c.Epoch
	}
	done := func(u *Upload) bool {
		select {
		case <-u.Done():
			return true
		default:
			return false
		}
	}
	u1 := commit(1)
	u2 := commit(2)
	if done(u1) {
		t.Fatal("epoch 2 committed only after epoch 1's upload ended: no overlap")
	}
	if s.Committed() != 2 || checkpoint() != 0 {
		t.Errorf("while uploading: committed %d, checkpoint %d; want 2 (at once) and 0 (not durable yet)", s.Committed(), checkpoint())
	}
	<-u1.Done()
	<-u2.Done()
	if checkpoint() != 2 || !u1.At().Before(u2.At()) && !u1.At().Equal(u2.At()) {
		t.Errorf("after the uploads: checkpoint %d (want 2); ended at %v and %v (want in order)", checkpoint(), u1.At(), u2.At())
	}
	// A non-checkpoint commit is done at once, as before.
	b := s.DB.NewBatch()
	b.Set([]byte("e003"), []byte("v"), nil)
	if u, err := s.CommitEpochAsync(b, 3, false); u != nil || err != nil {
		t.Errorf("epoch 3, not a checkpoint: upload %v, err %v", u, err)
	}
	commit(4)
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close hung on an upload")
	}
	s, err = Open(Options{FS: fs, Dir: "/db", Throttle: throttle})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if e := s.Committed(); e != 2 && e != 4 {
		t.Errorf("reopened at epoch %d, want 2 (epoch 4's upload cut short) or 4", e)
	}
}

// TestCreatingUploadOverlaps: a creating job's checkpoint on an object store
// commits at once (its creating_epoch row readable) and uploads in the background,
// as the upstream's do, so the upstream's next checkpoint commits while it still
// uploads; the uploads end in commit order, and only the upstream's moves the
// latest checkpoint.
func TestCreatingUploadOverlaps(t *testing.T) {
	const put = 400 * time.Millisecond // long beside a commit: nothing here waits for it by chance
	throttle := meterfs.NewThrottle(meterfs.ThrottleConfig{Upload: &meterfs.Upload{Latency: meterfs.Latency{Median: put}}})
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db", Throttle: throttle})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.DB.NewBatch()
	b.Set([]byte("c001"), []byte("v"), nil)
	uc, err := s.CommitCreatingAsync(b, 1, 7, true)
	if err != nil || uc == nil {
		t.Fatalf("creating epoch 1: upload %v, err %v; want an upload in the background", uc, err)
	}
	snap := s.NewSnapshot()
	epoch, data, ok, err := CreatingEpoch(snap)
	snap.Close()
	if err != nil || !ok || epoch != 1 || data != 7 {
		t.Errorf("creating_epoch after the commit: (%d, %d, %v, %v), want (1, 7) at once", epoch, data, ok, err)
	}
	b = s.DB.NewBatch()
	b.Set([]byte("e001"), []byte("v"), nil)
	uu, err := s.CommitEpochAsync(b, 1, true)
	if err != nil || uu == nil {
		t.Fatalf("epoch 1: upload %v, err %v; want an upload in the background", uu, err)
	}
	select {
	case <-uc.Done():
		t.Fatal("the upstream's checkpoint committed only after the creating one's upload ended: no overlap")
	default:
	}
	<-uc.Done()
	c := s.LatestCheckpoint()
	if c.Epoch != 0 && c.Epoch != 1 {
		t.Errorf("after the creating upload: checkpoint %d, want 0 or 1 (the upstream's)", c.Epoch)
	}
	c.Release()
	<-uu.Done()
	if uu.At().Before(uc.At()) {
		t.Errorf("the upstream's upload ended at %v, before the earlier creating one's at %v", uu.At(), uc.At())
	}
	c = s.LatestCheckpoint()
	defer c.Release()
	if c.Epoch != 1 {
		t.Errorf("after both uploads: checkpoint %d, want 1", c.Epoch)
	}
}

// TestLargeEpochDoesNotStallTheNext: an epoch batch over half the memtable becomes
// a flushable batch; with Pebble's default of 2 memtables the next commit waits for
// its flush, while the default here (the engine's shared buffer holds sealed
// epochs) lets it go on. Flushes are slowed so that the second commit always comes
// while the first epoch is still flushing. The stalled bytes are the second
// epoch's batch, the one that waited, and none without a stall.
func TestLargeEpochDoesNotStallTheNext(t *testing.T) {
	for _, tc := range []struct {
		memtables int
		stall     bool
	}{{2, true}, {0, false}} {
		throttle := meterfs.NewThrottle(meterfs.ThrottleConfig{WriteBandwidth: 4 << 20})
		s, err := Open(Options{FS: vfs.NewMem(), Dir: "/db", MemTableSize: 1 << 20, MemTables: tc.memtables, Throttle: throttle})
		if err != nil {
			t.Fatal(err)
		}
		for epoch, rows := range []int{1: 1500, 2: 600} {
			if rows == 0 {
				continue
			}
			b := s.DB.NewBatch()
			for i := range rows {
				b.Set([]byte(fmt.Sprintf("e%d/k%04d", epoch, i)), bytes.Repeat([]byte{'v'}, 1000), nil)
			}
			if err := s.CommitEpoch(b, uint64(epoch), false); err != nil {
				t.Fatal(err)
			}
		}
		lsm := s.LSM()
		if (lsm.Stalls > 0) != tc.stall {
			t.Errorf("memtables %d: %d write stalls after epochs of 1.5 MB and 600 KB; want stalls: %v", tc.memtables, lsm.Stalls, tc.stall)
		}
		if second := lsm.StallBytes >= 600_000 && lsm.StallBytes < 1_000_000; second != tc.stall || !tc.stall && lsm.StallBytes != 0 {
			t.Errorf("memtables %d: %d bytes in write stalls; want the second epoch's ~610 KB: %v", tc.memtables, lsm.StallBytes, tc.stall)
		}
		s.Close()
	}
}
