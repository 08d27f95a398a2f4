// The compatibility matrix's kafka-go scenario: every codec; kafka-go has no
// idempotent producer, no transactions, no KIP-848 and no share groups.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	r "queen.example/compat/report"
)

var (
	bootstrap, prefix = r.Args()
	topic             = prefix + "-records"
	group             = prefix + "-group"
	produced          = 0
	ctx               = context.Background()
	client            = &kafka.Client{Addr: kafka.TCP(bootstrap), Timeout: 30 * time.Second}
)

var codecs = map[string]kafka.Compression{"none": 0, "gzip": kafka.Gzip, "snappy": kafka.Snappy, "lz4": kafka.Lz4, "zstd": kafka.Zstd}

// member reads and commits in the background until stopped; seen is read under mu.
type member struct {
	reader *kafka.Reader
	cancel context.CancelFunc
	done   chan struct{}
	mu     *sync.Mutex
	seen   map[string]bool
}

func startMember(mu *sync.Mutex, seen map[string]bool) *member {
	reader := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, GroupID: group, Topic: topic, StartOffset: kafka.FirstOffset,
		HeartbeatInterval: 500 * time.Millisecond, SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second, MaxWait: 200 * time.Millisecond})
	c, cancel := context.WithCancel(ctx)
	m := &member{reader: reader, cancel: cancel, done: make(chan struct{}), mu: mu, seen: seen}
	go func() {
		defer close(m.done)
		for {
			msg, err := reader.FetchMessage(c)
			if err != nil {
				return
			}
			mu.Lock()
			seen[fmt.Sprintf("%d:%d", msg.Partition, msg.Offset)] = true
			mu.Unlock()
			_ = reader.CommitMessages(c, msg)
		}
	}()
	return m
}

func (m *member) stop() {
	m.cancel()
	<-m.done
	_ = m.reader.Close()
}

// assignment answers the partitions each member of the group holds, from DescribeGroups.
func assignment() ([]int, error) {
	resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(resp.Groups) != 1 {
		return nil, fmt.Errorf("DescribeGroups: %v (%d groups)", err, len(resp.Groups))
	}
	var held []int
	for _, m := range resp.Groups[0].Members {
		n := 0
		for _, t := range m.MemberAssignments.Topics {
			if t.Topic == topic {
				n += len(t.Partitions)
			}
		}
		held = append(held, n)
	}
	return held, nil
}

func main() {
	r.Step("create-topic", func() (string, error) {
		resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: r.Partitions, ReplicationFactor: 1}}})
		if err == nil {
			err = resp.Errors[topic]
		}
		return fmt.Sprintf("%d partitions", r.Partitions), err
	})
	for _, codec := range r.Codecs {
		r.Step("produce-"+codec, func() (string, error) {
			w := &kafka.Writer{Addr: kafka.TCP(bootstrap), Topic: topic, Balancer: &kafka.Hash{}, Compression: codecs[codec], RequiredAcks: kafka.RequireAll, BatchTimeout: 10 * time.Millisecond}
			defer w.Close()
			msgs := make([]kafka.Message, r.PerCodec)
			for i := range msgs {
				msgs[i] = kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("%s-%d", codec, i))}
			}
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				return "", err
			}
			produced += r.PerCodec
			return fmt.Sprintf("%d keyed records, acks=all (kafka-go has no idempotent producer)", r.PerCodec), nil
		})
	}
	groupSteps()
	r.Step("list-offsets", listOffsets)
	r.Unsupported("transactions", "kafka-go has no transactional producer")
	r.Unsupported("kip848", "kafka-go speaks only the classic group protocol")
	r.Unsupported("share-group", "kafka-go has no share consumer")
}

func groupSteps() {
	var mu sync.Mutex
	seen := map[string]bool{}
	a, b := startMember(&mu, seen), startMember(&mu, seen)
	defer a.stop()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	var held []int
	r.Step("group-of-two", func() (string, error) {
		err := r.WaitUntil(60*time.Second, func() string {
			return fmt.Sprintf("both members holding one partition and all %d records (held %v; saw %d)", produced, held, count())
		}, nil, func() bool {
			held, _ = assignment()
			return fmt.Sprint(held) == "[1 1]" && count() == produced
		})
		return fmt.Sprintf("%d records between two members, committed", produced), err
	})
	r.Step("member-leaves", func() (string, error) {
		b.stop()
		err := r.WaitUntil(60*time.Second, func() string { return fmt.Sprintf("the remaining member to hold both partitions (held %v)", held) },
			nil, func() bool { held, _ = assignment(); return fmt.Sprint(held) == "[2]" })
		return "the remaining member took both partitions", err
	})
	r.Step("describe-group", func() (string, error) {
		resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		if err != nil {
			return "", err
		}
		g := resp.Groups[0]
		if err := r.Check(g.GroupState == "Stable" && len(g.Members) == 1, "state %s, %d members", g.GroupState, len(g.Members)); err != nil {
			return "", err
		}
		offsets, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1}}})
		if err != nil {
			return "", err
		}
		committed := int64(0)
		for _, p := range offsets.Topics[topic] {
			committed += p.CommittedOffset
		}
		return fmt.Sprintf("Stable, 1 member, committed %d", committed), r.Check(committed == int64(produced), "committed offsets add up to %d, not %d", committed, produced)
	})
}

func listOffsets() (string, error) {
	var asks []kafka.OffsetRequest
	for p := 0; p < r.Partitions; p++ {
		asks = append(asks, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
	}
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: asks}})
	if err != nil {
		return "", err
	}
	low, high := int64(0), int64(0)
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return "", p.Error
		}
		low, high = low+p.FirstOffset, high+p.LastOffset
	}
	return fmt.Sprintf("earliest 0, latest %d", high), r.Check(low == 0 && high == int64(produced), "earliest %d, latest %d; expected 0 and %d", low, high, produced)
}
