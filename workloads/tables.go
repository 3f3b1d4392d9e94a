package workloads

import (
	"fmt"
	"strings"

	"github.com/brianvoe/gofakeit/v7"

	"github.com/backfill-bench/backfill-bench/bench/row"
	"github.com/backfill-bench/backfill-bench/bench/source"
)

// poolSize is the number of pre-generated values per column: gofakeit runs when a
// workload is built, never per row, so generation stays off a run's hot path.
const poolSize = 1024

// pools holds pre-generated values, drawn from gofakeit with the workload's seed.
type pools map[string][]string

func (p pools) pick(col string, h uint64) string {
	v := p[col]
	return v[h%uint64(len(v))]
}

// table is one named schema with its row generator.
type table struct {
	name, desc string
	schema     row.Schema
	fill       func(f *gofakeit.Faker) pools
	// row builds the row of key pk at (h1, h2), two independent hashes of
	// (seed, id, version).
	row func(dst row.Row, p pools, pk int64, h1, h2 uint64) row.Row
	// keyOf inverts row's primary key: the pk argument that gives a row these primary
	// key datums (nil: the one pk column is that integer). stride is the distance
	// in that integer between a key and the next one in primary-key order (0: 1).
	keyOf  func(pk []row.Datum) (int64, bool)
	stride int64
}

func gen(f *gofakeit.Faker, fn func() string) []string {
	out := make([]string, poolSize)
	for i := range out {
		out[i] = fn()
	}
	return out
}

// baseTime is the start of generated timestamps: 2026-01-01T00:00:00Z in µs.
const baseTime = 1_767_225_600_000_000

func ts(h uint64) row.Datum { return row.TS(baseTime + int64(h%(365*86_400_000_000))) }

