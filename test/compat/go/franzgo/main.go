// The compatibility matrix's franz-go scenario: every codec, transactions,
// KIP-848 (ServerSideBalancer) and share groups (KIP-932).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	r "queen.example/compat/report"
)

var (
	bootstrap, prefix = r.Args()
	topic             = prefix + "-records"
	group             = prefix + "-group"
	produced          = 0
	ctx               = context.Background()
)

func client(opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ClientID(prefix)}, opts...)...)
	if err != nil {
		panic(err)
	}
	return cl
}

var codecs = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

func produce(target string, codec kgo.CompressionCodec, values []string, opts ...kgo.Opt) error {
	cl := client(append([]kgo.Opt{kgo.ProducerBatchCompression(codec)}, opts...)...)
	defer cl.Close()
	records := make([]*kgo.Record, len(values))
	for i, v := range values {
		records[i] = &kgo.Record{Topic: target, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(v)}
	}
	return cl.ProduceSync(ctx, records...).FirstErr()
}

// member is a group member whose polls run in the caller; it commits each record it reads.
type member struct {
	cl   *kgo.Client
	mu   sync.Mutex
	held map[int32]bool
	seen map[string]bool
}

func newMember(groupID string, opts ...kgo.Opt) *member {
	m := &member{held: map[int32]bool{}, seen: map[string]bool{}}
	update := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range parts[topic] {
				if add {
					m.held[p] = true
				} else {
					delete(m.held, p)
				}
			}
		}
	}
	m.cl = client(append([]kgo.Opt{kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.OnPartitionsAssigned(update(true)),
		kgo.OnPartitionsRevoked(update(false)), kgo.OnPartitionsLost(update(false))}, opts...)...)
	return m
}

func (m *member) poll() {
	pollCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	fetches := m.cl.PollFetches(pollCtx)
	records := fetches.Records()
	m.mu.Lock()
	for _, rec := range records {
		m.seen[fmt.Sprintf("%d:%d", rec.Partition, rec.Offset)] = true
	}
	m.mu.Unlock()
	if len(records) > 0 {
		_ = m.cl.CommitRecords(ctx, records...)
	}
}

func (m *member) count() (int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.held), len(m.seen)
}

func main() {
	adm := kadm.NewClient(client())
	r.Step("create-topic", func() (string, error) {
		resp, err := adm.CreateTopic(ctx, r.Partitions, 1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		return fmt.Sprintf("%d partitions", r.Partitions), err
	})
	for _, codec := range r.Codecs {
		r.Step("produce-"+codec, func() (string, error) {
			values := make([]string, r.PerCodec)
			for i := range values {
				values[i] = fmt.Sprintf("%s-%d", codec, i)
			}
			if err := produce(topic, codecs[codec], values); err != nil {
				return "", err
			}
			produced += r.PerCodec
			return fmt.Sprintf("%d keyed records, idempotent", r.PerCodec), nil
		})
	}
	groupSteps(adm)
	r.Step("list-offsets", func() (string, error) { return listOffsets(adm) })
	r.Step("transactions", func() (string, error) { return transactions(adm) })
	r.Step("kip848", func() (string, error) { return kip848(adm) })
	r.Step("share-group", func() (string, error) { return shareGroup(adm) })
}

func groupSteps(adm *kadm.Client) {
	a, b := newMember(group), newMember(group)
	defer a.cl.Close()
	r.Step("group-of-two", func() (string, error) {
		err := r.WaitUntil(60*time.Second, func() string {
			ha, sa := a.count()
			hb, sb := b.count()
			return fmt.Sprintf("both members holding one partition and all %d records (held %d, %d; saw %d)", produced, ha, hb, sa+sb)
		}, func() { a.poll(); b.poll() }, func() bool {
			ha, sa := a.count()
			hb, sb := b.count()
			return ha == 1 && hb == 1 && sa+sb == produced
		})
		return fmt.Sprintf("%d records between two members, committed", produced), err
	})
	r.Step("member-leaves", func() (string, error) {
		b.cl.Close()
		err := r.WaitUntil(60*time.Second, func() string {
			h, _ := a.count()
			return fmt.Sprintf("the remaining member to hold both partitions (holds %d)", h)
		},
			a.poll, func() bool { h, _ := a.count(); return h == r.Partitions })
		return "the remaining member took both partitions", err
	})
	r.Step("describe-group", func() (string, error) {
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return "", err
		}
		g := described[group]
		if err := r.Check(g.State == "Stable" && len(g.Members) == 1, "state %s, %d members", g.State, len(g.Members)); err != nil {
			return "", err
		}
		offsets, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return "", err
		}
		committed := int64(0)
		offsets.Each(func(o kadm.OffsetResponse) { committed += o.At })
		return fmt.Sprintf("Stable, 1 member, committed %d", committed), r.Check(committed == int64(produced), "committed offsets add up to %d, not %d", committed, produced)
	})
}

