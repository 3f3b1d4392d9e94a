package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       Profile // checked when wantErr is ""
		wantErr    string  // substring naming the field and the reason
	}{
		{
			name: "valid",
			json: `{"name":"nvme","version":2,"fs":"mem","write_bandwidth":"1.5GiB","sync_latency":"100us","block_cache":"8MiB","memtable":"32MiB","cpus":1,"nightly":true}`,
			want: Profile{Name: "nvme", Version: 2, FS: FSMem, WriteBandwidth: 3 << 29, SyncLatency: 100 * time.Microsecond, SyncLatencyP99: 100 * time.Microsecond,
				BlockCache: 8 << 20, MemTable: 32 << 20, CPUs: 1, Nightly: true, Source: "t"},
		},
		{
			name: "defaults",
			json: `{"name":"d","version":1,"fs":"disk","dir":"/scratch"}`,
			want: Profile{Name: "d", Version: 1, FS: FSDisk, Dir: "/scratch", BlockCache: 64 << 20, MemTable: 64 << 20, Source: "t"},
		},
		{name: "allow_tmpfs on mem", json: `{"name":"x","version":1,"fs":"mem","allow_tmpfs":true}`, wantErr: `allow_tmpfs "true": only a "disk" profile`},
		{name: "unknown field", json: `{"name":"x","version":1,"fs":"mem","speed":"1MiB"}`, wantErr: `unknown field "speed"`},
		{name: "negative bandwidth", json: `{"name":"x","version":1,"fs":"mem","write_bandwidth":"-5MiB"}`, wantErr: `write_bandwidth "-5MiB": must be ≥ 0`},
		{name: "bad size", json: `{"name":"x","version":1,"fs":"mem","block_cache":"lots"}`, wantErr: `block_cache "lots": not a size`},
		{name: "zero cache", json: `{"name":"x","version":1,"fs":"mem","block_cache":"0"}`, wantErr: `block_cache "0": must be > 0`},
		{name: "tiny memtable", json: `{"name":"x","version":1,"fs":"mem","memtable":"4KiB"}`, wantErr: `memtable "4KiB": must be ≥ 1MiB`},
		{name: "bad latency", json: `{"name":"x","version":1,"fs":"mem","sync_latency":"1 ms"}`, wantErr: `sync_latency "1 ms": not a duration`},
		{name: "negative latency", json: `{"name":"x","version":1,"fs":"mem","sync_latency":"-1ms"}`, wantErr: `sync_latency "-1ms": not a duration ≥ 0`},
		{
			name: "sync tail",
			json: `{"name":"ebs","version":1,"fs":"mem","sync_latency":"1ms","sync_latency_p99":"6ms"}`,
			want: Profile{Name: "ebs", Version: 1, FS: FSMem, SyncLatency: time.Millisecond, SyncLatencyP99: 6 * time.Millisecond,
				BlockCache: 64 << 20, MemTable: 64 << 20, Source: "t"},
		},
		{
			name: "read and operation limits",
			json: `{"name":"vol","version":1,"fs":"mem","read_bandwidth":"250MiB","iops":3000}`,
			want: Profile{Name: "vol", Version: 1, FS: FSMem, ReadBandwidth: 250 << 20, IOPS: 3000,
				BlockCache: 64 << 20, MemTable: 64 << 20, Source: "t"},
		},
		{
			name: "shared bandwidth",
			json: `{"name":"vol","version":1,"fs":"mem","bandwidth":"125MiB"}`,
			want: Profile{Name: "vol", Version: 1, FS: FSMem, Bandwidth: 125 << 20, BlockCache: 64 << 20, MemTable: 64 << 20, Source: "t"},
		},
		{name: "shared and split bandwidth", json: `{"name":"x","version":1,"fs":"mem","bandwidth":"1MiB","write_bandwidth":"1MiB"}`, wantErr: `bandwidth "1MiB": reads and writes share it`},
		{name: "negative iops", json: `{"name":"x","version":1,"fs":"mem","iops":-1}`, wantErr: `iops "-1": must be ≥ 0`},
		{name: "bad read bandwidth", json: `{"name":"x","version":1,"fs":"mem","read_bandwidth":"fast"}`, wantErr: `read_bandwidth "fast": not a size`},
		{name: "p99 below median", json: `{"name":"x","version":1,"fs":"mem","sync_latency":"2ms","sync_latency_p99":"1ms"}`, wantErr: `sync_latency_p99 "1ms": must be ≥ sync_latency ("2ms")`},
		{name: "p99 without median", json: `{"name":"x","version":1,"fs":"mem","sync_latency_p99":"1ms"}`, wantErr: `sync_latency_p99 "1ms": must be ≥ sync_latency (""), which must be set`},
		{name: "bad p99", json: `{"name":"x","version":1,"fs":"mem","sync_latency":"1ms","sync_latency_p99":"6"}`, wantErr: `sync_latency_p99 "6": not a duration`},
		{
			name: "object store",
			json: `{"name":"blob","version":1,"fs":"mem","object_store":true,"put_latency":"80ms","put_latency_p99":"200ms","upload_bandwidth":"100MiB"}`,
			want: Profile{Name: "blob", Version: 1, FS: FSMem, ObjectStore: true, PutLatency: 80 * time.Millisecond, PutLatencyP99: 200 * time.Millisecond,
				UploadBandwidth: 100 << 20, BlockCache: 64 << 20, MemTable: 64 << 20, Source: "t"},
		},
		{name: "object store without put latency", json: `{"name":"x","version":1,"fs":"mem","object_store":true}`, wantErr: `put_latency "": an object store needs`},
		{name: "put latency without object store", json: `{"name":"x","version":1,"fs":"mem","put_latency":"80ms"}`, wantErr: `object_store "false": put_latency`},
		{name: "object store with a disk's sync", json: `{"name":"x","version":1,"fs":"mem","object_store":true,"put_latency":"80ms","sync_latency":"1ms"}`, wantErr: `object_store "true": an object store runs on fs "mem"`},
		{name: "put p99 below median", json: `{"name":"x","version":1,"fs":"mem","object_store":true,"put_latency":"80ms","put_latency_p99":"10ms"}`, wantErr: `put_latency_p99 "10ms": must be ≥ put_latency ("80ms")`},
		{name: "bad upload bandwidth", json: `{"name":"x","version":1,"fs":"mem","object_store":true,"put_latency":"80ms","upload_bandwidth":"x"}`, wantErr: `upload_bandwidth "x": not a size`},
		{
			name: "checkpointed engine-like LSM",
			json: `{"name":"eng","version":1,"fs":"mem","checkpointed":true,"lsm":{"l0_compaction_threshold":4,"l0_stop_writes_threshold":128,"compaction_concurrency":4,"lbase_max_bytes":"512MiB","target_file_size":"32MiB"},"compaction":"offloaded"}`,
			want: Profile{Name: "eng", Version: 1, FS: FSMem, Checkpointed: true, Compaction: CompactionOffloaded,
				LSM:        LSM{L0CompactionThreshold: 4, L0StopWritesThreshold: 128, CompactionConcurrency: 4, LBaseMaxBytes: 512 << 20, TargetFileSize: 32 << 20},
				BlockCache: 64 << 20, MemTable: 64 << 20, Source: "t"},
		},
		{
			name: "engine's blocks and compression",
			json: `{"name":"eng","version":1,"fs":"mem","lsm":{"block_size":"64KiB","compression":"none"}}`,
			want: Profile{Name: "eng", Version: 1, FS: FSMem, LSM: LSM{BlockSize: 64 << 10, Compression: "none"}, BlockCache: 64 << 20, MemTable: 64 << 20, Source: "t"},
		},
		{name: "unknown compression", json: `{"name":"x","version":1,"fs":"mem","lsm":{"compression":"lz4"}}`, wantErr: `lsm.compression "lz4": must be one of none, snappy, zstd, minlz`},
		{name: "bad block size", json: `{"name":"x","version":1,"fs":"mem","lsm":{"block_size":"big"}}`, wantErr: `lsm.block_size "big": not a size`},
		{name: "checkpointed with a sync", json: `{"name":"x","version":1,"fs":"mem","checkpointed":true,"sync_latency":"1ms"}`, wantErr: `checkpointed "true": a checkpointed store has no WAL`},
		{name: "bad compaction", json: `{"name":"x","version":1,"fs":"mem","compaction":"remote"}`, wantErr: `compaction "remote": must be "local", "offloaded" or "serial"`},
		{name: "serial without checkpoints", json: `{"name":"x","version":1,"fs":"mem","compaction":"serial"}`, wantErr: `serial compactions run at checkpoints`},
		{name: "groups with a WAL", json: `{"name":"x","version":1,"fs":"mem","compaction_groups":true}`, wantErr: `compaction groups need a store without a WAL`},
		{name: "negative lsm knob", json: `{"name":"x","version":1,"fs":"mem","lsm":{"compaction_concurrency":-1}}`, wantErr: `lsm "`},
		{name: "stop below compaction", json: `{"name":"x","version":1,"fs":"mem","lsm":{"l0_compaction_threshold":8,"l0_stop_writes_threshold":7}}`, wantErr: `lsm.l0_stop_writes_threshold "7": must be at least l0_compaction_threshold`},
		{name: "stop below the default compaction", json: `{"name":"x","version":1,"fs":"mem","lsm":{"l0_stop_writes_threshold":3}}`, wantErr: `lsm.l0_stop_writes_threshold "3": must be at least l0_compaction_threshold (default 4)`},
		{name: "bad lbase", json: `{"name":"x","version":1,"fs":"mem","lsm":{"lbase_max_bytes":"big"}}`, wantErr: `lsm.lbase_max_bytes "big": not a size`},
		{name: "unknown lsm knob", json: `{"name":"x","version":1,"fs":"mem","lsm":{"l1_size":"1MiB"}}`, wantErr: `unknown field "l1_size"`},
		{name: "bad fs", json: `{"name":"x","version":1,"fs":"tape"}`, wantErr: `fs "tape"`},
		{name: "dir on mem", json: `{"name":"x","version":1,"fs":"mem","dir":"/d"}`, wantErr: `dir "/d"`},
		{name: "no version", json: `{"name":"x","fs":"mem"}`, wantErr: `version "0"`},
		{name: "bad name", json: `{"name":"My Disk","version":1,"fs":"mem"}`, wantErr: `name "My Disk"`},
		{name: "negative cpus", json: `{"name":"x","version":1,"fs":"mem","cpus":-1}`, wantErr: `cpus "-1"`},
		{name: "two objects", json: `{"name":"x","version":1,"fs":"mem"} {}`, wantErr: "more than one"},
		{name: "not json", json: `name: x`, wantErr: "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.json), "t")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p != tc.want {
				t.Errorf("got  %+v\nwant %+v", p, tc.want)
			}
		})
	}
}