var tables = []*table{
	{
		name: "person", desc: "Nexmark person: id pk, name, email, credit card, city, state, date_time, extra",
		schema: row.Schema{
			Columns: []row.Column{{Name: "id", Kind: row.Int64}, {Name: "name", Kind: row.String}, {Name: "email_address", Kind: row.String},
				{Name: "credit_card", Kind: row.String}, {Name: "city", Kind: row.String}, {Name: "state", Kind: row.String},
				{Name: "date_time", Kind: row.Timestamp}, {Name: "extra", Kind: row.String}},
			PK: []int{0}, DistKey: []int{0},
		},
		fill: func(f *gofakeit.Faker) pools {
			return pools{
				"name": gen(f, f.Name), "email": gen(f, f.Email),
				"card": gen(f, func() string { return f.CreditCardNumber(nil) }),
				"city": gen(f, f.City), "state": gen(f, f.StateAbr), "extra": gen(f, func() string { return f.LoremIpsumSentence(4) }),
			}
		},
		row: func(dst row.Row, p pools, pk int64, h1, h2 uint64) row.Row {
			return append(dst[:0], row.I64(pk), row.Str(p.pick("name", h1)), row.Str(p.pick("email", h1>>10)),
				row.Str(p.pick("card", h1>>20)), row.Str(p.pick("city", h1>>30)), row.Str(p.pick("state", h1>>40)),
				ts(h2), row.Str(p.pick("extra", h1>>50)))
		},
	},
	{
		name: "auction", desc: "Nexmark auction: id pk, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra",
		schema: row.Schema{
			Columns: []row.Column{{Name: "id", Kind: row.Int64}, {Name: "item_name", Kind: row.String}, {Name: "description", Kind: row.String},
				{Name: "initial_bid", Kind: row.Int64}, {Name: "reserve", Kind: row.Int64}, {Name: "date_time", Kind: row.Timestamp},
				{Name: "expires", Kind: row.Timestamp}, {Name: "seller", Kind: row.Int64}, {Name: "category", Kind: row.Int64}, {Name: "extra", Kind: row.String}},
			PK: []int{0}, DistKey: []int{0},
		},
		fill: func(f *gofakeit.Faker) pools {
			return pools{"item": gen(f, f.ProductName), "desc": gen(f, func() string { return f.Sentence(8) }), "extra": gen(f, func() string { return f.LoremIpsumSentence(4) })}
		},
		row: func(dst row.Row, p pools, pk int64, h1, h2 uint64) row.Row {
			bid := int64(h1%100_000) + 1
			start := ts(h2)
			return append(dst[:0], row.I64(pk), row.Str(p.pick("item", h1)), row.Str(p.pick("desc", h1>>10)),
				row.I64(bid), row.I64(bid+int64(h1>>20)%50_000), start, row.TS(start.I+int64(h2>>40)%86_400_000_000),
				row.I64(1000+int64(h1>>30)%100_000), row.I64(10+int64(h1>>50)%6), row.Str(p.pick("extra", h2>>20)))
		},
	},
	{
		name: "bid", desc: "Nexmark bid: hidden _row_id pk, auction, bidder, price, channel, url, date_time, extra",
		schema: row.Schema{
			Columns: []row.Column{{Name: "_row_id", Kind: row.Int64}, {Name: "auction", Kind: row.Int64}, {Name: "bidder", Kind: row.Int64},
				{Name: "price", Kind: row.Int64}, {Name: "channel", Kind: row.String}, {Name: "url", Kind: row.String},
				{Name: "date_time", Kind: row.Timestamp}, {Name: "extra", Kind: row.String}},
			PK: []int{0}, DistKey: []int{0},
		},
		fill: func(f *gofakeit.Faker) pools {
			return pools{"channel": {"Google", "Facebook", "Baidu", "Apple"}, "url": gen(f, f.URL), "extra": gen(f, func() string { return f.LoremIpsumSentence(3) })}
		},
		row: func(dst row.Row, p pools, pk int64, h1, h2 uint64) row.Row {
			return append(dst[:0], row.I64(pk), row.I64(1000+int64(h1%100_000)), row.I64(1000+int64(h1>>20)%1_000_000),
				row.I64(1+int64(h1>>40)%10_000_000), row.Str(p.pick("channel", h2)), row.Str(p.pick("url", h2>>8)),
				ts(h2>>20), row.Str(p.pick("extra", h1>>50)))
		},
	},
	{
		name: "narrow", desc: "a few integer columns: id pk, a, b, c",
		schema: row.Schema{
			Columns: []row.Column{{Name: "id", Kind: row.Int64}, {Name: "a", Kind: row.Int64}, {Name: "b", Kind: row.Int64}, {Name: "c", Kind: row.Int64}},
			PK:      []int{0}, DistKey: []int{0},
		},
		fill: func(*gofakeit.Faker) pools { return pools{} },
		row: func(dst row.Row, _ pools, pk int64, h1, h2 uint64) row.Row {
			return append(dst[:0], row.I64(pk), row.I64(int64(h1>>1)), row.I64(int64(h2%1_000_000)), row.I64(int64(h1%1000)))
		},
	},
	{
		name: "wide", desc: "~1 KiB rows: id pk, 8 integers, 16 text columns",
		schema: func() row.Schema {
			s := row.Schema{Columns: []row.Column{{Name: "id", Kind: row.Int64}}, PK: []int{0}, DistKey: []int{0}}
			for i := 0; i < 8; i++ {
				s.Columns = append(s.Columns, row.Column{Name: fmt.Sprintf("n%d", i), Kind: row.Int64})
			}
			for i := 0; i < 16; i++ {
				s.Columns = append(s.Columns, row.Column{Name: fmt.Sprintf("t%d", i), Kind: row.String})
			}
			return s
		}(),
		fill: func(f *gofakeit.Faker) pools {
			return pools{"text": gen(f, func() string {
				// About 60 bytes per text column.
				s := f.Sentence(10)
				for len(s) < 56 {
					s += " " + f.Word()
				}
				return strings.TrimSpace(s[:min(len(s), 64)])
			})}
		},
		row: func(dst row.Row, p pools, pk int64, h1, h2 uint64) row.Row {
			dst = append(dst[:0], row.I64(pk))
			for i := 0; i < 8; i++ {
				dst = append(dst, row.I64(int64(source.Mix64(h1+uint64(i))>>1)))
			}
			for i := 0; i < 16; i++ {
				dst = append(dst, row.Str(p.pick("text", source.Mix64(h2+uint64(i)))))
			}
			return dst
		},
	},
	groups,
}