func listOffsets(adm *kadm.Client) (string, error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return "", err
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return "", err
	}
	low, high := int64(0), int64(0)
	starts.Each(func(o kadm.ListedOffset) { low += o.Offset })
	ends.Each(func(o kadm.ListedOffset) { high += o.Offset })
	return fmt.Sprintf("earliest 0, latest %d", high), r.Check(low == 0 && high == int64(produced), "earliest %d, latest %d; expected 0 and %d", low, high, produced)
}

func transactions(adm *kadm.Client) (string, error) {
	txTopic := prefix + "-tx"
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, txTopic); err != nil {
		return "", err
	}
	cl := client(kgo.TransactionalID(prefix + "-tx"))
	defer cl.Close()
	for _, tx := range []struct {
		values []string
		commit kgo.TransactionEndTry
	}{{[]string{"c0", "c1", "c2"}, kgo.TryCommit}, {[]string{"a0", "a1"}, kgo.TryAbort}, {[]string{"end"}, kgo.TryCommit}} {
		if err := cl.BeginTransaction(); err != nil {
			return "", err
		}
		for _, v := range tx.values {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: txTopic, Key: []byte("k"), Value: []byte(v)}).FirstErr(); err != nil {
				return "", err
			}
		}
		if err := cl.EndTransaction(ctx, tx.commit); err != nil {
			return "", err
		}
	}
	reader := client(kgo.ConsumeTopics(txTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer reader.Close()
	var read []string
	err := r.WaitUntil(60*time.Second, func() string { return fmt.Sprintf("the last committed record (read %v)", read) }, func() {
		pollCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		reader.PollFetches(pollCtx).EachRecord(func(rec *kgo.Record) { read = append(read, string(rec.Value)) })
	}, func() bool { return len(read) > 0 && read[len(read)-1] == "end" })
	if err != nil {
		return "", err
	}
	return "committed read back, aborted skipped (read_committed)", r.Check(fmt.Sprint(read) == "[c0 c1 c2 end]", "read_committed read %v", read)
}

func kip848(adm *kadm.Client) (string, error) {
	groupID := prefix + "-kip848"
	m := newMember(groupID, kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer())
	defer m.cl.Close()
	err := r.WaitUntil(60*time.Second, func() string { _, s := m.count(); return fmt.Sprintf("all %d records (saw %d)", produced, s) },
		m.poll, func() bool { _, s := m.count(); return s == produced })
	if err != nil {
		return "", err
	}
	// The records alone do not show the protocol: franz-go falls back to the classic one silently.
	req := kmsg.NewPtrListGroupsRequest()
	req.TypesFilter = []string{"consumer"}
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		return "", err
	}
	for _, g := range resp.Groups {
		if g.Group == groupID {
			return fmt.Sprintf("%d records; the broker lists the group as type consumer", produced), nil
		}
	}
	return "", fmt.Errorf("read all %d records, but the broker does not list the group as a KIP-848 (consumer) group: franz-go fell back to the classic protocol", produced)
}

func shareGroup(adm *kadm.Client) (string, error) {
	shareTopic := prefix + "-share"
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, shareTopic); err != nil {
		return "", err
	}
	cl := client(kgo.ShareGroup(prefix+"-share"), kgo.ConsumeTopics(shareTopic))
	defer cl.Close()
	read := map[string]bool{}
	tick := func() {
		pollCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		cl.PollFetches(pollCtx).EachRecord(func(rec *kgo.Record) { read[string(rec.Value)] = true })
	}
	// A share group starts at the latest offset: produce until the member reads, then the batch it must read whole.
	deadline := time.Now().Add(30 * time.Second)
	for len(read) == 0 && time.Now().Before(deadline) {
		if err := produce(shareTopic, kgo.NoCompression(), []string{"warm-up"}); err != nil {
			return "", err
		}
		for i := 0; i < 5; i++ {
			tick()
		}
	}
	if len(read) == 0 {
		return "", fmt.Errorf("the share consumer read nothing in 30 s")
	}
	values := make([]string, r.PerCodec)
	for i := range values {
		values[i] = fmt.Sprintf("s%d", i)
	}
	if err := produce(shareTopic, kgo.NoCompression(), values); err != nil {
		return "", err
	}
	err := r.WaitUntil(60*time.Second, func() string { return fmt.Sprintf("the %d records (read %v)", r.PerCodec, read) }, tick, func() bool {
		for _, v := range values {
			if !read[v] {
				return false
			}
		}
		return true
	})
	return fmt.Sprintf("%d records acquired and acknowledged", r.PerCodec), err
}
