package storage

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCompactionGroupsSeparateTables: with compaction groups an epoch's batch lands
// in two DBs, the upstream's (A, metadata) and the creating job's (MV, state,
// creating_epoch); the store's snapshots read each table from its group; a
// checkpoint flushes both to sstables of their own; the store reopens at its
// checkpoint with both.
func TestCompactionGroupsSeparateTables(t *testing.T) {
	fs := vfs.NewMem()
	open := func() *Store {
		s, err := Open(Options{FS: fs, Dir: "/db", Checkpointed: true, CompactionGroups: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	keys := map[TableID][]byte{}
	for _, tb := range []TableID{TableUpstream, TableMV, TableState} {
		keys[tb] = append(AppendPrefix(nil, tb, 3), "row"...)
	}
	b := s.DB.NewBatch()
	for tb, k := range keys {
		b.Set(k, []byte{byte(tb)}, nil)
	}
	if err := s.CommitEpoch(b, 2, true); err != nil {
		t.Fatal(err)
	}
	b = s.DB.NewBatch()
	u, err := s.CommitCreatingAsync(b, 1, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	<-u.Done()
	dbs := s.Groups()
	if len(dbs) != 2 {
		t.Fatalf("%d groups, want 2", len(dbs))
	}
	want := map[TableID]int{TableUpstream: GroupUpstream, TableMV: GroupJob, TableState: GroupJob}
	for tb, k := range keys {
		for g, db := range dbs {
			_, closer, err := db.Get(k)
			found := err == nil
			if found {
				closer.Close()
			} else if !errors.Is(err, pebble.ErrNotFound) {
				t.Fatal(err)
			}
			if found != (g == want[tb]) {
				t.Errorf("table %d in group %d: %v, want it only in group %d", tb, g, found, want[tb])
			}
		}
		if g := GroupOf(k); g != want[tb] {
			t.Errorf("GroupOf(table %d) = %d, want %d", tb, g, want[tb])
		}
	}
	for g, db := range dbs {
		if n := db.Metrics().Levels[0].TablesCount; n == 0 {
			t.Errorf("group %d: no sstable after the checkpoints", g)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	if e := s.Committed(); e != 2 {
		t.Errorf("reopened at epoch %d, want 2", e)
	}
	snap := s.LatestCheckpoint()
	defer snap.Release()
	for tb, k := range keys {
		v, closer, err := snap.Snap.Get(k)
		if err != nil {
			t.Fatalf("table %d through the store's snapshot: %v", tb, err)
		}
		if len(v) != 1 || TableID(v[0]) != tb {
			t.Errorf("table %d: read %x", tb, v)
		}
		closer.Close()
	}
	if e, data, ok, err := CreatingEpoch(snap.Snap); err != nil || !ok || e != 1 || data != 2 {
		t.Errorf("creating_epoch = (%d, %d, %v, %v), want (1, 2, true, nil)", e, data, ok, err)
	}
	lo, hi := TableBounds(TableMV)
	it, err := snap.Snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	it.Close()
	if n != 1 {
		t.Errorf("an iterator over the MV table saw %d rows, want 1", n)
	}
}

// TestGroupsFlushApart: with compaction groups a checkpoint waits only for its own
// groups' previous flushes. The creating job's sstable writes are held, so its
// checkpoint's flush cannot end. The upstream's checkpoint must still commit and
// flush, as the engine's uploader runs different syncs' uploads at once. The next
// creating checkpoint must wait: within a group one flush holds one checkpoint.
func TestGroupsFlushApart(t *testing.T) {
	fs := &heldFS{FS: vfs.NewMem(), dir: "/db/" + JobGroupDir + "/", release: make(chan struct{})}
	s, err := Open(Options{FS: fs, Dir: "/db", Checkpointed: true, CompactionGroups: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var once sync.Once
	release := func() { once.Do(func() { close(fs.release) }) }
	defer release() // before Close, which waits for the flushes
	commit := func(table TableID, epoch uint64) <-chan error {
		done := make(chan error, 1)
		go func() {
			b := s.DB.NewBatch()
			b.Set(append(AppendPrefix(nil, table, 1), "row"...), []byte("v"), nil)
			var u *Upload
			var err error
			if table == TableMV {
				u, err = s.CommitCreatingAsync(b, epoch, epoch, true)
			} else {
				u, err = s.CommitEpochAsync(b, epoch, true)
			}
			if err == nil && u == nil {
				err = errors.New("no upload: the checkpoint did not flush in the background")
			}
			done <- err
		}()
		return done
	}
	if err := <-commit(TableMV, 1); err != nil { // its flush is held
		t.Fatal(err)
	}
	select {
	case err := <-commit(TableUpstream, 2):
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream's checkpoint waited for the creating job's flush, in another group")
	}
	second := commit(TableMV, 2)
	select {
	case err := <-second:
		t.Fatalf("the creating job's second checkpoint committed (err %v) while its group's previous flush was held", err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}

// heldFS holds every write to an sstable under dir until release is closed.
type heldFS struct {
	vfs.FS
	dir     string
	release chan struct{}
}

func (fs *heldFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !strings.HasPrefix(name, fs.dir) || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return heldFile{File: f, release: fs.release}, nil
}

type heldFile struct {
	vfs.File
	release chan struct{}
}

func (f heldFile) Write(p []byte) (int, error) {
	<-f.release
	return f.File.Write(p)
}
