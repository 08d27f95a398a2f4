import { describe, expect, it } from 'vitest';
import { mergeQueueConfig, NATIVE_MAX_MESSAGE_BYTES, resolveQueueConfig } from '../../../src/core/rules/config.js';
import { validateKvKey, validatePartitionName, validateQueueName } from '../../../src/core/rules/names.js';
import { DEFAULT_QUEUE_CONFIG } from '../../../src/core/core.js';

describe('names', () => {
  it('accepts Kafka topic names up to 249 characters and nothing else', () => {
    expect(validateQueueName('a.B_c-9')).toBe('a.B_c-9');
    expect(validateQueueName('x'.repeat(249))).toHaveLength(249);
    for (const bad of ['', '.', '..', 'x'.repeat(250), 'a b', 'a/b', 'é', 7]) {
      expect(() => validateQueueName(bad)).toThrow(expect.objectContaining({ code: 'invalid_name' }));
    }
  });

  it('accepts any printable Unicode partition name, and refuses bidi controls and lone surrogates with a sentence saying which', () => {
    for (const good of ['customer-42', 'Kunde äöü', 'клиент', '客户 7', 'emoji 🚀 ok']) expect(validatePartitionName(good)).toBe(good);
    expect(() => validatePartitionName('invoice\u202Egpj.exe')).toThrow(expect.objectContaining({ code: 'invalid_name', message: expect.stringMatching(/bidirectional text control \(U\+202E\)/) }));
    for (const bidi of ['a\u2066b', 'a\u200Fb', 'a\u061Cb']) expect(() => validatePartitionName(bidi)).toThrow(/bidirectional/);
    for (const lone of ['a\uD800', '\uDC00b', 'x\uD83D y']) {
      expect(() => validatePartitionName(lone)).toThrow(expect.objectContaining({ code: 'invalid_name', message: expect.stringMatching(/lone UTF-16 surrogate/) }));
    }
  });

  it('bounds KV keys by their UTF-8 bytes', () => {
    expect(validateKvKey('é'.repeat(512))).toHaveLength(512);
    expect(() => validateKvKey('é'.repeat(513))).toThrow(/1024 bytes/);
  });
});

describe('queue config', () => {
  it('fills defaults, merges changes, and names the setting that is wrong', () => {
    // A queue made natively has no per-message limit, as Queen's; a Kafka topic keeps max.message.bytes.
    expect(resolveQueueConfig({ dedupWindowSeconds: 0 })).toEqual({ ...DEFAULT_QUEUE_CONFIG, dedupWindowSeconds: 0, maxMessageBytes: NATIVE_MAX_MESSAGE_BYTES });
    expect(resolveQueueConfig({ fixedPartitionCount: true }).maxMessageBytes).toBe(DEFAULT_QUEUE_CONFIG.maxMessageBytes);
    expect(mergeQueueConfig(resolveQueueConfig(), { leaseMs: 5 }).leaseMs).toBe(5);
    expect(() => resolveQueueConfig({ retentionBytes: 1.5 })).toThrow(/retentionBytes/);
    expect(() => resolveQueueConfig({ timestampType: 'Never' as never })).toThrow(/CreateTime, LogAppendTime/);
    expect(() => resolveQueueConfig({ color: 'red' } as never)).toThrow(expect.objectContaining({ code: 'invalid_config', message: expect.stringMatching(/Unknown queue setting "color"/) }));
  });
});