func TestBuiltin(t *testing.T) {
	got := map[string]Profile{}
	for _, p := range Builtin() {
		got[p.Name] = p
	}
	for _, name := range []string{"mem", "ssd", "gp3", "slow-disk", "small-cache"} {
		if _, ok := got[name]; !ok {
			t.Errorf("built-in profile %s missing", name)
		}
	}
	if gp3 := got["gp3"]; gp3.Bandwidth != 125<<20 || gp3.SyncLatency != time.Millisecond || gp3.SyncLatencyP99 != 6*time.Millisecond || gp3.WriteBandwidth != 0 || gp3.ReadBandwidth != 0 || gp3.IOPS != 3000 || !gp3.Simulated() {
		t.Errorf("gp3 = %+v, want 125MiB/s shared by reads and writes, 3000 IOPS, syncs of 1ms median and 6ms p99, simulated", gp3)
	}
	if d := got["gp3"].Disk(); !strings.Contains(d, "simulated") {
		t.Errorf("gp3 disk %q does not say it is simulated", d)
	}
	if got["mem"].Simulated() || got["ssd"].Simulated() {
		t.Error("mem and ssd are not simulated")
	}
	if h := got["hummock"]; !h.Checkpointed || h.Simulated() || h.LSM != (LSM{}) || !strings.Contains(h.Disk(), "no WAL") {
		t.Errorf("hummock = %+v (disk %q), want checkpointed, not simulated, Pebble's LSM, and its disk saying no WAL", h, h.Disk())
	}
	// The engine's compaction config (RisingWave 3.2.0-alpha; the README cites where).
	engine := LSM{L0CompactionThreshold: 4, L0StopWritesThreshold: 128, CompactionConcurrency: 4, LBaseMaxBytes: 512 << 20, TargetFileSize: 32 << 20,
		BlockSize: 64 << 10, Compression: "none"}
	if e := got["engine"]; !e.Checkpointed || e.LSM != engine || e.Compaction != CompactionOffloaded {
		t.Errorf("engine = %+v, want checkpointed, LSM %+v, compaction offloaded", e, engine)
	}
}

func TestSetFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine := write("mine.json", `{"name":"mine","version":1,"fs":"mem","sync_latency":"2ms"}`)
	s, err := NewSet([]string{mine})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Get("mine"); err != nil || p.SyncLatency != 2*time.Millisecond || p.Source != mine {
		t.Errorf("Get(mine) = %+v, %v", p, err)
	}
	if _, err := s.Get("nope"); err == nil || !strings.Contains(err.Error(), "mem") {
		t.Errorf("unknown profile: err = %v, want the known names", err)
	}
	if _, err := NewSet([]string{filepath.Join(dir, "missing.json")}); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: err = %v", err)
	}
	clash := write("clash.json", `{"name":"gp3","version":1,"fs":"mem"}`)
	if _, err := NewSet([]string{clash}); err == nil || !strings.Contains(err.Error(), "taken by built-in") {
		t.Errorf("clashing name: err = %v", err)
	}
}
