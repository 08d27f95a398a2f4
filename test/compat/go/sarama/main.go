// The compatibility matrix's Sarama scenario: every codec, transactions; no
// KIP-848 and no share groups.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"
	r "queen.example/compat/report"
)

var (
	bootstrap, prefix = r.Args()
	brokers           = []string{bootstrap}
	topic             = prefix + "-records"
	group             = prefix + "-group"
	produced          = 0
)

func config() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.ClientID = prefix
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	return cfg
}

var codecs = map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}

// member runs a consumer group session in the background; held and seen are read under mu.
type member struct {
	cg     sarama.ConsumerGroup
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	held   int
	seen   map[string]bool
}

func (m *member) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	m.held = len(s.Claims()[topic])
	m.mu.Unlock()
	return nil
}
func (m *member) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (m *member) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		m.mu.Lock()
		m.seen[fmt.Sprintf("%d:%d", msg.Partition, msg.Offset)] = true
		m.mu.Unlock()
		s.MarkMessage(msg, "")
		s.Commit()
	}
	return nil
}

func (m *member) counts() (int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held, len(m.seen)
}

func startMember() *member {
	cfg := config()
	cfg.Consumer.Group.Session.Timeout = 10 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	cg, err := sarama.NewConsumerGroup(brokers, group, cfg)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{cg: cg, cancel: cancel, done: make(chan struct{}), seen: map[string]bool{}}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			_ = cg.Consume(ctx, []string{topic}, m)
		}
	}()
	return m
}

func (m *member) stop() {
	m.cancel()
	<-m.done
	_ = m.cg.Close()
}

func main() {
	admin, err := sarama.NewClusterAdmin(brokers, config())
	if err != nil {
		panic(err)
	}
	defer admin.Close()
	r.Step("create-topic", func() (string, error) {
		return fmt.Sprintf("%d partitions", r.Partitions), admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: r.Partitions, ReplicationFactor: 1}, false)
	})
	for _, codec := range r.Codecs {
		r.Step("produce-"+codec, func() (string, error) {
			cfg := config()
			cfg.Producer.Compression = codecs[codec]
			p, err := sarama.NewSyncProducer(brokers, cfg)
			if err != nil {
				return "", err
			}
			defer p.Close()
			for i := 0; i < r.PerCodec; i++ {
				if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)), Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", codec, i))}); err != nil {
					return "", err
				}
			}
			produced += r.PerCodec
			return fmt.Sprintf("%d keyed records, idempotent", r.PerCodec), nil
		})
	}
	groupSteps(admin)
	r.Step("list-offsets", listOffsets)
	r.Step("transactions", transactions)
	r.Unsupported("kip848", "Sarama speaks only the classic group protocol")
	r.Unsupported("share-group", "Sarama has no share consumer")
}

func groupSteps(admin sarama.ClusterAdmin) {
	a, b := startMember(), startMember()
	defer a.stop()
	r.Step("group-of-two", func() (string, error) {
		err := r.WaitUntil(60*time.Second, func() string {
			ha, sa := a.counts()
			hb, sb := b.counts()
			return fmt.Sprintf("both members holding one partition and all %d records (held %d, %d; saw %d)", produced, ha, hb, sa+sb)
		}, nil, func() bool {
			ha, _ := a.counts()
			hb, _ := b.counts()
			return ha == 1 && hb == 1 && len(union(a, b)) == produced
		})
		return fmt.Sprintf("%d records between two members, committed", produced), err
	})
	r.Step("member-leaves", func() (string, error) {
		b.stop()
		err := r.WaitUntil(60*time.Second, func() string {
			h, _ := a.counts()
			return fmt.Sprintf("the remaining member to hold both partitions (holds %d)", h)
		},
			nil, func() bool { h, _ := a.counts(); return h == r.Partitions })
		return "the remaining member took both partitions", err
	})
	r.Step("describe-group", func() (string, error) {
		described, err := admin.DescribeConsumerGroups([]string{group})
		if err != nil {
			return "", err
		}
		if err := r.Check(len(described) == 1 && described[0].State == "Stable" && len(described[0].Members) == 1, "described %+v", described); err != nil {
			return "", err
		}
		offsets, err := admin.ListConsumerGroupOffsets(group, nil)
		if err != nil {
			return "", err
		}
		committed := int64(0)
		for _, block := range offsets.Blocks[topic] {
			committed += block.Offset
		}
		return fmt.Sprintf("Stable, 1 member, committed %d", committed), r.Check(committed == int64(produced), "committed offsets add up to %d, not %d", committed, produced)
	})
}

func union(ms ...*member) map[string]bool {
	all := map[string]bool{}
	for _, m := range ms {
		m.mu.Lock()
		for k := range m.seen {
			all[k] = true
		}
		m.mu.Unlock()
	}
	return all
}

func listOffsets() (string, error) {
	client, err := sarama.NewClient(brokers, config())
	if err != nil {
		return "", err
	}
	defer client.Close()
	low, high := int64(0), int64(0)
	for p := int32(0); p < r.Partitions; p++ {
		l, err := client.GetOffset(topic, p, sarama.OffsetOldest)
		if err != nil {
			return "", err
		}
		h, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return "", err
		}
		low, high = low+l, high+h
	}
	return fmt.Sprintf("earliest 0, latest %d", high), r.Check(low == 0 && high == int64(produced), "earliest %d, latest %d; expected 0 and %d", low, high, produced)
}

func transactions() (string, error) {
	txTopic := prefix + "-tx"
	admin, err := sarama.NewClusterAdmin(brokers, config())
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if err := admin.CreateTopic(txTopic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		return "", err
	}
	cfg := config()
	cfg.Producer.Transaction.ID = prefix + "-tx"
	p, err := sarama.NewSyncProducer(brokers, cfg)
	if err != nil {
		return "", err
	}
	for _, tx := range []struct {
		values []string
		commit bool
	}{{[]string{"c0", "c1", "c2"}, true}, {[]string{"a0", "a1"}, false}, {[]string{"end"}, true}} {
		if err := p.BeginTxn(); err != nil {
			return "", err
		}
		for _, v := range tx.values {
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: txTopic, Key: sarama.StringEncoder("k"), Value: sarama.StringEncoder(v)}); err != nil {
				return "", err
			}
		}
		if tx.commit {
			err = p.CommitTxn()
		} else {
			err = p.AbortTxn()
		}
		if err != nil {
			return "", err
		}
	}
	_ = p.Close()
	rc := config()
	rc.Consumer.IsolationLevel = sarama.ReadCommitted
	consumer, err := sarama.NewConsumer(brokers, rc)
	if err != nil {
		return "", err
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(txTopic, 0, sarama.OffsetOldest)
	if err != nil {
		return "", err
	}
	defer pc.Close()
	var read []string
	timeout := time.After(60 * time.Second)
	for len(read) == 0 || read[len(read)-1] != "end" {
		select {
		case msg := <-pc.Messages():
			read = append(read, string(msg.Value))
		case <-timeout:
			return "", fmt.Errorf("waited 60 s for the last committed record (read %v)", read)
		}
	}
	return "committed read back, aborted skipped (read_committed)", r.Check(fmt.Sprint(read) == "[c0 c1 c2 end]", "read_committed read %v", read)
}