// The group key of the groups table: channel, window_start, auction. Channels and
// windows come from fixed lists, so that a key maps back to its id; the channel
// names include a prefix of another and an embedded zero byte, which the
// memcomparable encoding must order right.
var (
	groupChannels = []string{"Apple", "Apple\x00TV", "App", "Baidu", "Bing", "DuckDuckGo", "Facebook", "Google",
		"Instagram", "LinkedIn", "Naver", "Pinterest", "Reddit", "TikTok", "Yahoo", "Yandex"}
	groupChannelIndex = func() map[string]int64 {
		m := map[string]int64{}
		for i, c := range groupChannels {
			m[c] = int64(i)
		}
		return m
	}()
)

const (
	groupWindows    = 48                           // hourly windows
	groupWindowSize = 3_600_000_000                // µs
	groupKeys       = groupWindows * 16            // (channel, window) pairs: the distribution keys
	groupBaseTime   = baseTime + 30*86_400_000_000 // the first window
)

// groups is shaped like a grouped MV's table (Nexmark q5-like: bids per auction per
// channel and hourly window): its primary key is the group key (channel,
// window_start DESC, auction), its distribution key the strict prefix (channel,
// window_start), as a streaming engine keys an aggregation's result by its group
// columns and distributes it by a prefix of them.
var groups = &table{
	name: "groups", desc: "grouped-MV shape: pk (channel asc, window_start desc, auction asc), distribution key (channel, window_start); bids, max_price, last_bidder",
	schema: row.Schema{
		Columns: []row.Column{{Name: "channel", Kind: row.String}, {Name: "window_start", Kind: row.Timestamp}, {Name: "auction", Kind: row.Int64},
			{Name: "bids", Kind: row.Int64}, {Name: "max_price", Kind: row.Int64}, {Name: "last_bidder", Kind: row.Int64}},
		PK: []int{0, 1, 2}, PKDesc: []bool{false, true, false}, DistKey: []int{0, 1},
	},
	fill: func(*gofakeit.Faker) pools { return pools{} },
	// pk's low part picks the (channel, window) group, the rest the auction: ids in
	// insertion order fill every group a row at a time, so inserts land all over
	// the key space, ahead of and behind a scan.
	row: func(dst row.Row, _ pools, pk int64, h1, h2 uint64) row.Row {
		u := uint64(pk)
		g, auction := int64(u%groupKeys), int64(u/groupKeys)
		return append(dst[:0], row.Str(groupChannels[g/groupWindows]), row.TS(groupBaseTime+g%groupWindows*groupWindowSize), row.I64(auction),
			row.I64(1+int64(h1%500)), row.I64(1+int64(h1>>20)%10_000_000), row.I64(1000+int64(h2%1_000_000)))
	},
	keyOf: func(pk []row.Datum) (int64, bool) {
		c, ok := groupChannelIndex[pk[0].S]
		w := (pk[1].I - groupBaseTime) / groupWindowSize
		if !ok || pk[1].I < groupBaseTime || w >= groupWindows || (pk[1].I-groupBaseTime)%groupWindowSize != 0 {
			return 0, false
		}
		return int64(uint64(pk[2].I)*groupKeys + uint64(c*groupWindows+w)), true
	},
	stride: groupKeys,
}

func findTable(name string) *table {
	for _, t := range tables {
		if t.name == name {
			return t
		}
	}
	return nil
}

func tableNames() []string {
	var n []string
	for _, t := range tables {
		n = append(n, t.name)
	}
	return n
}
